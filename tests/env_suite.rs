//! One behaviour suite for the built-in tools, run against every execution environment:
//! the local machine ([`LocalEnv`]) and a real OpenSSH server on 127.0.0.1 ([`SshEnv`]).
//! Each case sets up the same files in a fresh directory for each environment, runs the
//! same tool calls through the runner, and the transcripts (result texts, error flags and
//! the files left behind) must be identical, and equal to what the case expects.
#![cfg(all(feature = "ssh", feature = "cli"))]

use support::ssh as ssh_support;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_tools::env::{ExecutionEnv, LocalEnv, SshEnv};
use pi_tools::{
    Extensions, NoopSink, Registry, RunnerConfig, ToolCall, ToolSet, execute_tool_calls, wrap,
};
use serde_json::{Value, json};
use ssh_support::{Sshd, descendants};
use tokio_util::sync::CancellationToken;

/// The built-in tools, as the runner sees them.
fn tools() -> ToolSet {
    let registry = Registry::from_inventory().expect("registry");
    ["read", "write", "edit", "bash", "ls", "grep", "find"]
        .iter()
        .map(|name| wrap(Arc::clone(registry.get(name).expect("built-in")), None))
        .collect()
}

/// Runs `calls` (`(tool, arguments)`) one after another in `env`; the transcript lists each
/// result as `[error] text` or `[ok] text`.
async fn run(env: Arc<dyn ExecutionEnv>, calls: &[(&str, Value)]) -> String {
    let tools = tools();
    let mut transcript = String::new();
    for (i, (name, args)) in calls.iter().enumerate() {
        let config = RunnerConfig {
            extensions: Extensions::new().with(Arc::clone(&env)),
            ..RunnerConfig::default()
        };
        let call = ToolCall {
            id: format!("c{i}"),
            name: (*name).to_string(),
            arguments: args.clone(),
        };
        let outcome = execute_tool_calls(
            &tools,
            &[call],
            &config,
            &CancellationToken::new(),
            &NoopSink,
        )
        .await;
        for message in outcome.messages {
            let text: Vec<String> = message
                .content
                .iter()
                .filter_map(|b| b.as_text().map(str::to_string))
                .collect();
            transcript.push_str(&format!(
                "[{}] {name}: {}\n",
                if message.is_error { "error" } else { "ok" },
                text.join("\n")
            ));
        }
    }
    transcript
}

/// Every file under `dir` with its content (or `<dir>`), sorted, and modes of files.
fn snapshot(dir: &Path) -> String {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let rel = path
                .strip_prefix(base)
                .expect("inside")
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            if meta.file_type().is_symlink() {
                out.push(format!(
                    "{rel} -> {}",
                    std::fs::read_link(&path).expect("link").display()
                ));
            } else if meta.is_dir() {
                out.push(format!("{rel}/"));
                walk(base, &path, out);
            } else {
                use std::os::unix::fs::PermissionsExt;
                out.push(format!(
                    "{rel} ({:o}): {:?}",
                    meta.permissions().mode() & 0o777,
                    String::from_utf8_lossy(&std::fs::read(&path).expect("read"))
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.join("\n")
}

/// The environments a case runs in, each on a fresh directory made by `setup`.
struct Envs {
    sshd: Option<Sshd>,
    /// For each SSH run: whether the remote pi-tools helper may be used (else grep and find
    /// walk the remote tree over SFTP).
    helper: Vec<bool>,
}

impl Envs {
    /// Local, and SSH with the helper.
    fn new() -> Envs {
        Envs {
            sshd: Sshd::start(),
            helper: vec![true],
        }
    }

    /// Local, SSH with the helper, and SSH without it.
    fn with_and_without_helper() -> Envs {
        Envs {
            sshd: Sshd::start(),
            helper: vec![true, false],
        }
    }

    /// Runs the case in each environment and returns the (identical) transcript plus the
    /// snapshot of the files afterwards.
    async fn check(&self, setup: impl Fn(&Path), calls: &[(&str, Value)]) -> String {
        let local_dir = tempfile::tempdir().expect("tempdir");
        setup(local_dir.path());
        let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(local_dir.path()));
        let local_result = format!(
            "{}---\n{}",
            run(local, calls).await,
            snapshot(local_dir.path())
        )
        .replace(&local_dir.path().display().to_string(), "<dir>");
        let Some(sshd) = &self.sshd else {
            return local_result;
        };
        for &helper in &self.helper {
            let remote_dir = tempfile::tempdir().expect("tempdir");
            setup(remote_dir.path());
            let target = if helper {
                sshd.target()
                    .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()))
            } else {
                sshd.target()
            };
            let remote: Arc<dyn ExecutionEnv> = Arc::new(
                SshEnv::connect(target, remote_dir.path())
                    .await
                    .expect("connect"),
            );
            let remote_result = format!(
                "{}---\n{}",
                run(remote, calls).await,
                snapshot(remote_dir.path())
            )
            .replace(&remote_dir.path().display().to_string(), "<dir>");
            assert_eq!(
                local_result, remote_result,
                "local and SSH environments differ (helper: {helper})"
            );
        }
        local_result
    }
}

fn files(list: &'static [(&'static str, &'static str)]) -> impl Fn(&Path) {
    move |dir| {
        for (name, text) in list {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_tools_behave_the_same_everywhere() {
    let envs = Envs::new();

    let out = envs
        .check(
            files(&[("a.txt", "one\ntwo\nthree\n")]),
            &[
                ("read", json!({"path": "a.txt"})),
                ("read", json!({"path": "a.txt", "offset": 2, "limit": 1})),
                ("read", json!({"path": "missing.txt"})),
            ],
        )
        .await;
    assert!(out.starts_with("[ok] read: one\ntwo\nthree"), "{out}");
    assert!(out.contains("[error] read: "), "{out}");

    let out = envs
        .check(
            files(&[]),
            &[
                (
                    "write",
                    json!({"path": "new/deep/file.txt", "content": "hello\n"}),
                ),
                ("read", json!({"path": "new/deep/file.txt"})),
            ],
        )
        .await;
    assert!(
        out.contains("new/deep/file.txt (644): \"hello\\n\""),
        "{out}"
    );

    let out = envs
        .check(
            |dir: &Path| {
                std::fs::write(dir.join("code.rs"), "fn main() {\n    let x = 1;\n}\n").expect("w");
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(dir.join("code.rs"), std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
                std::os::unix::fs::symlink("code.rs", dir.join("link.rs")).expect("symlink");
            },
            &[
                ("edit", json!({"path": "link.rs", "edits": [{"oldText": "let x = 1;", "newText": "let x = 2;"}]})),
                ("edit", json!({"path": "code.rs", "edits": [{"oldText": "no such text", "newText": "y"}]})),
            ],
        )
        .await;
    assert!(
        out.contains("code.rs (755): \"fn main() {\\n    let x = 2;\\n}\\n\""),
        "{out}"
    );
    assert!(out.contains("link.rs -> code.rs"), "{out}");
    assert!(out.contains("[error] edit: "), "{out}");

    let out = envs
        .check(
            files(&[("src/main.rs", "x"), (".hidden", "h"), ("README", "r")]),
            &[
                ("ls", json!({})),
                ("ls", json!({"path": "src"})),
                ("ls", json!({"path": "nope"})),
            ],
        )
        .await;
    assert!(
        out.starts_with("[ok] ls: .hidden\nREADME\nsrc/\n[ok] ls: main.rs\n[error] ls: "),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_and_find_behave_the_same_everywhere() {
    let envs = Envs::new();
    let out = envs
        .check(
            files(&[
                ("src/lib.rs", "pub fn alpha() {}\n// TODO: beta\n"),
                ("src/deep/mod.rs", "fn gamma() { todo!() }\n"),
                ("notes.md", "TODO list\n"),
                (".gitignore", "target/\n"),
                ("target/out.rs", "// TODO: ignored\n"),
            ]),
            &[
                ("grep", json!({"pattern": "TODO"})),
                (
                    "grep",
                    json!({"pattern": "todo", "ignoreCase": true, "glob": "*.rs", "context": 1}),
                ),
                ("grep", json!({"pattern": "(unclosed"})),
                ("find", json!({"pattern": "*.rs"})),
                ("find", json!({"pattern": "**/deep/*", "path": "src"})),
                ("find", json!({"pattern": "*.none"})),
            ],
        )
        .await;
    assert!(
        out.starts_with("[ok] grep: notes.md:1: TODO list\nsrc/lib.rs:2: // TODO: beta\n"),
        "{out}"
    );
    let transcript = out.split("\n---\n").next().expect("transcript");
    assert!(!transcript.contains("ignored"), "{out}");
    assert!(out.contains("[error] grep: "), "{out}");
    assert!(
        out.contains("[ok] find: src/deep/mod.rs\nsrc/lib.rs\n"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_behaves_the_same_everywhere() {
    let envs = Envs::new();
    let out = envs
        .check(
            files(&[("data.txt", "42\n")]),
            &[
                (
                    "bash",
                    json!({"command": "cat data.txt; echo err >&2; echo made > out.txt"}),
                ),
                ("bash", json!({"command": "echo partial; exit 3"})),
                (
                    "bash",
                    json!({"command": "printf 'a\\nb\\n' | wc -l; echo \"$0\" | grep -c bash"}),
                ),
            ],
        )
        .await;
    assert!(out.starts_with("[ok] bash: 42\nerr\n"), "{out}");
    assert!(out.contains("[error] bash: partial"), "{out}");
    assert!(out.contains("out.txt (644): \"made\\n\""), "{out}");
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

/// The target with the remote pi-tools process (`true`) or a session per command.
fn target_of(sshd: &Sshd, served: bool) -> pi_tools::env::SshTarget {
    if served {
        sshd.target()
            .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()))
    } else {
        sshd.target()
    }
}

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

/// A tree that exercises what the walk must get right everywhere: ignore files at several
/// levels (negations, directory-only rules, `.ignore` over `.gitignore`, the repository's
/// `info/exclude`, rules from above the searched directory), `.git` never entered, hidden
/// files, symbolic links (listed, searched when they lead to a file, never entered), a
/// binary file, and limits.
fn ignore_tree(dir: &Path) {
    let write = |rel: &str, text: &[u8]| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(".gitignore", b"*.log\n/build/\nskip/\n!keep.log\n");
    write(".git/info/exclude", b"*.excluded\n");
    write(".git/HEAD", b"ref: refs/heads/main\n");
    write("keep.log", b"needle in kept log\n");
    write("drop.log", b"needle in dropped log\n");
    write("build/out.txt", b"needle in build\n");
    write(
        "src/build/gen.rs",
        b"// needle: only the top build/ is ignored\n",
    );
    write(
        "src/a.rs",
        b"fn a() {}\n// needle one\nlet x = 1;\nlet y = 2;\n// needle two\n",
    );
    write("src/skip/x.rs", b"needle skipped dir\n");
    write("src/.ignore", b"*.tmp\n!wanted.tmp\n");
    write("src/z.tmp", b"needle tmp\n");
    write("src/wanted.tmp", b"needle wanted\n");
    write("src/sub/.gitignore", b"!*.log\nlocal.txt\n");
    write("src/sub/sub.log", b"needle re-included log\n");
    write("src/sub/local.txt", b"needle local\n");
    write("src/sub/.hidden", b"needle hidden\n");
    write("data.excluded", b"needle excluded\n");
    write("bin.dat", b"needle\0binary\n");
    write("docs/guide.md", b"Needle in docs\n");
    std::os::unix::fs::symlink("src/a.rs", dir.join("link.rs")).expect("symlink");
    std::os::unix::fs::symlink("src", dir.join("srclink")).expect("symlink");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_walk_is_the_same_through_sftp_as_locally() {
    let envs = Envs::with_and_without_helper();
    let out = envs
        .check(
            ignore_tree,
            &[
                ("grep", json!({"pattern": "needle"})),
                (
                    "grep",
                    json!({"pattern": "NEEDLE", "ignoreCase": true, "glob": "**/*.md"}),
                ),
                (
                    "grep",
                    json!({"pattern": "needle", "path": "src", "context": 1}),
                ),
                ("grep", json!({"pattern": "needle", "limit": 2})),
                ("grep", json!({"pattern": "needle", "path": "src/a.rs"})),
                (
                    "grep",
                    json!({"pattern": "x", "literal": true, "glob": "src/*.rs"}),
                ),
                ("find", json!({"pattern": "*"})),
                ("find", json!({"pattern": "*.log"})),
                ("find", json!({"pattern": "src/**/"})),
                ("find", json!({"pattern": "*.rs", "path": "src/sub"})),
                ("find", json!({"pattern": "*", "limit": 3})),
                ("find", json!({"pattern": "*", "path": "src/a.rs"})),
            ],
        )
        .await;
    let transcript = out.split("\n---\n").next().expect("transcript");
    assert!(
        transcript.contains("keep.log:1: needle in kept log"),
        "{out}"
    );
    assert!(transcript.contains("link.rs:2: // needle one"), "{out}");
    assert!(
        transcript.contains("src/sub/sub.log:1: needle re-included log"),
        "{out}"
    );
    assert!(transcript.contains("src/wanted.tmp"), "{out}");
    for hidden in [
        "dropped log",
        "in build\n",
        "skipped dir",
        "needle tmp",
        "needle local",
        "excluded",
        "binary",
        "HEAD",
    ] {
        assert!(!transcript.contains(hidden), "{hidden}: {out}");
    }
    assert!(
        transcript.contains("[ok] find: .gitignore\nbin.dat\ndocs/\n"),
        "{out}"
    );
    assert!(transcript.contains("srclink\n"), "{out}");
    assert!(!transcript.contains("srclink/"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_log_says_how_a_remote_search_ran() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f.txt"), "hit\n").expect("write");
    let tools = tools();
    for (target, via) in [
        (
            sshd.target()
                .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into())),
            "helper",
        ),
        (sshd.target(), "walk"),
    ] {
        let env: Arc<dyn ExecutionEnv> =
            Arc::new(SshEnv::connect(target, dir.path()).await.expect("connect"));
        let config = RunnerConfig {
            extensions: Extensions::new().with(env),
            ..RunnerConfig::default()
        };
        for (name, args) in [
            ("grep", json!({"pattern": "hit"})),
            ("find", json!({"pattern": "*.txt"})),
        ] {
            let call = ToolCall {
                id: "c".into(),
                name: name.into(),
                arguments: args,
            };
            let outcome = execute_tool_calls(
                &tools,
                &[call],
                &config,
                &CancellationToken::new(),
                &NoopSink,
            )
            .await;
            let message = &outcome.messages[0];
            assert!(!message.is_error, "{message:?}");
            assert_eq!(message.details["via"], json!(via), "{name}: {message:?}");
            let text: Vec<&str> = message.content.iter().filter_map(|b| b.as_text()).collect();
            assert!(
                !text.join("").contains(via),
                "{name}: the model is not told: {text:?}"
            );
        }
    }
    // Locally nothing is recorded.
    let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()));
    let config = RunnerConfig {
        extensions: Extensions::new().with(local),
        ..RunnerConfig::default()
    };
    let call = ToolCall {
        id: "c".into(),
        name: "grep".into(),
        arguments: json!({"pattern": "hit"}),
    };
    let outcome = execute_tool_calls(
        &tools,
        &[call],
        &config,
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    assert_eq!(outcome.messages[0].details.get("via"), None);
}

/// Waits (up to 5 s) until `count()` is `want`.
async fn settle(want: usize, count: impl Fn() -> usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let n = count();
        if n == want || std::time::Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
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

/// Cases drawn from the read tool's own tests (`tests/tool_read.rs`), run everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_cases_behave_the_same_everywhere() {
    let envs = Envs::new();
    let out = envs
        .check(
            |dir: &Path| {
                let numbered: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
                std::fs::write(dir.join("big.txt"), numbered).expect("big");
                std::fs::write(
                    dir.join("wide.txt"),
                    format!("{}\nshort\n", "x".repeat(60_000)),
                )
                .expect("wide");
                std::fs::write(dir.join("bin.dat"), b"ab\0cd\x01\x02").expect("bin");
                std::fs::write(dir.join("crlf.txt"), "one\r\ntwo\r\n").expect("crlf");
                std::fs::write(dir.join("it\u{2019}s.txt"), "curly\n").expect("curly");
                std::fs::create_dir(dir.join("d")).expect("dir");
            },
            &[
                ("read", json!({"path": "big.txt"})),
                ("read", json!({"path": "big.txt", "offset": 2990})),
                ("read", json!({"path": "big.txt", "offset": 5000})),
                (
                    "read",
                    json!({"path": "@big.txt", "offset": 10, "limit": 2}),
                ),
                ("read", json!({"path": "wide.txt"})),
                ("read", json!({"path": "bin.dat"})),
                ("read", json!({"path": "d"})),
                ("read", json!({"path": "crlf.txt"})),
                ("read", json!({"path": "it's.txt"})),
            ],
        )
        .await;
    assert!(out.contains("[ok] read: line 10\nline 11\n"), "{out}");
    assert!(out.contains("[ok] read: curly"), "{out}");
}

/// Cases drawn from `tests/tool_write.rs` and `tests/tool_edit.rs`, run everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_and_edit_cases_behave_the_same_everywhere() {
    let envs = Envs::new();
    let out = envs
        .check(
            |dir: &Path| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::create_dir(dir.join("d")).expect("dir");
                std::fs::create_dir(dir.join("targets")).expect("dir");
                std::os::unix::fs::symlink("targets/later.txt", dir.join("pending")).expect("link");
                std::fs::write(dir.join("private.txt"), "secret\n").expect("private");
                std::fs::set_permissions(
                    dir.join("private.txt"),
                    std::fs::Permissions::from_mode(0o600),
                )
                .expect("chmod");
                std::fs::write(dir.join("crlf.txt"), "alpha\r\nbeta\r\ngamma\r\n").expect("crlf");
                std::fs::write(dir.join("bom.txt"), "\u{feff}first\nsecond\n").expect("bom");
                std::fs::write(dir.join("ws.txt"), "let a = 1;   \nlet b = 2;\n").expect("ws");
                std::fs::write(
                    dir.join("code.py"),
                    "def f():\n    if x:\n        return 1\n    return 2\n",
                )
                .expect("code");
                std::fs::write(dir.join("two.txt"), "same\nother\nsame\n").expect("two");
            },
            &[
                ("write", json!({"path": "d", "content": "x"})),
                ("write", json!({"path": "pending", "content": "through the link\n"})),
                ("write", json!({"path": "private.txt", "content": "new secret \u{e9}\n"})),
                ("edit", json!({"path": "crlf.txt", "edits": [{"oldText": "beta\ngamma", "newText": "BETA\nGAMMA"}]})),
                ("edit", json!({"path": "bom.txt", "edits": [{"oldText": "second", "newText": "2nd"}]})),
                ("edit", json!({"path": "ws.txt", "edits": [{"oldText": "let a = 1;\nlet b = 2;", "newText": "let a = 3;\nlet b = 4;"}]})),
                ("edit", json!({"path": "code.py", "edits": [{"oldText": "if x:\n    return 1", "newText": "if y:\n    return 10"}]})),
                ("edit", json!({"path": "two.txt", "edits": [{"oldText": "same", "newText": "one"}]})),
                ("edit", json!({"path": "two.txt", "edits": [{"oldText": "other", "newText": "x"}, {"oldText": "missing", "newText": "y"}]})),
                ("edit", json!({"path": "two.txt", "edits": [{"oldText": "othr", "newText": "x"}]})),
                ("edit", json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]})),
            ],
        )
        .await;
    assert!(out.contains("pending -> targets/later.txt"), "{out}");
    assert!(
        out.contains("targets/later.txt (644): \"through the link\\n\""),
        "{out}"
    );
    assert!(
        out.contains("private.txt (600): \"new secret \u{e9}\\n\""),
        "{out}"
    );
    assert!(
        out.contains("crlf.txt (644): \"alpha\\r\\nBETA\\r\\nGAMMA\\r\\n\""),
        "{out}"
    );
    assert!(
        out.contains("bom.txt (644): \"\\u{feff}first\\n2nd\\n\""),
        "{out}"
    );
    assert!(
        out.contains("two.txt (644): \"same\\nother\\nsame\\n\""),
        "{out}"
    );
}

/// Cases drawn from `tests/tool_ls.rs` and `tests/tool_bash.rs`, run everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_and_bash_cases_behave_the_same_everywhere() {
    let envs = Envs::new();
    let out = envs
        .check(
            files(&[
                ("Zeta.txt", "z"),
                ("alpha.txt", "a"),
                ("Beta/x", "x"),
                (".env", "e"),
                ("_under", "u"),
                ("sub/inner/deep.txt", "d"),
            ]),
            &[
                ("ls", json!({})),
                ("ls", json!({"limit": 2})),
                ("ls", json!({"path": "alpha.txt"})),
                ("ls", json!({"path": "sub/inner"})),
                ("bash", json!({"command": "true"})),
                ("bash", json!({"command": "cd sub && pwd && ls"})),
                (
                    "bash",
                    json!({"command": "printf '\\xc3'; printf '\\xa9\\n'; echo done"}),
                ),
                ("bash", json!({"command": "echo before; kill -TERM $$"})),
                ("bash", json!({"command": "seq 1 5; exit 7"})),
                ("bash", json!({"command": "printf 'no newline'"})),
            ],
        )
        .await;
    assert!(out.contains("[ok] bash: <dir>/sub\ninner"), "{out}");
    assert!(out.contains("[ok] bash: \u{e9}\ndone"), "{out}");
}

/// The processes under `sshd` (its connections' processes) whose command line says
/// `marker`.
fn served_by(sshd: &Sshd, marker: &str) -> usize {
    let Some(listener) = sshd.pid() else { return 0 };
    descendants(listener)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(marker)
            })
        })
        .count()
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
    let Some(sshd) = Sshd::start_with(&[&set_home, "Subsystem sftp internal-sftp"]) else {
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
    assert_eq!(served_by(&sshd, "env-server"), 1);

    // The environment's end ends the remote process.
    drop(env);
    assert_eq!(settle(0, || served_by(&sshd, "env-server")).await, 0);

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
    // .bashrc), then one per command (an SSH command's shell, which reads .bashrc itself).
    assert_eq!(startups() - before, 3);
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
    let Some(sshd) = Sshd::start_with(&[&set_home, "Subsystem sftp internal-sftp"]) else {
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
        assert_eq!(settle(0, || served_by(&sshd, "env-server")).await, 0);
    }
}
