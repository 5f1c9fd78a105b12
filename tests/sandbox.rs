//! The sandbox under attack: real commands through the bash tool (and the write tool) try
//! to write outside the writable roots, plant git hooks and settings, and reach the
//! network; each attack's exact outcome is asserted and its target checked afterwards.

#![cfg(all(target_os = "linux", feature = "builtins"))]

use support::sandbox as sandbox_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_tools::config::{Config, SandboxSettings};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, GitAccess, KernelSupport, SandboxMode, SandboxPolicy, WithEnv};
use pi_tools::toolbox::Toolbox;
use pi_tools::{Extensions, NoopSink, ToolCall, execute_tool_calls};
use sandbox_support::{Fixture, read, refused, run};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn writing_inside_the_workspace_and_tmpdir_works() {
    let fx = Fixture::repository();
    let env = fx.workspace_write();
    let out = run(
        &env,
        "echo new > made.txt && mkdir -p sub/dir && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" made.txt > /dev/null && echo done",
    )
    .await;
    assert_eq!(out, Ok("done".to_owned()));
    assert_eq!(read(&fx.ws.join("made.txt")), "new\n");
}

#[tokio::test]
async fn an_absolute_path_outside_is_refused() {
    let fx = Fixture::repository();
    let target = fx.target();
    let text = refused(
        &fx.workspace_write(),
        &format!("echo pwned > {}", target.display()),
    )
    .await;
    assert_eq!(
        text,
        format!(
            "bash: line 1: {}: Permission denied\n\nCommand exited with code 1",
            target.display()
        )
    );
    fx.assert_untouched();
}

#[tokio::test]
async fn a_dot_dot_path_and_a_new_file_outside_are_refused() {
    let fx = Fixture::repository();
    let text = refused(
        &fx.workspace_write(),
        "echo pwned > ../outside/target.txt; touch ../outside/new.txt",
    )
    .await;
    assert_eq!(
        text,
        "bash: line 1: ../outside/target.txt: Permission denied\n\
         touch: cannot touch '../outside/new.txt': Permission denied\n\nCommand exited with code 1"
    );
    fx.assert_untouched();
}

#[tokio::test]
async fn a_symlink_inside_pointing_outside_is_refused() {
    let fx = Fixture::repository();
    std::os::unix::fs::symlink(fx.target(), fx.ws.join("link")).expect("symlink");
    let env = fx.workspace_write();
    let text = refused(&env, "echo pwned > link").await;
    assert_eq!(
        text,
        "bash: line 1: link: Permission denied\n\nCommand exited with code 1"
    );
    // A link the command makes itself fares no better.
    let text = refused(
        &env,
        &format!("ln -s {} own && echo pwned > own", fx.target().display()),
    )
    .await;
    assert_eq!(
        text,
        "bash: line 1: own: Permission denied\n\nCommand exited with code 1"
    );
    fx.assert_untouched();
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_cannot_be_made() {
    let fx = Fixture::repository();
    let text = refused(
        &fx.workspace_write(),
        &format!("ln {} hard && echo pwned > hard", fx.target().display()),
    )
    .await;
    assert_eq!(
        text,
        format!(
            "ln: failed to create hard link 'hard' => '{}': Invalid cross-device link\n\nCommand exited with code 1",
            fx.target().display()
        )
    );
    assert!(!fx.ws.join("hard").exists());
    fx.assert_untouched();
}

#[tokio::test]
async fn proc_self_root_is_no_way_out() {
    let fx = Fixture::repository();
    let via = format!("/proc/self/root{}", fx.target().display());
    let text = refused(&fx.workspace_write(), &format!("echo pwned > {via}")).await;
    assert_eq!(
        text,
        format!("bash: line 1: {via}: Permission denied\n\nCommand exited with code 1")
    );
    fx.assert_untouched();
}

/// Waits up to `limit` for `path` to exist.
async fn wait_for(path: &Path, limit: Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    path.exists()
}

/// Live processes (zombies left out) whose command line contains `tag`.
fn alive_with(tag: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(tag)
        })
        .collect()
}

/// Background jobs stay confined after their call; a `setsid` job is killed with the call,
/// even when it leaves the call's process group only after the shell has exited (the
/// common case here: the shell exits at once). Repeated, since that is a race.
#[tokio::test]
async fn a_background_job_setsid_and_nohup_stay_confined_after_the_call() {
    let fx = Fixture::repository();
    let target = fx.target();
    // The environment must outlive the calls: ending it ends their background jobs.
    let env = fx.workspace_write();
    for round in 0..3 {
        // A sleep length no other process uses, to find the setsid job in /proc.
        let tag = format!("0.3{:07}{round}", std::process::id());
        // Each job waits until the call has returned, then attacks and reports what
        // happened in a file inside the workspace.
        let command = format!(
            "(sleep 0.3; mkdir -p made/later; {{ echo pwned > {t}; }} 2> bg{round}.err; echo $? > bg{round}.done) > /dev/null 2>&1 &
             setsid bash -c 'sleep {tag}; {{ echo pwned > {t}; }} 2> setsid{round}.err; echo $? > setsid{round}.done' > /dev/null 2>&1 &
             nohup bash -c 'sleep 0.3; (sleep 0.1; {{ echo pwned > {t}; }} 2> nohup{round}.err; echo $? > nohup{round}.done) &' > /dev/null 2>&1 &
             echo started",
            t = target.display()
        );
        assert_eq!(run(&env, &command).await, Ok("started".to_owned()));
        // The jobs still in the call's process group run on, confined.
        for job in ["bg", "nohup"] {
            let done = fx.ws.join(format!("{job}{round}.done"));
            assert!(
                wait_for(&done, Duration::from_secs(10)).await,
                "{job} did not finish"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(read(&done), "1\n", "{job}'s write did not fail");
            let err = read(&fx.ws.join(format!("{job}{round}.err")));
            assert!(
                err.ends_with(&format!("{}: Permission denied\n", target.display())),
                "{job}: {err}"
            );
        }
        // The setsid job left the group: it is gone, and never got to try.
        assert_eq!(alive_with(&tag), Vec::<i32>::new(), "round {round}");
        assert!(
            !fx.ws.join(format!("setsid{round}.done")).exists(),
            "round {round}: the setsid job outlived its call"
        );
    }
    // The path the background job created mid-command, inside the workspace, is fine.
    assert!(fx.ws.join("made/later").is_dir());
    fx.assert_untouched();
    drop(env);
}

#[tokio::test]
async fn git_hooks_and_config_cannot_be_planted_but_commits_work() {
    let fx = Fixture::repository();
    let hook = fx.ws.join(".git/hooks/pre-commit");
    let config = fx.ws.join(".git/config");
    let config_before = read(&config);
    let env = fx.env(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_git(GitAccess::Commit));
    let text = refused(&env, "echo 'touch /tmp/owned' > .git/hooks/pre-commit").await;
    assert_eq!(
        text,
        "bash: line 1: .git/hooks/pre-commit: Read-only file system\n\nCommand exited with code 1"
    );
    let text = refused(&env, "echo '[core]' >> .git/config").await;
    assert_eq!(
        text,
        "bash: line 1: .git/config: Read-only file system\n\nCommand exited with code 1"
    );
    // Nor by moving things out of the way and replacing them.
    let text = refused(
        &env,
        "mv .git/hooks .git/old-hooks 2>&1; mv .git .git-moved 2>&1; cp .git/config c && mv c .git/config",
    )
    .await;
    assert_eq!(
        text,
        "mv: cannot move '.git/hooks' to '.git/old-hooks': Device or resource busy\n\
         mv: cannot move '.git' to '.git-moved': Device or resource busy\n\
         mv: inter-device move failed: 'c' to '.git/config'; unable to remove target: Device or resource busy\n\nCommand exited with code 1"
    );
    let text = refused(&env, "git config core.hooksPath /tmp").await;
    assert_eq!(
        text,
        "error: could not write config file .git/config: Device or resource busy\n\nCommand exited with code 4"
    );
    assert!(!hook.exists());
    assert_eq!(read(&config), config_before);
    assert!(fx.ws.join(".git/hooks").is_dir());

    let out = run(
        &env,
        "echo more >> file.txt && git -c user.name=t -c user.email=t@example.com commit -qam second && git log --format=%s",
    )
    .await;
    assert_eq!(out, Ok("second\nfirst".to_owned()));
}

/// A protected file below the top of the workspace (`.cargo/config.toml` by default, or a
/// script the configuration names) keeps its place: its directory cannot be renamed away
/// and replaced by one holding a file of the command's own, and the rest of that directory
/// stays writable.
#[tokio::test]
async fn a_protected_files_directory_cannot_be_moved_aside_and_replaced() {
    let fx = Fixture::plain();
    std::fs::create_dir_all(fx.ws.join(".cargo")).expect(".cargo");
    std::fs::write(fx.ws.join(".cargo/config.toml"), "# mine\n").expect("config");
    std::fs::create_dir_all(fx.ws.join("tools/bin")).expect("tools/bin");
    std::fs::write(fx.ws.join("tools/bin/deploy.sh"), "echo deploying\n").expect("script");
    let mut protected: Vec<PathBuf> = pi_tools::env::sandbox::DEFAULT_PROTECTED
        .iter()
        .map(PathBuf::from)
        .collect();
    protected.push(PathBuf::from("tools/bin/deploy.sh"));
    let env = fx.env(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_protected(protected));
    let text = refused(
        &env,
        "mv .cargo .cargo-old 2>&1; mv tools tools-old 2>&1; mv tools/bin tools/old 2>&1; \
         rm -rf .cargo 2>&1; mkdir -p .cargo && echo evil > .cargo/config.toml",
    )
    .await;
    assert_eq!(
        text,
        "mv: cannot move '.cargo' to '.cargo-old': Device or resource busy\n\
         mv: cannot move 'tools' to 'tools-old': Device or resource busy\n\
         mv: cannot move 'tools/bin' to 'tools/old': Device or resource busy\n\
         rm: cannot remove '.cargo/config.toml': Device or resource busy\n\
         bash: line 1: .cargo/config.toml: Read-only file system\n\nCommand exited with code 1"
    );
    assert_eq!(read(&fx.ws.join(".cargo/config.toml")), "# mine\n");
    assert_eq!(read(&fx.ws.join("tools/bin/deploy.sh")), "echo deploying\n");
    assert!(!fx.ws.join(".cargo-old").exists() && !fx.ws.join("tools-old").exists());
    // What else the directories hold is the command's to change.
    let out = run(
        &env,
        "echo x > .cargo/notes && echo y > tools/bin/other.sh && rm .cargo/notes && cat tools/bin/other.sh",
    )
    .await;
    assert_eq!(out, Ok("y".to_owned()));
}

/// A repository whose settings keep its hooks in the work tree (`core.hooksPath`, as husky
/// and lefthook set it) and pull more settings from a file there (`include.path`): neither
/// can be planted, though `.git/config` and `.git/hooks` are not where git looks.
#[tokio::test]
async fn hooks_and_settings_the_repository_names_in_the_work_tree_cannot_be_planted() {
    let fx = Fixture::repository();
    sandbox_support::git(&fx.ws, &["config", "core.hooksPath", ".githooks"]);
    sandbox_support::git(&fx.ws, &["config", "include.path", "../team.gitconfig"]);
    std::fs::create_dir_all(fx.ws.join(".githooks")).expect("hooks");
    std::fs::write(fx.ws.join(".githooks/pre-commit"), "#!/bin/sh\nexit 0\n").expect("hook");
    let env = fx.env(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_git(GitAccess::Commit));
    let text = refused(
        &env,
        "echo 'touch /tmp/owned' >> .githooks/pre-commit 2>&1; echo x > .githooks/post-checkout 2>&1; \
         mv .githooks .githooks-old 2>&1; exit 1",
    )
    .await;
    assert_eq!(
        text,
        "bash: line 1: .githooks/pre-commit: Read-only file system\n\
         bash: line 1: .githooks/post-checkout: Read-only file system\n\
         mv: cannot move '.githooks' to '.githooks-old': Device or resource busy\n\n\
         Command exited with code 1"
    );
    assert_eq!(
        read(&fx.ws.join(".githooks/pre-commit")),
        "#!/bin/sh\nexit 0\n"
    );
    assert!(!fx.ws.join(".githooks/post-checkout").exists());
    // The included file does not exist: one a command makes is taken away after the call.
    let out = run(
        &env,
        "printf '[core]\\n\\tfsmonitor = touch /tmp/owned\\n' > team.gitconfig && echo made",
    )
    .await
    .expect("the command runs");
    assert!(
        out.starts_with("made\n")
            && out.contains(&format!(
                "removed {}",
                fx.ws.join("team.gitconfig").display()
            )),
        "{out}"
    );
    assert!(!fx.ws.join("team.gitconfig").exists());
}

#[tokio::test]
async fn a_worktree_is_protected_through_its_git_file() {
    let fx = Fixture::repository();
    let wt = fx.add_worktree(fx.outside.join("../wt"));
    let wt = std::fs::canonicalize(wt).expect("worktree");
    let env: Arc<dyn ExecutionEnv> = Arc::new(
        LocalEnv::new(&wt)
            .with_sandbox(
                SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_git(GitAccess::Commit),
            )
            .expect("sandbox"),
    );
    let text = refused(
        &env,
        "echo x > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\" 2>&1; echo 'gitdir: /tmp' > .git",
    )
    .await;
    assert_eq!(
        text,
        format!(
            "bash: line 1: {}/.git/hooks/pre-commit: Read-only file system\n\
             bash: line 1: .git: Read-only file system\n\nCommand exited with code 1",
            fx.ws.display()
        )
    );
    let out = run(
        &env,
        "echo wt >> file.txt && git -c user.name=t -c user.email=t@example.com commit -qam in-worktree && git log -1 --format=%s",
    )
    .await;
    assert_eq!(out, Ok("in-worktree".to_owned()));
    assert!(!fx.ws.join(".git/hooks/pre-commit").exists());
}

/// A TCP listener on 127.0.0.1 that counts the connections it accepts.
fn listener() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stream.is_ok() {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    (port, count)
}

/// Connects with bash's own /dev/tcp, then asks for a DNS answer over UDP (python creates
/// a real AF_INET socket; the lookup itself needs no answer to prove the socket exists).
fn network_command(port: u16) -> String {
    format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{port} && echo tcp-connected) 2>&1
         python3 -c '
import socket
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b\"\\0\" * 12, (\"127.0.0.1\", 53))
    print(\"dns-socket-made\")
except OSError as e:
    print(\"dns:\", e)
try:
    socket.getaddrinfo(\"example.invalid\", 80)
except socket.gaierror as e:
    print(\"lookup:\", e.args[0] != 0)
'"
    )
}

#[tokio::test]
async fn network_off_refuses_tcp_and_dns_sockets() {
    let fx = Fixture::repository();
    let (port, accepted) = listener();
    let env = fx.env(SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(false));
    let out = run(&env, &network_command(port)).await;
    assert_eq!(
        out,
        Ok(format!(
            "bash: socket: Operation not permitted\n\
             bash: line 1: /dev/tcp/127.0.0.1/{port}: Operation not permitted\n\
             dns: [Errno 1] Operation not permitted\nlookup: True"
        ))
    );
    // Unix sockets still work (python's socketpair, used by many tools).
    let out = run(
        &env,
        "python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"ok\"); print(b.recv(2).decode())'",
    )
    .await;
    assert_eq!(out, Ok("ok".to_owned()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn network_on_lets_tcp_and_dns_sockets_through() {
    let fx = Fixture::repository();
    let (port, accepted) = listener();
    let out = run(&fx.workspace_write(), &network_command(port)).await;
    assert_eq!(
        out,
        Ok("tcp-connected\ndns-socket-made\nlookup: True".to_owned())
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn read_only_refuses_every_write_including_tmp() {
    let fx = Fixture::repository();
    let env = fx.env(SandboxPolicy::new(SandboxMode::ReadOnly));
    let text = refused(
        &env,
        "cat file.txt; echo x > new.txt; echo x > /tmp/pi-tools-read-only-probe; echo \"TMPDIR=${TMPDIR:-unset}\"; exit 1",
    )
    .await;
    assert_eq!(
        text,
        "in the workspace\n\
         bash: line 1: new.txt: Permission denied\n\
         bash: line 1: /tmp/pi-tools-read-only-probe: Permission denied\n\
         TMPDIR=unset\n\nCommand exited with code 1"
    );
    assert!(!fx.ws.join("new.txt").exists());
    assert!(!Path::new("/tmp/pi-tools-read-only-probe").exists());
    fx.assert_untouched();
}

#[tokio::test]
async fn the_file_tools_answer_as_bash_does() {
    let fx = Fixture::repository();
    let local = LocalEnv::new(&fx.ws)
        .with_sandbox(SandboxPolicy::new(SandboxMode::WorkspaceWrite))
        .expect("sandbox");
    let tmp = local
        .sandbox()
        .and_then(|s| s.tmp_dir())
        .expect("private tmp")
        .to_path_buf();
    let env: Arc<dyn ExecutionEnv> = Arc::new(local);
    let err = env
        .write_file(&fx.target(), b"pwned".to_vec())
        .await
        .expect_err("outside refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{} cannot be written: the sandbox allows writes only in {}, {} ([sandbox] writable_roots). Write inside them instead.",
            fx.target().display(),
            fx.ws.display(),
            tmp.display()
        )
    );
    let hook = fx.ws.join(".git/hooks/pre-commit");
    let err = env
        .write_file(&hook, b"#!/bin/sh".to_vec())
        .await
        .expect_err("hook refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{} cannot be written: {} is read-only in the sandbox ([sandbox] git = \"read-only\"), so that nothing can make a later git command run other code. Leave it as it is; to let commands and the file tools commit, set [sandbox] git = \"commit\" in the configuration.",
            hook.display(),
            fx.ws.join(".git").display()
        )
    );
    let err = env
        .create_dir_all(&fx.ws.join("new/../../outside/dir"))
        .await
        .expect_err("dot-dot refused");
    assert!(
        err.to_string().starts_with(&format!(
            "{}/new/../../outside/dir cannot be written",
            fx.ws.display()
        )),
        "{err}"
    );
    std::os::unix::fs::symlink(fx.target(), fx.ws.join("link")).expect("symlink");
    env.write_file(&fx.ws.join("link"), b"pwned".to_vec())
        .await
        .expect_err("symlink refused");
    env.write_file(&fx.ws.join("fine.txt"), b"fine".to_vec())
        .await
        .expect("inside allowed");
    assert!(!hook.exists());
    assert!(!fx.ws.join("new").exists());
    fx.assert_untouched();
}

#[tokio::test]
async fn a_kernel_without_landlock_fails_closed_with_the_fix() {
    let fx = Fixture::repository();
    let marker = fx.ws.join("ran");
    let env = fx.env(
        SandboxPolicy::new(SandboxMode::WorkspaceWrite)
            .with_network(false)
            .with_kernel_support(KernelSupport::none()),
    );
    let text = refused(&env, "touch ran").await;
    assert_eq!(
        text,
        format!(
            "The sandbox cannot be enforced, so the command was not run: the configuration asks for mode \"workspace-write\" with network off, but {os} has no Landlock (it needs Linux 5.13 or later with Landlock enabled), and {os} has no seccomp filters. Run on a kernel that has it, or loosen the sandbox with mode = \"off\" and network = true in the [sandbox] section of the configuration.",
            os = std::env::consts::OS
        )
    );
    assert!(!marker.exists());
    // Asking for a Landlock ABI this kernel does not have is refused the same way.
    let mut support = KernelSupport::probe();
    support.landlock_abi = 0;
    let env = fx.env(SandboxPolicy::new(SandboxMode::ReadOnly).with_kernel_support(support));
    let text = refused(&env, "touch ran").await;
    assert!(
        text.starts_with("The sandbox cannot be enforced, so the command was not run: the configuration asks for mode \"read-only\" with network on, but Linux has no Landlock"),
        "{text}"
    );
    assert!(!marker.exists());
}

fn registered() -> Vec<Arc<dyn pi_tools::ToolDefinition>> {
    let registry = pi_tools::Registry::from_inventory().expect("the built-in tools register");
    registry.iter().cloned().collect()
}

#[test]
fn the_default_configuration_confines_writes_to_the_workspace_with_the_network_on() {
    let config = Config::embedded(&registered()).expect("the default is valid");
    assert_eq!(config.sandbox, SandboxSettings::default());
    assert_eq!(config.sandbox.mode, SandboxMode::WorkspaceWrite);
    assert!(config.sandbox.network);
    assert_eq!(config.sandbox.writable_roots, None);
    assert_eq!(
        config.sandbox.protected,
        pi_tools::env::sandbox::DEFAULT_PROTECTED
            .iter()
            .map(PathBuf::from)
            .collect::<Vec<_>>()
    );
    assert!(
        config
            .sandbox
            .protected
            .contains(&PathBuf::from("pi-tools.toml"))
    );
}

#[test]
fn sandbox_keys_and_values_are_checked_with_positions() {
    let text = "[sandbox]\nmode = \"strict\"\nnetwrk = false\nnetwork = \"no\"\nprotected = [\"../up\"]\nwritable_roots = \"src\"\n";
    let err = Config::parse(text, "pi-tools.toml", &registered()).expect_err("invalid");
    assert_eq!(
        err.to_string(),
        "pi-tools.toml:2:8: `mode` must be \"off\", \"read-only\" or \"workspace-write\"\n\
         pi-tools.toml:3:1: unknown key `netwrk` in [sandbox]; did you mean `network`? the keys allowed there are: mode, network, writable_roots, protected, default_protected, git\n\
         pi-tools.toml:4:11: `network` must be true or false (without quotes)\n\
         pi-tools.toml:5:13: `protected` entries are relative to each writable root, so `../up` cannot be one; write it like \".git/hooks\"\n\
         pi-tools.toml:6:18: `writable_roots` must be a list of directory paths in quotes, e.g. [\"…\"]"
    );
}

/// A toolbox over the environment `toml` describes for `cwd` (the library's way, which the
/// command line takes too).
fn configured_toolbox(toml: &str, cwd: &Path) -> Toolbox {
    let config = Config::parse(toml, "pi-tools.toml", &registered()).expect("valid");
    let env = config.local_env(cwd).expect("the environment builds");
    Toolbox::new(
        registered(),
        &config,
        Extensions::new().with_env(Arc::new(env)),
    )
}

fn bash_description(toolbox: &Toolbox) -> String {
    toolbox
        .active()
        .iter()
        .find(|t| t.spec().name == "bash")
        .expect("bash is active")
        .spec()
        .description
        .to_owned()
}

#[test]
fn the_bash_description_and_the_guidelines_say_where_writes_go() {
    let fx = Fixture::plain();
    let text = format!(
        "[sandbox]\nnetwork = false\nwritable_roots = [\".\", \"{}\"]\n",
        fx.outside.display()
    );
    let toolbox = configured_toolbox(&text, &fx.ws);
    let note = format!(
        "Commands and file edits may write only in the working directory, {} and in \
         $TMPDIR; writes elsewhere fail with \"Permission denied\"; .git is read-only, so git \
         can read the repository but not commit; network access is off (sockets fail with \
         \"Operation not permitted\").",
        fx.outside.display()
    );
    let description = bash_description(&toolbox);
    assert!(description.ends_with(&format!(". {note}")), "{description}");
    assert!(
        toolbox.prompt().guidelines.contains(&note),
        "{:?}",
        toolbox.prompt().guidelines
    );

    let toolbox = configured_toolbox("[sandbox]\nmode = \"off\"\n", &fx.ws);
    assert!(!toolbox.prompt().to_string().contains("sandbox"));
    let read_only = Config::parse(
        "[sandbox]\nmode = \"read-only\"\n",
        "pi-tools.toml",
        &registered(),
    )
    .expect("valid");
    let expected =
        "Commands run in a read-only sandbox: they cannot change any file; network access is on.";
    assert_eq!(read_only.sandbox.describe(None).as_deref(), Some(expected));
    let env = read_only.local_env(&fx.ws).expect("the environment builds");
    assert_eq!(env.confinement().as_deref(), Some(expected));
}

/// Issue: in library use the prompt promised a sandbox that the tools' environment did not
/// enforce. The sentence now comes from the environment: a toolbox whose tools run
/// unconfined (no environment given: the process's directory, no sandbox) says nothing of
/// one, whatever `[sandbox]` says.
#[test]
fn a_toolbox_without_a_sandboxed_environment_claims_no_sandbox() {
    let config = Config::embedded(&registered()).expect("the default is valid");
    assert_eq!(config.sandbox.mode, SandboxMode::WorkspaceWrite);
    let unconfined = Toolbox::new(registered(), &config, Extensions::new());
    let prompt = unconfined.prompt().to_string();
    assert!(!prompt.contains("Permission denied"), "{prompt}");
    assert!(
        !bash_description(&unconfined).contains("Permission denied"),
        "{}",
        bash_description(&unconfined)
    );
    let fx = Fixture::plain();
    let plain = LocalEnv::new(&fx.ws);
    assert_eq!(plain.confinement(), None);
    let unsandboxed = Toolbox::new(
        registered(),
        &config,
        Extensions::new().with_env(Arc::new(plain)),
    );
    assert!(
        !unsandboxed
            .prompt()
            .to_string()
            .contains("Permission denied")
    );
}

/// The library's path end to end: the default configuration's environment, the toolbox's
/// tool set and runner configuration, a batch through the runner. bash cannot write outside
/// the working directory, and the model was told so.
#[tokio::test]
async fn the_library_path_runs_bash_in_the_configured_sandbox() {
    let fx = Fixture::plain();
    let config = Config::embedded(&registered()).expect("the default is valid");
    let env = config.local_env(&fx.ws).expect("the environment builds");
    let toolbox = Toolbox::new(
        registered(),
        &config,
        Extensions::new().with_env(Arc::new(env)),
    );
    assert!(
        toolbox
            .prompt()
            .to_string()
            .contains("Commands and file edits may write only in the working directory")
    );
    let outside = fx.outside.join("made.txt");
    let calls = [
        ToolCall::new(
            "c1",
            "bash",
            json!({"command": format!("touch {}", outside.display())}),
        ),
        ToolCall::new(
            "c2",
            "bash",
            json!({"command": "touch inside.txt && echo ok"}),
        ),
    ];
    let outcome = execute_tool_calls(
        toolbox.tool_set(),
        &calls,
        &toolbox.runner_config(),
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    let refused = &outcome.messages[0];
    assert!(refused.is_error, "{refused:?}");
    let text = refused.content[0].as_text().expect("text");
    assert!(
        text.contains(&format!(
            "touch: cannot touch '{}': Permission denied",
            outside.display()
        )),
        "{text}"
    );
    assert!(
        !outside.exists(),
        "bash wrote outside the working directory"
    );
    fx.assert_untouched();
    assert!(!outcome.messages[1].is_error, "{:?}", outcome.messages[1]);
    assert!(fx.ws.join("inside.txt").exists());
}
