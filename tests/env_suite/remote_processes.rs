//! Remote processes: a timeout kills the whole remote group, ending a session kills its
//! background jobs and no others, and the remote shell's startup files run once per environment.

use super::*;
use support::procfs::{processes_with, settle};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_timeout_kills_the_whole_remote_group() {
    let Some(sshd) = Sshd::start() else { return };
    for (served, marker) in [(true, "37.125"), (false, "37.25")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = SshEnv::connect(target_of(&sshd, served), dir.path())
            .await
            .expect("connect");
        assert_eq!(env.uses_remote_server().await, served);
        let env: Arc<dyn ExecutionEnv> = Arc::new(env);
        let started = std::time::Instant::now();
        let out = run(
            Arc::clone(&env),
            &[(
                "bash",
                json!({"command": format!("sleep {marker} & echo started; sleep {marker}5"), "timeout": 1}),
            )],
        )
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "took {:?}",
            started.elapsed()
        );
        assert!(out.starts_with("[error] bash: started"), "{out}");
        assert!(out.contains("timed out"), "{out}");
        // The remote side (sshd's children, here on this machine) has no process left.
        assert_eq!(
            settle(0, || processes_with(&format!("sleep {marker}")).len()).await,
            0,
            "served: {served}"
        );
        drop(env);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_a_session_kills_its_remote_background_jobs_and_no_others() {
    for served in [true, false] {
        ending_a_session(served).await;
    }
}

async fn ending_a_session(served: bool) {
    // The sleeps get their durations from variables, so only the jobs' own command lines
    // (not the shells' that started them) say `sleep 300.125`.
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Arc::new(
        SshEnv::connect(target_of(&sshd, served), dir.path())
            .await
            .expect("connect"),
    );
    assert_eq!(first.uses_remote_server().await, served);
    let second = Arc::new(first.session());
    let out = run(
        Arc::clone(&first) as Arc<dyn ExecutionEnv>,
        &[(
            "bash",
            json!({"command": "t=300.125; sleep $t >/dev/null 2>&1 & echo started"}),
        )],
    )
    .await;
    assert_eq!(out, "[ok] bash: started\n");
    run(
        Arc::clone(&second) as Arc<dyn ExecutionEnv>,
        &[(
            "bash",
            json!({"command": "t=300.375; sleep $t >/dev/null 2>&1 &"}),
        )],
    )
    .await;
    assert_eq!(
        settle(1, || processes_with("sleep 300.125").len()).await,
        1,
        "the job outlives its call"
    );
    assert_eq!(settle(1, || processes_with("sleep 300.375").len()).await, 1);

    first.end_session();
    assert_eq!(
        settle(0, || processes_with("sleep 300.125").len()).await,
        0,
        "gone once end_session has returned"
    );
    assert_eq!(
        processes_with("sleep 300.375").len(),
        1,
        "the other session's job lives on"
    );
    // The connection is still good for the next call.
    let out = run(
        Arc::clone(&first) as Arc<dyn ExecutionEnv>,
        &[("bash", json!({"command": "echo again"}))],
    )
    .await;
    assert_eq!(out, "[ok] bash: again\n");

    drop(second);
    assert_eq!(
        settle(0, || processes_with("sleep 300.375").len()).await,
        0,
        "dropping a session ends its jobs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_shell_startup_files_run_once_per_environment() {
    // sshd gives the sessions a HOME whose .bashrc (which bash reads for every SSH command,
    // and which the .profile of a login shell sources, as Debian's does) counts its runs,
    // prints noise and sets a variable; SFTP runs inside sshd, without a shell, so only the
    // commands' sessions count.
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        home.path().join(".bashrc"),
        "echo run >> \"$HOME/startups\"\necho noise from the startup file\n\
         export FROM_STARTUP=\"set once\"\n",
    )
    .expect("bashrc");
    std::fs::write(
        home.path().join(".profile"),
        "echo run >> \"$HOME/profiles\"\n. \"$HOME/.bashrc\"\n",
    )
    .expect("profile");
    let profiles = || {
        std::fs::read_to_string(home.path().join("profiles"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let set_home = format!("SetEnv HOME={}", home.path().display());
    let Some(sshd) = Sshd::start_with(&[&set_home, &internal_sftp()]) else {
        return;
    };
    let startups = || {
        std::fs::read_to_string(home.path().join("startups"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f.txt"), "hit\n").expect("write");
    let target = sshd
        .target()
        .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()));
    let env = Arc::new(SshEnv::connect(target, dir.path()).await.expect("connect"));
    let calls: Vec<(&str, Value)> = (0..5)
        .map(|i| {
            (
                "bash",
                json!({"command": format!("echo {i} \"$FROM_STARTUP\" ${{SSH_CLIENT:-no SSH_CLIENT}}")}),
            )
        })
        .chain([
            ("grep", json!({"pattern": "hit"})),
            ("find", json!({"pattern": "*.txt"})),
            ("bash", json!({"command": "sleep 5", "timeout": 1})),
            ("bash", json!({"command": "echo last"})),
        ])
        .collect();
    let out = run(Arc::clone(&env) as Arc<dyn ExecutionEnv>, &calls).await;
    assert_eq!(
        out,
        "[ok] bash: 0 set once no SSH_CLIENT\n[ok] bash: 1 set once no SSH_CLIENT\n\
         [ok] bash: 2 set once no SSH_CLIENT\n[ok] bash: 3 set once no SSH_CLIENT\n\
         [ok] bash: 4 set once no SSH_CLIENT\n[ok] grep: f.txt:1: hit\n[ok] find: f.txt\n\
         [error] bash: (no output)\n\nCommand timed out after 1 second\n[ok] bash: last\n"
    );
    assert!(env.uses_remote_server().await);
    assert_eq!(startups(), 1, "the startup file ran once for nine calls");
    assert_eq!(profiles(), 1, "the login shell's, which sourced it, too");
    // The environment was captured when the server started: a later change to the startup
    // file applies to the next environment, not to this one's commands.
    let mut rc = std::fs::OpenOptions::new()
        .append(true)
        .open(home.path().join(".bashrc"))
        .expect("bashrc");
    std::io::Write::write_all(&mut rc, b"export LATER=yes\n").expect("append");
    let out = run(
        Arc::clone(&env) as Arc<dyn ExecutionEnv>,
        &[("bash", json!({"command": "echo ${LATER:-unset}"}))],
    )
    .await;
    assert_eq!(out, "[ok] bash: unset\n");
    assert_eq!((startups(), profiles()), (1, 1));
    assert_eq!(sshd.served_by("env-server").len(), 1);

    // The environment's end ends the remote process.
    drop(env);
    assert_eq!(settle(0, || sshd.served_by("env-server").len()).await, 0);

    // Without pi-tools on the remote side, every command is a session of its own, and the
    // startup file runs for each.
    let plain = Arc::new(
        SshEnv::connect(sshd.target(), dir.path())
            .await
            .expect("connect"),
    );
    let before = startups();
    let out = run(
        Arc::clone(&plain) as Arc<dyn ExecutionEnv>,
        &[
            ("bash", json!({"command": "echo \"$FROM_STARTUP\" $LATER"})),
            ("bash", json!({"command": "echo \"$FROM_STARTUP\" $LATER"})),
        ],
    )
    .await;
    assert_eq!(out, "[ok] bash: set once yes\n[ok] bash: set once yes\n");
    assert!(!plain.uses_remote_server().await);
    // One session finding no pi-tools there (a login shell, whose .profile sources
    // .bashrc), then one per command and one for the connection's watchdog (an SSH
    // command's shell, which reads .bashrc itself; it starts beside the first command, so
    // it may come a moment later).
    assert_eq!(settle(4, || startups() - before).await, 4);
    assert_eq!(profiles(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_get_a_login_shells_environment_unless_configured_otherwise() {
    // A HOME whose .profile (read by a login shell, not for an SSH command) prints noise,
    // exports a variable and puts a directory on PATH, and whose .bashrc (read for an SSH
    // command, not by a login shell: this .profile does not source it) exports another;
    // each counts its runs.
    let home = tempfile::tempdir().expect("tempdir");
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    std::fs::write(bin.join("from-profile-path"), "#!/bin/sh\necho on PATH\n").expect("tool");
    std::fs::set_permissions(
        bin.join("from-profile-path"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::write(
        home.path().join(".profile"),
        "echo run >> \"$HOME/profiles\"\necho noise from .profile\n\
         export FROM_PROFILE=login\nPATH=\"$HOME/bin:$PATH\"\n",
    )
    .expect("profile");
    std::fs::write(
        home.path().join(".bashrc"),
        "echo run >> \"$HOME/bashrcs\"\nexport FROM_BASHRC=rc\n",
    )
    .expect("bashrc");
    let set_home = format!("SetEnv HOME={}", home.path().display());
    let Some(sshd) = Sshd::start_with(&[&set_home, &internal_sftp()]) else {
        return;
    };
    let count = |name: &str| {
        std::fs::read_to_string(home.path().join(name))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let call = (
        "bash",
        json!({"command": "echo ${FROM_PROFILE:-no profile} ${FROM_BASHRC:-no bashrc}; \
                           from-profile-path 2>/dev/null || echo not on PATH"}),
    );
    for (login_shell, seen, runs) in [
        (true, "login no bashrc\non PATH", (1, 0)),
        (false, "no profile rc\nnot on PATH", (0, 1)),
    ] {
        for name in ["profiles", "bashrcs"] {
            let _ = std::fs::remove_file(home.path().join(name));
        }
        let mut target = sshd
            .target()
            .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()));
        assert!(target.login_shell, "a login shell by default");
        target.login_shell = login_shell;
        let env = Arc::new(SshEnv::connect(target, dir.path()).await.expect("connect"));
        let out = run(
            Arc::clone(&env) as Arc<dyn ExecutionEnv>,
            &[call.clone(), call.clone(), call.clone(), call.clone()],
        )
        .await;
        assert_eq!(
            out,
            format!("[ok] bash: {seen}\n").repeat(4),
            "login_shell = {login_shell}"
        );
        assert!(env.uses_remote_server().await);
        assert_eq!(
            (count("profiles"), count("bashrcs")),
            runs,
            "login_shell = {login_shell}: the startup files ran once for four calls"
        );
        drop(env);
        assert_eq!(settle(0, || sshd.served_by("env-server").len()).await, 0);
    }
}

/// The SFTP line of the tests with startup files of their own: sshd's built-in server, as an
/// SFTP server program would be started by the user's shell, whose `~/.bashrc` here echoes
/// into the SFTP stream. Its home is the test servers' shared one, so the uploaded helper
/// goes to the cache the other tests use, never to the real home.
fn internal_sftp() -> String {
    format!(
        "Subsystem sftp internal-sftp -d {}",
        ssh_support::test_home().display()
    )
}
