//! What the SSH environment does when things go wrong, against a real sshd: a connection
//! that drops mid-call, a server killed in the middle of a large write, a refused key, an
//! unknown host key, an unreachable host, a helper that cannot be uploaded.
#![cfg(all(feature = "ssh", feature = "cli"))]

use support::procfs::processes_with;
use support::ssh as ssh_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::env::remote::{SshEnv, SshTarget};
use pi_tools::env::{ExecRequest, ExecutionEnv};
use ssh_support::Sshd;
use tokio_util::sync::CancellationToken;

async fn exec(
    env: &SshEnv,
    command: &str,
) -> std::io::Result<(String, pi_tools::env::ExecOutcome)> {
    exec_notify(env, command, Arc::new(tokio::sync::Notify::new())).await
}

/// Runs `true` in `cwd`, for the error a missing directory gets.
async fn exec_in(
    env: &SshEnv,
    cwd: &std::path::Path,
) -> std::io::Result<pi_tools::env::ExecOutcome> {
    let request = ExecRequest {
        command: "true".into(),
        cwd: cwd.to_path_buf(),
        timeout: Some(Duration::from_secs(20)),
        env: Vec::new(),
    };
    env.exec(request, CancellationToken::new(), Box::new(|_| {}))
        .await
}

/// [`exec`], notifying `first_output` when the first output arrives.
async fn exec_notify(
    env: &SshEnv,
    command: &str,
    first_output: Arc<tokio::sync::Notify>,
) -> std::io::Result<(String, pi_tools::env::ExecOutcome)> {
    let out = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&out);
    let outcome = env
        .exec(
            ExecRequest {
                command: command.into(),
                cwd: env.cwd().to_path_buf(),
                timeout: Some(Duration::from_secs(20)),
                env: Vec::new(),
            },
            CancellationToken::new(),
            Box::new(move |chunk| {
                sink.lock().expect("lock").extend_from_slice(chunk);
                first_output.notify_one();
            }),
        )
        .await?;
    let text = String::from_utf8_lossy(&out.lock().expect("lock")).into_owned();
    Ok((text, outcome))
}

/// Drops every connection of `sshd` while a long command of `env` runs, checks that the call
/// fails at once with an error that names the host and says to retry, and that the next call
/// works.
async fn drop_connections_mid_call(env: &SshEnv, sshd: &Sshd) {
    let running = Arc::new(tokio::sync::Notify::new());
    let killer = async {
        running.notified().await;
        sshd.kill_connections();
        Instant::now()
    };
    let (result, killed_at) = tokio::join!(
        exec_notify(
            env,
            "echo running; sleep 15; echo never",
            Arc::clone(&running)
        ),
        killer
    );
    let err = result.expect_err("the call fails");
    assert!(
        killed_at.elapsed() < Duration::from_secs(5),
        "{:?}",
        killed_at.elapsed()
    );
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionAborted, "{err}");
    assert!(err.to_string().contains("pi-tools-test"), "{err}");
    assert!(err.to_string().contains("Retry the call"), "{err}");

    let (text, outcome) = exec(env, "echo after").await.expect("reconnected");
    assert_eq!(text, "after\n");
    assert_eq!(outcome.exit_code, Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_fails_the_call_clearly_and_the_next_call_reconnects() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env = SshEnv::connect(sshd.target(), dir.path())
        .await
        .expect("connect");
    let (text, _) = exec(&env, "echo before").await.expect("first call");
    assert_eq!(text, "before\n");

    drop_connections_mid_call(&env, &sshd).await;
    let meta = env
        .metadata(&dir.path().join("."))
        .await
        .expect("sftp works again");
    assert!(meta.is_dir);
}

/// An environment whose commands go through the remote pi-tools process.
async fn served_env(sshd: &Sshd, dir: &std::path::Path) -> SshEnv {
    let target = sshd
        .target()
        .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()));
    let env = SshEnv::connect(target, dir).await.expect("connect");
    assert!(env.uses_remote_server().await);
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_fails_a_served_call_clearly_and_the_next_call_starts_again() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env = served_env(&sshd, dir.path()).await;
    let (text, _) = exec(&env, "echo before").await.expect("first call");
    assert_eq!(text, "before\n");
    let first_server = sshd.served_by("env-server");
    assert_eq!(first_server.len(), 1);

    drop_connections_mid_call(&env, &sshd).await;
    let second_server = sshd.served_by("env-server");
    assert_eq!(second_server.len(), 1);
    assert_ne!(first_server, second_server, "a new server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_remote_server_fails_its_call_clearly_and_the_next_call_starts_another() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env = served_env(&sshd, dir.path()).await;
    let server = sshd.served_by("env-server");
    assert_eq!(server.len(), 1);

    let running = Arc::new(tokio::sync::Notify::new());
    let killer = async {
        running.notified().await;
        // SAFETY: plain kill(2) of the server process found under our sshd.
        unsafe { libc::kill(server[0] as i32, libc::SIGKILL) };
    };
    let (result, ()) = tokio::join!(
        exec_notify(&env, "echo running; sleep 7.25", Arc::clone(&running)),
        killer
    );
    let err = result.expect_err("the call fails");
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionAborted, "{err}");
    assert!(err.to_string().contains("pi-tools-test"), "{err}");

    // The killed server could not end its command; the next server ends what it left.
    let (text, _) = exec(&env, "echo again").await.expect("a new server");
    assert_eq!(text, "again\n");
    let now = sshd.served_by("env-server");
    assert_eq!(now.len(), 1);
    assert_ne!(now, server);
    let deadline = Instant::now() + Duration::from_secs(3);
    while !processes_with("sleep 7.25").is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(processes_with("sleep 7.25"), Vec::<u32>::new());
}

/// The remote server killed in the middle of a command, and no call after it: the command
/// does not outlive the server (its guard ends it), though nothing connects again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_does_not_outlive_its_killed_remote_server() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env = served_env(&sshd, dir.path()).await;
    let server = sshd.served_by("env-server");
    assert_eq!(server.len(), 1);
    let job = format!("sleep 7.{}", std::process::id());

    let running = Arc::new(tokio::sync::Notify::new());
    let killer = async {
        running.notified().await;
        // SAFETY: plain kill(2) of the server process found under our sshd.
        unsafe { libc::kill(server[0] as i32, libc::SIGKILL) };
    };
    let command = format!("echo running; {job}");
    let (result, ()) = tokio::join!(exec_notify(&env, &command, Arc::clone(&running)), killer);
    result.expect_err("the call fails");
    drop(env);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&job).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(processes_with(&job), Vec::<u32>::new());
}

/// Without the remote server, a background job of a command run in an SSH session of its
/// own: the connection is lost before the session could end it, and it ends anyway (the
/// remote watchdog kills what it was told of once its input ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_connection_leaves_no_background_job_without_the_remote_server() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env = SshEnv::connect(sshd.target(), dir.path())
        .await
        .expect("connect");
    assert!(!env.uses_remote_server().await);
    let seconds = format!("304.{}", std::process::id());
    let job = format!("sleep {seconds}");
    let (text, _) = exec(
        &env,
        &format!("t={seconds}; sleep $t >/dev/null 2>&1 & echo started"),
    )
    .await
    .expect("the command runs");
    assert_eq!(text, "started\n");
    assert_eq!(
        support::procfs::settle(1, || processes_with(&job).len()).await,
        1
    );
    // The network drops: the connection's sshd processes die, the session's own
    // processes (its shells) do not.
    for pid in ssh_support::descendants(sshd.pid().expect("sshd")) {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == "sshd" {
            // SAFETY: kill(2) of a connection process of our own sshd.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
    assert_eq!(
        support::procfs::settle(0, || processes_with(&job).len()).await,
        0,
        "the background job outlived the connection"
    );
    drop(env);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_during_a_large_write_leaves_the_old_or_the_new_file() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("big.bin");
    let old = vec![b'o'; 4 << 20];
    std::fs::write(&target, &old).expect("old content");
    let env = SshEnv::connect(sshd.target(), dir.path())
        .await
        .expect("connect");
    let new = vec![b'n'; 48 << 20];
    let killer = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        sshd.kill_connections();
    };
    let (result, ()) = tokio::join!(env.write_file(&target, new.clone()), killer);
    let now = std::fs::read(&target).expect("target still there");
    match result {
        Ok(()) => assert!(
            now == new,
            "the write reported success but the file is not the new content"
        ),
        Err(err) => {
            assert!(
                now == old,
                "a failed write left a torn file of {} bytes",
                now.len()
            );
            assert!(err.to_string().contains("pi-tools-test"), "{err}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_failures_name_the_host_and_the_setting_to_fix() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");

    // A key the server does not know.
    let other_key = sshd.dir().join("other_key");
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other_key)
        .status()
        .expect("ssh-keygen");
    assert!(status.success());
    let config = std::fs::read_to_string(sshd.config_file()).expect("config");
    let wrong_key = sshd.dir().join("wrong_key_config");
    std::fs::write(
        &wrong_key,
        config.replace(
            &format!("IdentityFile {}", sshd.dir().join("client_key").display()),
            &format!("IdentityFile {}", other_key.display()),
        ),
    )
    .expect("write");
    let mut target = sshd.target();
    target.config_file = Some(wrong_key);
    let err = SshEnv::connect(target, dir.path())
        .await
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.starts_with("authentication to pi-tools-test failed"),
        "{text}"
    );
    assert!(text.contains("identity_file"), "{text}");

    // A host key that is not in known_hosts.
    let empty_known = sshd.dir().join("empty_known_hosts");
    std::fs::write(&empty_known, "").expect("write");
    let unknown_host = sshd.dir().join("unknown_host_config");
    std::fs::write(
        &unknown_host,
        config.replace(
            &format!(
                "UserKnownHostsFile {}",
                sshd.dir().join("known_hosts").display()
            ),
            &format!("UserKnownHostsFile {}", empty_known.display()),
        ),
    )
    .expect("write");
    let mut target = sshd.target();
    target.config_file = Some(unknown_host);
    let err = SshEnv::connect(target, dir.path())
        .await
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.starts_with("the host key of pi-tools-test is not in known_hosts"),
        "{text}"
    );
    assert!(text.contains("known_hosts"), "{text}");

    // Nobody listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut target = SshTarget::new("127.0.0.1");
    target.port = Some(port);
    target.config_file = Some(sshd.config_file().to_path_buf());
    target.connect_timeout = Duration::from_secs(3);
    let started = Instant::now();
    let err = SshEnv::connect(target, dir.path())
        .await
        .expect_err("unreachable");
    assert!(started.elapsed() < Duration::from_secs(6));
    let text = err.to_string();
    assert!(text.starts_with("127.0.0.1 could not be reached"), "{text}");
    assert!(text.contains("port"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_directory_the_remote_lacks_is_a_clear_error_with_and_without_the_server() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let gone = dir.path().join("gone");
    let plain = SshEnv::connect(sshd.target(), dir.path())
        .await
        .expect("connect");
    let served = served_env(&sshd, dir.path()).await;
    let plain_says = format!(
        "the working directory {} does not exist or cannot be read on {}",
        gone.display(),
        sshd.target().host()
    );
    // The remote pi-tools process says what its own system said.
    let served_says = format!(
        "the working directory {} does not exist or cannot be read (No such file or directory (os error 2))",
        gone.display()
    );
    for (env, says) in [(&plain, plain_says), (&served, served_says)] {
        let err = exec_in(env, &gone).await.expect_err("no such directory");
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
        assert_eq!(err.to_string(), says);
        let outcome = exec_in(env, dir.path()).await.expect("the next call works");
        assert_eq!(outcome.exit_code, Some(0));
    }
}

/// A remote cache directory the helper cannot be written to (here `~/.cache/pi-tools` is a
/// file): the upload is tried once, when the environment starts its remote process, and the
/// commands run each in an SSH session of their own, not after a failed upload each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helper_that_cannot_be_uploaded_is_tried_once_and_commands_run_without_it() {
    let home = tempfile::tempdir().expect("remote home");
    std::fs::create_dir(home.path().join(".cache")).expect(".cache");
    std::fs::write(home.path().join(".cache/pi-tools"), "not a directory").expect("file");
    // Each start of the remote process runs the login shell's `.profile`; commands without
    // it run in plain SSH sessions, which do not.
    std::fs::write(
        home.path().join(".profile"),
        "echo run >> \"$HOME/starts\"\n",
    )
    .expect("profile");
    let set_home = format!("SetEnv HOME={}", home.path().display());
    // The SFTP home (where the helper goes) is the same directory.
    let sftp = format!(
        "Subsystem sftp {} -d {}",
        ssh_support::sftp_server(),
        home.path().display()
    );
    let Some(sshd) = Sshd::start_with(&[&set_home, &sftp]) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let target = sshd
        .target()
        .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()));
    let env = SshEnv::connect(target, dir.path()).await.expect("connect");
    for n in 0..3 {
        let (text, outcome) = exec(&env, &format!("echo {n}")).await.expect("runs");
        assert_eq!((text, outcome.exit_code), (format!("{n}\n"), Some(0)));
    }
    assert!(!env.uses_remote_server().await);
    let starts = std::fs::read_to_string(home.path().join("starts")).unwrap_or_default();
    assert_eq!(starts, "run\n", "one start, one upload tried");
    assert!(sshd.served_by("env-server").is_empty());
}
