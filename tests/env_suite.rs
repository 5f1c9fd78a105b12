//! One behaviour suite for the built-in tools, run against every execution environment:
//! the local machine ([`LocalEnv`]) and a real OpenSSH server on 127.0.0.1 ([`SshEnv`]).
//! Each case sets up the same files in a fresh directory for each environment, runs the
//! same tool calls through the runner, and the transcripts (result texts, error flags and
//! the files left behind) must be identical, and equal to what the case expects.

mod ssh_support;

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
}

impl Envs {
    fn new() -> Envs {
        Envs {
            sshd: Sshd::start(),
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
        let remote_dir = tempfile::tempdir().expect("tempdir");
        setup(remote_dir.path());
        let target = sshd
            .target()
            .with_upload_helper(Some(env!("CARGO_BIN_EXE_pi-tools").into()));
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
            "local and SSH environments differ"
        );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_timeout_kills_the_whole_remote_group() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let env: Arc<dyn ExecutionEnv> = Arc::new(
        SshEnv::connect(sshd.target(), dir.path())
            .await
            .expect("connect"),
    );
    let started = std::time::Instant::now();
    let out = run(
        Arc::clone(&env),
        &[(
            "bash",
            json!({"command": "sleep 37.25 & echo started; sleep 37.5", "timeout": 1}),
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
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(processes_with("sleep 37.25"), Vec::<u32>::new());
    assert_eq!(processes_with("sleep 37.5"), Vec::<u32>::new());
    drop(env);
    let _ = descendants;
}
