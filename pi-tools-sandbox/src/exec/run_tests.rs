//! Both ways of starting a command give it the same start: output, exit, working
//! directory, variables, its own process group, `/dev/null` as input, no signal blocked
//! or ignored, only its three descriptors, and the sandbox's namespaces and mounts.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use super::*;
use crate::procs::ProcessTracking;
use crate::{SandboxMode, SandboxPolicy};

thread_local! {
    pub(super) static FORK_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// Runs `command` in `cwd` (by fork when `fork`): the merged output, the stderr alone,
/// and the exit code.
async fn start(
    command: &str,
    cwd: &Path,
    sandbox: Option<&Sandbox>,
    fork: bool,
) -> (String, String, Option<i32>) {
    FORK_ONLY.with(|f| f.set(fork));
    let merged = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let (m, e) = (Arc::clone(&merged), Arc::clone(&errors));
    let tracker = Tracker::new(ProcessTracking::Auto);
    let outcome = run(
        ExecRequest {
            command: command.to_owned(),
            cwd: cwd.to_path_buf(),
            timeout: Some(Duration::from_secs(20)),
            env: vec![("PI_TOOLS_SPAWN_TEST".into(), "set".into())],
        },
        CancellationToken::new(),
        Box::new(move |c| m.lock().expect("not poisoned").extend_from_slice(c)),
        Some(Box::new(move |c| {
            e.lock().expect("not poisoned").extend_from_slice(c)
        })),
        &tracker,
        sandbox,
        None,
    )
    .await
    .expect("the command starts");
    tracker.end_session();
    FORK_ONLY.with(|f| f.set(false));
    let text = |b: &Arc<Mutex<Vec<u8>>>| {
        String::from_utf8_lossy(&b.lock().expect("not poisoned")).into_owned()
    };
    (text(&merged), text(&errors), outcome.exit_code)
}

/// What a command sees of its start. The descriptors and ignored signals it inherits
/// from this process (beyond its own three, and SIGPIPE) are this test's environment's,
/// so they are compared between the two ways, not with a fixed text.
const START: &str = r#"echo "out $PI_TOOLS_SPAWN_TEST"; pwd
[ "$(cut -d' ' -f5 /proc/$$/stat)" = "$$" ] && echo own-group
readlink /proc/self/fd/0
grep SigBlk /proc/self/status
ignored=$(grep SigIgn /proc/self/status | cut -f2)
(( 0x$ignored & 0x1000 )) && echo SIGPIPE ignored || echo SIGPIPE default
echo "ignored $ignored"
ls /proc/self/fd | sort -n | tr '\n' ' '; echo
yes | head -1 >/dev/null; echo "yes ended by signal $((${PIPESTATUS[0]} - 128))"
echo err >&2
exit 3"#;

#[tokio::test]
async fn clone_and_fork_give_a_command_the_same_start() {
    let dir = tempfile::tempdir().expect("a directory");
    let cwd = dir.path().canonicalize().expect("its path");
    let mut seen = Vec::new();
    for fork in [false, true] {
        let (merged, err, code) = start(START, &cwd, None, fork).await;
        assert_eq!(err, "err\n", "fork: {fork}");
        assert_eq!(code, Some(3), "fork: {fork}");
        // Between the two pipes, the order is the order of arrival.
        let out: Vec<&str> = merged.lines().filter(|l| *l != "err").collect();
        assert_eq!(merged.lines().count(), out.len() + 1, "fork: {fork}");
        assert_eq!(
            out[..6],
            [
                "out set",
                &cwd.display().to_string(),
                "own-group",
                "/dev/null",
                "SigBlk:\t0000000000000000",
                "SIGPIPE default",
            ],
            "fork: {fork}"
        );
        assert_eq!(out[8], "yes ended by signal 13", "fork: {fork}");
        assert!(out[7].starts_with("0 1 2 "), "fork: {fork}: {}", out[7]);
        seen.push(out.join("\n"));
    }
    assert_eq!(seen[0], seen[1]);
}

#[tokio::test]
async fn clone_and_fork_confine_a_command_alike() {
    if !crate::KernelSupport::probe().user_namespaces {
        eprintln!("skipped: no user namespaces here");
        return;
    }
    let dir = tempfile::tempdir().expect("a directory");
    let cwd = dir.path().canonicalize().expect("its path");
    std::fs::create_dir_all(cwd.join(".git/hooks")).expect(".git");
    std::fs::write(cwd.join(".git/config"), "[core]\n").expect("config");
    let sandbox = SandboxPolicy::new(SandboxMode::WorkspaceWrite)
        .resolve(&cwd)
        .expect("the sandbox resolves");
    let own_user_ns = std::fs::read_link("/proc/self/ns/user").expect("user ns");
    let command = format!(
        "touch made && echo made; [ \"$(readlink /proc/self/ns/user)\" != '{}' ] && echo own-user-ns; echo x > .git/config; exit 0",
        own_user_ns.display()
    );
    for fork in [false, true] {
        let (out, _, code) = start(&command, &cwd, Some(&sandbox), fork).await;
        assert_eq!(
            out,
            "made\nown-user-ns\nbash: line 1: .git/config: Read-only file system\n"
                .replace("bash:", &format!("{}:", shell().display())),
            "fork: {fork}"
        );
        assert_eq!(code, Some(0), "fork: {fork}");
        std::fs::remove_file(cwd.join("made")).expect("made");
    }
    assert_eq!(
        std::fs::read_to_string(cwd.join(".git/config")).expect("config"),
        "[core]\n"
    );
}
