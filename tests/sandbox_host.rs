//! What the sandbox leaves the host (issue 22). It holds for root too (findings 1 and 2):
//! in a workspace without a repository, with its own user namespace or with capabilities
//! dropped, a command cannot make device nodes, change the network or the host name,
//! signal a process outside or reach an abstract socket outside; each attack's outcome is
//! asserted and its target checked on the host afterwards. And nothing is left behind in
//! the temporary directory, even by killed runs (finding 5).

#![cfg(all(target_os = "linux", feature = "cli"))]

use support::sandbox as sandbox_support;

use std::os::linux::net::SocketAddrExt;
use std::time::Duration;

use pi_tools::env::{KernelSupport, SandboxMode, SandboxPolicy};
use sandbox_support::{Fixture, refused, root_or_skip, run};

/// The default sandbox, and the same where no user namespace can be made (capabilities
/// dropped instead).
fn both_isolations() -> [(&'static str, SandboxPolicy); 2] {
    let without_namespaces = KernelSupport {
        user_namespaces: false,
        ..KernelSupport::probe()
    };
    [
        (
            "own user namespace",
            SandboxPolicy::new(SandboxMode::WorkspaceWrite),
        ),
        (
            "capabilities dropped",
            SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_kernel_support(without_namespaces),
        ),
    ]
}

#[tokio::test]
async fn root_cannot_make_device_nodes() {
    if !root_or_skip("root_cannot_make_device_nodes") {
        return;
    }
    for (isolation, policy) in both_isolations() {
        let fx = Fixture::plain();
        let env = fx.env(policy);
        let text = refused(&env, "mknod blk b 7 0; mknod kmsg c 1 11").await;
        assert_eq!(
            text,
            "mknod: blk: Permission denied\nmknod: kmsg: Permission denied\n\nCommand exited with code 1",
            "{isolation}"
        );
        assert!(!fx.ws.join("blk").exists(), "{isolation}");
        assert!(!fx.ws.join("kmsg").exists(), "{isolation}");
        // FIFOs and sockets inside the workspace are still fine.
        let out = run(&env, "mkfifo pipe && test -p pipe && echo fifo").await;
        assert_eq!(out, Ok("fifo".to_owned()), "{isolation}");
    }
}

/// The addresses of `lo` on the host.
fn loopback_addresses() -> String {
    let out = std::process::Command::new("ip")
        .args(["-o", "addr", "show", "dev", "lo"])
        .output()
        .expect("ip runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("hostname")
        .trim()
        .to_owned()
}

#[tokio::test]
async fn root_cannot_change_the_hosts_network_or_name() {
    if !root_or_skip("root_cannot_change_the_hosts_network_or_name") {
        return;
    }
    let name = host_name();
    for (isolation, policy) in both_isolations() {
        let fx = Fixture::plain();
        let env = fx.env(policy);
        let result = run(
            &env,
            "ip addr add 127.0.0.99/32 dev lo; hostname pi-tools-sandboxed; exit 1",
        )
        .await;
        // Put the host back before asserting, should the attack have worked.
        let changed_address = loopback_addresses().contains("127.0.0.99");
        if changed_address {
            let _ = std::process::Command::new("ip")
                .args(["addr", "del", "127.0.0.99/32", "dev", "lo"])
                .status();
        }
        let changed_name = host_name() != name;
        if changed_name {
            let _ = std::fs::write("/proc/sys/kernel/hostname", &name);
        }
        assert!(!changed_address, "{isolation}: lo got the address");
        assert!(!changed_name, "{isolation}: the host name changed");
        assert_eq!(
            result,
            Err("RTNETLINK answers: Operation not permitted\n\
                 hostname: you must be root to change the host name\n\n\
                 Command exited with code 1"
                .to_owned()),
            "{isolation}"
        );
    }
}

/// Whether this kernel scopes signals and abstract sockets; when not, says on stderr that
/// `test` is skipped.
fn scoping_or_skip(test: &str) -> bool {
    let abi = KernelSupport::probe().landlock_abi;
    let scoped = abi >= KernelSupport::SCOPING_ABI;
    if !scoped {
        eprintln!(
            "{test}: skipped: Landlock ABI {abi} cannot scope signals and abstract sockets (needs {})",
            KernelSupport::SCOPING_ABI
        );
    }
    scoped
}

#[tokio::test]
async fn a_process_outside_cannot_be_signalled_but_the_commands_own_can() {
    if !scoping_or_skip("a_process_outside_cannot_be_signalled_but_the_commands_own_can") {
        return;
    }
    for (isolation, policy) in both_isolations() {
        let fx = Fixture::plain();
        let env = fx.env(policy);
        let mut outside = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = outside.id();
        let text = refused(&env, &format!("kill -9 {pid}")).await;
        assert_eq!(
            text,
            format!(
                "bash: line 1: kill: ({pid}) - Operation not permitted\n\nCommand exited with code 1"
            ),
            "{isolation}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            outside.try_wait().expect("wait").is_none(),
            "{isolation}: the process outside was killed"
        );
        let _ = outside.kill();
        let _ = outside.wait();
        let out = run(&env, "sleep 30 & kill $!; wait $!; echo $?").await;
        assert_eq!(out, Ok("143".to_owned()), "{isolation}");
    }
}

#[tokio::test]
async fn an_abstract_socket_outside_cannot_be_reached() {
    if !scoping_or_skip("an_abstract_socket_outside_cannot_be_reached") {
        return;
    }
    let name = format!("pi-tools-test-{}", std::process::id());
    let address =
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("address");
    let listener = std::os::unix::net::UnixListener::bind_addr(&address).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let fx = Fixture::plain();
    let env = fx.workspace_write();
    let out = run(
        &env,
        &format!(
            "python3 -c '
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(\"\\0{name}\")
    print(\"connected\")
except OSError as e:
    print(\"outside:\", e)
a = socket.socket(socket.AF_UNIX); a.bind(\"\\0{name}-inside\"); a.listen()
b = socket.socket(socket.AF_UNIX); b.connect(\"\\0{name}-inside\"); print(\"inside: connected\")
'"
        ),
    )
    .await;
    assert_eq!(
        out,
        Ok("outside: [Errno 1] Operation not permitted\ninside: connected".to_owned())
    );
    assert!(listener.accept().is_err(), "a connection came through");
}

/// The private temporary directories in `tmp`.
fn private_temps(tmp: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .expect("tmp")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pi-tools-sandbox-"))
        .collect();
    names.sort();
    names
}

/// Fifty servers killed with SIGKILL cannot remove their private temporary directories; the
/// next server removes them at its start, and its own at its end (issue 22, finding 5).
#[test]
fn private_temporary_directories_of_killed_runs_are_removed_by_the_next() {
    let fx = Fixture::plain();
    let tmp = fx.outside.join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let server = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
        command
            .args(["mcp", "--cwd"])
            .arg(&fx.ws)
            .env("TMPDIR", &tmp)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    };
    for run in 0..50 {
        let mut child = server().spawn().expect("pi-tools mcp");
        let own = format!("pi-tools-sandbox-{}-", child.id());
        let start = std::time::Instant::now();
        while !private_temps(&tmp).iter().any(|n| n.starts_with(&own)) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "run {run} made no private directory"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
    }
    // A server whose input ends at once: it starts, sweeps what the killed ones left (each
    // also swept before it), and removes its own at its end.
    let status = server()
        .stdin(std::process::Stdio::null())
        .status()
        .expect("pi-tools mcp");
    assert!(status.success());
    assert_eq!(private_temps(&tmp), Vec::<String>::new());
}

/// The ids of the System V IPC objects of `kind` (`shm`, `msg`, `sem`) in this process's
/// IPC namespace.
fn sysv_ids(kind: &str) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/sysvipc/{kind}"))
        .expect("sysvipc")
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
        .collect()
}

/// Makes a System V IPC object on the host with `ipcmk` (`-M 4096`, `-Q`, `-S 1`); its id.
fn ipcmk(args: &[&str]) -> String {
    let out = std::process::Command::new("ipcmk")
        .args(args)
        .output()
        .expect("ipcmk runs");
    assert!(out.status.success(), "ipcmk {args:?} failed");
    let text = String::from_utf8_lossy(&out.stdout);
    text.rsplit(' ').next().expect("an id").trim().to_owned()
}

fn ipcrm(flag: &str, id: &str) {
    let _ = std::process::Command::new("ipcrm")
        .args([flag, id])
        .status();
}

/// Issue 38, finding 3: a command has an IPC namespace of its own (System V shared memory,
/// message queues, semaphores) and a `/dev/shm` of its session, so the host's are out of
/// sight and reach, and what it makes is not the host's.
#[tokio::test]
async fn host_ipc_is_out_of_reach_and_the_commands_own_does_not_outlive_it() {
    let shm = ipcmk(&["-M", "4096"]);
    let msg = ipcmk(&["-Q"]);
    let sem = ipcmk(&["-S", "1"]);
    let posix = format!("/dev/shm/pi-tools-test-{}", std::process::id());
    std::fs::write(&posix, "host\n").expect("a host POSIX segment");
    let host = || (sysv_ids("shm"), sysv_ids("msg"), sysv_ids("sem"));
    let before = host();
    let namespaces = KernelSupport::probe().user_namespaces;
    if !namespaces {
        eprintln!("host_ipc (own user namespace): skipped: no user namespace can be made here");
    }
    for (isolation, policy) in both_isolations() {
        let can = match isolation {
            "capabilities dropped" => root_or_skip("host_ipc (capabilities dropped)"),
            _ => namespaces,
        };
        if !can {
            continue;
        }
        let fx = Fixture::plain();
        let env = fx.env(policy);
        let listing = "for k in shm msg sem; do tail -n +2 /proc/sysvipc/$k | wc -l; done";
        let out = run(
            &env,
            &format!(
                "{listing}; ipcrm -m {shm}; ipcrm -q {msg}; ipcrm -s {sem}; ipcmk -M 4096 >/dev/null && {listing}"
            ),
        )
        .await;
        assert_eq!(
            out,
            Ok(format!(
                "0\n0\n0\nipcrm: invalid id ({shm})\nipcrm: invalid id ({msg})\nipcrm: invalid id ({sem})\n1\n0\n0"
            )),
            "{isolation}"
        );
        // What the call made is gone with it.
        assert_eq!(
            run(&env, listing).await,
            Ok("0\n0\n0".to_owned()),
            "{isolation}"
        );
        assert_eq!(
            host(),
            before,
            "{isolation}: the host's IPC objects changed"
        );
    }
    ipcrm("-m", &shm);
    ipcrm("-q", &msg);
    ipcrm("-s", &sem);
    // POSIX shared memory: the host's /dev/shm is out of sight; the command's own is the
    // session's, and emptied when the session ends (a mount namespace is needed for that).
    if !namespaces {
        let _ = std::fs::remove_file(&posix);
        return;
    }
    let fx = Fixture::plain();
    let env = fx.workspace_write();
    let out = run(
        &env,
        &format!(
            "cat {posix}; ls -A /dev/shm | wc -l; echo inside > /dev/shm/seg && cat /dev/shm/seg"
        ),
    )
    .await;
    assert_eq!(
        out,
        Ok(format!(
            "cat: {posix}: No such file or directory\n0\ninside"
        ))
    );
    assert_eq!(
        sandbox_support::read(std::path::Path::new(&posix)),
        "host\n"
    );
    assert!(!std::path::Path::new("/dev/shm/seg").exists());
    env.end_session();
    assert_eq!(
        run(&env, "ls -A /dev/shm | wc -l").await,
        Ok("0".to_owned())
    );
    let _ = std::fs::remove_file(&posix);
}

/// Issue 38, finding 2: nothing made in the sandbox carries set-user-ID, set-group-ID or
/// file capabilities, whichever call tries (checked from outside).
#[tokio::test]
async fn no_set_id_file_or_file_capability_can_be_made() {
    for (isolation, policy) in both_isolations() {
        let fx = Fixture::plain();
        // A set-user-ID file the user has in the workspace, for `cp -p` to copy.
        let theirs = fx.ws.join("s");
        std::fs::write(&theirs, "").expect("s");
        std::fs::set_permissions(
            &theirs,
            std::os::unix::fs::PermissionsExt::from_mode(0o4755),
        )
        .expect("chmod");
        let env = fx.env(policy);
        let text = run(
            &env,
            "export LC_ALL=C; touch f g && chmod 755 f; chmod u+s f; chmod g+s f; chmod 6755 f; cp -p s c; \
             install -m 4755 f i; python3 -c '
import os
# VFS_CAP_REVISION_2 with the effective flag: cap_dac_override and cap_setuid permitted.
cap = bytes([1, 0, 0, 2, 0x82, 0, 0, 0] + [0] * 12)
for name, call in [
    (\"open\", lambda: os.open(\"o\", os.O_CREAT | os.O_WRONLY, 0o4755)),
    (\"mknod\", lambda: os.mknod(\"n\", 0o104755)),
    (\"capability\", lambda: os.setxattr(\"g\", \"security.capability\", cap)),
    (\"user xattr\", lambda: os.setxattr(\"g\", \"user.x\", b\"1\")),
]:
    try:
        call()
        print(name, \"made\")
    except OSError as e:
        print(name, e.strerror)
'; stat -c '%n %a' f g c i",
        )
        .await;
        assert_eq!(
            text.as_deref(),
            Ok(
                "chmod: changing permissions of 'f': Operation not permitted\n\
             chmod: changing permissions of 'f': Operation not permitted\n\
             chmod: changing permissions of 'f': Operation not permitted\n\
             cp: preserving permissions for 'c': Operation not permitted\n\
             install: cannot change permissions of 'i': Operation not permitted\n\
             open Operation not permitted\n\
             mknod Operation not permitted\n\
             capability Operation not supported\n\
             user xattr Operation not supported\n\
             f 755\ng 644\nc 700\ni 600"
            ),
            "{isolation}"
        );
        for name in ["f", "g", "c", "i", "o", "n"] {
            let path = fx.ws.join(name);
            if let Ok(meta) = std::fs::symlink_metadata(&path) {
                use std::os::unix::fs::MetadataExt;
                assert_eq!(meta.mode() & 0o6000, 0, "{isolation}: {name} is set-ID");
            }
            let mut value = [0u8; 64];
            assert!(
                rustix::fs::getxattr(&path, "security.capability", &mut value).is_err(),
                "{isolation}: {name} has file capabilities"
            );
        }
    }
}
