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

use pi_tools::env::local::LocalEnv;
use pi_tools::env::remote::SshEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{
    NoopSink, Registry, RunnerConfig, ToolCall, ToolResultMessage, ToolSet, execute_tool_calls,
    wrap,
};
use serde_json::{Value, json};
use ssh_support::Sshd;
use tokio_util::sync::CancellationToken;

mod native;
mod remote_processes;
mod search;

/// The built-in tools, as the runner sees them.
fn tools() -> ToolSet {
    let registry = Registry::from_inventory().expect("registry");
    [
        "read",
        "write",
        "edit",
        "bash",
        "ls",
        "grep",
        "find",
        "apply_patch",
        "str_replace_based_edit_tool",
    ]
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
        let message = run_one(&tools, &env, &format!("c{i}"), name, args.clone()).await;
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
    transcript
}

/// One call of `tools` in `env`, as a batch of its own; its result message.
async fn run_one(
    tools: &ToolSet,
    env: &Arc<dyn ExecutionEnv>,
    id: &str,
    name: &str,
    arguments: Value,
) -> ToolResultMessage {
    let config = RunnerConfig::default().with_env(Arc::clone(env));
    let call = ToolCall::new(id, name, arguments);
    let outcome = execute_tool_calls(
        tools,
        &[call],
        &config,
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    outcome
        .messages
        .into_iter()
        .next()
        .expect("a batch of one call has one result")
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
        self.check_with(setup, |env| run(env, calls)).await
    }

    /// [`Envs::check`] with the transcript made by `case` from the environment (to run
    /// whole provider replies through a toolbox, say).
    async fn check_with<F, Fut>(&self, setup: impl Fn(&Path), case: F) -> String
    where
        F: Fn(Arc<dyn ExecutionEnv>) -> Fut,
        Fut: std::future::Future<Output = String>,
    {
        let local_dir = tempfile::tempdir().expect("tempdir");
        setup(local_dir.path());
        let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(local_dir.path()));
        let local_result = format!("{}---\n{}", case(local).await, snapshot(local_dir.path()))
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
            let remote_result =
                format!("{}---\n{}", case(remote).await, snapshot(remote_dir.path()))
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

/// The target with the remote pi-tools process (`true`) or a session per command.
fn target_of(sshd: &Sshd, served: bool) -> pi_tools::env::remote::SshTarget {
    if served {
        sshd.target()
            .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into()))
    } else {
        sshd.target()
    }
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
