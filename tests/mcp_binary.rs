//! `pi-tools mcp` as a separate process: the built binary serves the built-in tools in a
//! temporary working directory, and the tests talk to it over its stdin and stdout with
//! rmcp's client, or in raw JSON-RPC lines where they need to send what no client would.
#![cfg(feature = "cli")]

use support::mcp as mcp_support;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_support::{PATIENCE, ProgressClient, Raw};
use pi_tools::Registry;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest,
    ProgressNotificationParam, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, RoleClient, RunningService};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// How long the binary may take to start and answer `initialize` on a loaded machine.
const STARTUP: Duration = Duration::from_secs(30);

/// Every built-in tool, in the order a client lists them.
const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// A configuration that activates every built-in tool.
const ALL_TOOLS_TOML: &str = r#"[tools]
active = ["read", "bash", "edit", "write", "grep", "find", "ls"]
"#;

/// The same, with bash in sequential mode.
const SEQUENTIAL_BASH_TOML: &str = r#"[tools]
active = ["read", "bash", "edit", "write", "grep", "find", "ls"]

[tool.bash]
mode = "sequential"
"#;

/// A running `pi-tools mcp` process. Killed if a test fails before it ends it.
struct Server {
    /// The tools' working directory (`--cwd`).
    work: TempDir,
    /// Holds the configuration file, outside the working directory so the tools never see
    /// it.
    _etc: TempDir,
    child: Child,
}

impl Server {
    /// Starts `pi-tools mcp --cwd <work> [--config <etc>/pi-tools.toml]` with piped stdin
    /// and stdout.
    fn spawn(config: Option<&str>) -> (Server, ChildStdin, ChildStdout) {
        let work = TempDir::new().expect("a temporary working directory");
        let etc = TempDir::new().expect("a temporary configuration directory");
        let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
        command.arg("mcp").arg("--cwd").arg(work.path());
        if let Some(config) = config {
            let file = etc.path().join("pi-tools.toml");
            std::fs::write(&file, config).expect("the configuration is written");
            command.arg("--config").arg(file);
        }
        let mut child = command
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the pi-tools binary starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        (
            Server {
                work,
                _etc: etc,
                child,
            },
            stdin,
            stdout,
        )
    }

    /// A path in the working directory.
    fn path(&self, relative: &str) -> PathBuf {
        self.work.path().join(relative)
    }

    /// Writes a file in the working directory.
    fn put(&self, relative: &str, contents: &str) {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("the directory is created");
        }
        std::fs::write(path, contents).expect("the file is written");
    }

    /// A file of the working directory.
    fn contents(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|e| panic!("{relative} cannot be read: {e}"))
    }

    /// Waits for the process to end, once its input is closed.
    async fn exit_status(&mut self) -> ExitStatus {
        tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("the server ends in time after its input closes")
            .expect("the server's status can be read")
    }
}

/// rmcp's client connected to a running binary.
struct Session {
    client: RunningService<RoleClient, ProgressClient>,
    progress: UnboundedReceiver<ProgressNotificationParam>,
    server: Server,
}

impl Session {
    /// Starts the binary with `config` (the embedded default without one) and connects.
    async fn start(config: Option<&str>) -> Session {
        Session::start_after(config, b"").await
    }

    /// Like [`Session::start`], but writes `prefix` to the server's stdin before the
    /// client's first byte.
    async fn start_after(config: Option<&str>, prefix: &[u8]) -> Session {
        let (server, mut stdin, stdout) = Server::spawn(config);
        stdin.write_all(prefix).await.expect("the server reads");
        stdin.flush().await.expect("the server reads");
        let (tx, progress) = unbounded_channel();
        let client = tokio::time::timeout(STARTUP, ProgressClient::new(tx).serve((stdout, stdin)))
            .await
            .expect("the server answers initialize in time")
            .expect("the handshake succeeds");
        Session {
            client,
            progress,
            server,
        }
    }

    /// One `tools/call`.
    /// Sends a `tools/call` without waiting for it, so that it can be watched or cancelled.
    async fn start_call(&self, tool: &str, arguments: Value) -> RequestHandle<RoleClient> {
        self.client
            .send_cancellable_request(
                ClientRequest::CallToolRequest(CallToolRequest::new(params(tool, arguments))),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("the request is sent")
    }

    async fn call(&self, tool: &str, arguments: Value) -> CallToolResult {
        tokio::time::timeout(PATIENCE, self.client.call_tool(params(tool, arguments)))
            .await
            .unwrap_or_else(|_| panic!("{tool} answers in time"))
            .unwrap_or_else(|e| panic!("{tool} answers with a result: {e}"))
    }

    /// Closes the client (and with it the server's stdin) and returns the server's exit
    /// status.
    async fn finish(mut self) -> ExitStatus {
        self.client.cancel().await.expect("the client closes");
        self.server.exit_status().await
    }
}

fn params(tool: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(map) = arguments else {
        panic!("arguments must be an object, not {arguments}")
    };
    CallToolRequestParams::new(tool.to_owned()).with_arguments(map)
}

/// The result's only content block, which must be text, and its `isError`.
fn text_of(result: &CallToolResult) -> (String, bool) {
    let value = serde_json::to_value(result).expect("a result serialises");
    match value["content"].as_array().map(Vec::as_slice) {
        Some([block]) if block["type"] == "text" => (
            block["text"].as_str().expect("text is a string").to_owned(),
            result.is_error == Some(true),
        ),
        _ => panic!("expected one text block, got {value}"),
    }
}

/// The text of a successful result.
fn ok_text(result: &CallToolResult) -> String {
    let (text, is_error) = text_of(result);
    assert!(!is_error, "the call failed: {text}");
    assert_eq!(result.is_error, Some(false));
    text
}

/// Whether a process is still running: it is gone once `/proc/<pid>` is, or when only its
/// zombie entry is left (it has exited and waits for a parent to collect its status).
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last parenthesis.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    state != Some('Z')
}

/// Waits until none of `pids` runs, at most `within`.
async fn wait_gone(pids: &[u32], within: Duration) {
    let deadline = Instant::now() + within;
    while pids.iter().any(|&pid| running(pid)) {
        assert!(
            Instant::now() < deadline,
            "still running after {within:?}: {:?}",
            pids.iter().filter(|&&p| running(p)).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for a command to write a complete line to `path` and returns it.
async fn wait_line(path: &Path) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Some(line) = text.strip_suffix('\n')
        {
            return line.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "{} is never written",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A process id written by a command.
async fn wait_pid(path: &Path) -> u32 {
    let line = wait_line(path).await;
    line.parse()
        .unwrap_or_else(|_| panic!("{} holds a pid, not {line:?}", path.display()))
}

/// A `date +%s%N` timestamp written by a command, in nanoseconds since the epoch.
fn nanos(path: &Path) -> u128 {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{} holds a timestamp, not {text:?}", path.display()))
}

/// Now, on the clock `date +%s%N` reads.
fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_nanos()
}

#[tokio::test]
async fn lists_the_active_tools_in_order_with_canonical_schemas_and_hints() {
    let registry = Registry::from_inventory().expect("the built-in tools register");
    let session = Session::start(Some(ALL_TOOLS_TOML)).await;

    let info = session.client.peer_info().expect("the handshake is done");
    let server = info.server_info.as_ref().expect("the server names itself");
    assert_eq!(server.name, "pi-tools");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some());

    let listed = tokio::time::timeout(PATIENCE, session.client.list_all_tools())
        .await
        .expect("tools/list answers in time")
        .expect("tools/list answers");
    let listed: Vec<Value> = listed
        .iter()
        .map(|t| serde_json::to_value(t).expect("a tool serialises"))
        .collect();
    let expected: Vec<Value> = ALL_TOOLS
        .iter()
        .map(|&name| {
            let definition = registry.get(name).expect("a built-in tool");
            let annotations = if matches!(name, "read" | "grep" | "find" | "ls") {
                json!({"readOnlyHint": true})
            } else {
                json!({"readOnlyHint": false, "destructiveHint": true})
            };
            // bash's description ends with what the (default) sandbox allows.
            let description = if name == "bash" {
                format!(
                    "{} Commands and file edits may write only in the working directory and in \
                     $TMPDIR; writes elsewhere fail with \"Permission denied\"; .git is \
                     read-only, so git can read the repository but not commit; network access \
                     is on.",
                    definition.description()
                )
            } else {
                definition.description().to_owned()
            };
            json!({
                "name": name,
                "title": definition.label(),
                "description": description,
                "inputSchema": definition.parameters(),
                "annotations": annotations,
            })
        })
        .collect();
    assert_eq!(listed, expected);
    assert_eq!(
        listed
            .iter()
            .map(|t| t["title"].clone())
            .collect::<Vec<_>>(),
        ["Read", "Bash", "Edit", "Write", "Grep", "Find", "Ls"].map(Value::from)
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn without_a_configuration_the_default_tools_are_served() {
    let session = Session::start(None).await;
    let listed = tokio::time::timeout(PATIENCE, session.client.list_all_tools())
        .await
        .expect("tools/list answers in time")
        .expect("tools/list answers");
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["read", "bash", "edit", "write"]);
    let (text, is_error) = text_of(&session.call("grep", json!({"pattern": "x"})).await);
    assert!(is_error);
    // grep is registered but off by default: the error says which key turns it on.
    assert_eq!(
        text,
        "Tool grep is registered but not active in this configuration, so it cannot be \
         called. The active tools are: read, bash, edit, write. To turn it on, add \"grep\" to \
         `active` in the `[tools]` section of pi-tools.toml."
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn write_creates_the_file_in_the_working_directory() {
    let session = Session::start(None).await;
    let result = session
        .call(
            "write",
            json!({"path": "notes/a.txt", "content": "alpha\nbeta\n"}),
        )
        .await;
    assert_eq!(
        ok_text(&result),
        "Successfully wrote 11 bytes to notes/a.txt"
    );
    assert_eq!(session.server.contents("notes/a.txt"), "alpha\nbeta\n");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn read_returns_the_files_text() {
    let session = Session::start(None).await;
    session.server.put("a.txt", "one\ntwo\nthree\nfour\n");
    let result = session.call("read", json!({"path": "a.txt"})).await;
    assert_eq!(ok_text(&result), "one\ntwo\nthree\nfour\n");
    let result = session
        .call("read", json!({"path": "a.txt", "offset": 2, "limit": 2}))
        .await;
    assert_eq!(
        ok_text(&result),
        "two\nthree\n\n[1 more line in the file. Use offset=4 to continue.]"
    );
    let (text, is_error) = text_of(&session.call("read", json!({"path": "missing.txt"})).await);
    assert!(is_error);
    assert!(text.contains("missing.txt"), "{text}");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn edit_replaces_the_text_in_the_file() {
    let session = Session::start(None).await;
    session.server.put("src/lib.rs", "fn a() {}\nfn b() {}\n");
    let result = session
        .call(
            "edit",
            json!({"path": "src/lib.rs", "edits": [
                {"oldText": "fn b() {}", "newText": "fn b() -> u8 { 1 }"}
            ]}),
        )
        .await;
    assert_eq!(
        ok_text(&result),
        "Successfully replaced 1 block in src/lib.rs."
    );
    assert_eq!(
        session.server.contents("src/lib.rs"),
        "fn a() {}\nfn b() -> u8 { 1 }\n"
    );
    // A miss changes nothing and says so.
    let (text, is_error) = text_of(
        &session
            .call(
                "edit",
                json!({"path": "src/lib.rs", "edits": [{"oldText": "fn c", "newText": "x"}]}),
            )
            .await,
    );
    assert!(is_error, "{text}");
    assert_eq!(
        session.server.contents("src/lib.rs"),
        "fn a() {}\nfn b() -> u8 { 1 }\n"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn bash_runs_in_the_working_directory() {
    let session = Session::start(None).await;
    session.server.put("data.txt", "42\n");
    let result = session
        .call(
            "bash",
            json!({"command": "cat data.txt; echo made > out.txt; ls"}),
        )
        .await;
    assert_eq!(ok_text(&result), "42\ndata.txt\nout.txt");
    assert_eq!(session.server.contents("out.txt"), "made\n");

    let (text, is_error) = text_of(
        &session
            .call("bash", json!({"command": "echo failing >&2; exit 3"}))
            .await,
    );
    assert!(is_error);
    assert_eq!(text, "failing\n\nCommand exited with code 3");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn grep_finds_matches_in_the_working_directory() {
    let session = Session::start(Some(ALL_TOOLS_TOML)).await;
    session
        .server
        .put("src/main.rs", "fn main() {\n    run();\n}\n");
    session.server.put("src/run.rs", "pub fn run() {}\n");
    session.server.put("README", "nothing here\n");
    let result = session.call("grep", json!({"pattern": "run\\(\\)"})).await;
    assert_eq!(
        ok_text(&result),
        "src/main.rs:2:     run();\nsrc/run.rs:1: pub fn run() {}"
    );
    let result = session
        .call("grep", json!({"pattern": "absent", "path": "src"}))
        .await;
    assert_eq!(ok_text(&result), "No matches found");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn invalid_arguments_are_an_error_result_listing_every_violation() {
    let session = Session::start(None).await;
    let (text, is_error) = text_of(
        &session
            .call("read", json!({"offset": "x", "limit": -1, "extra": true}))
            .await,
    );
    assert!(is_error);
    assert_eq!(
        text,
        "Validation failed for tool \"read\":\n  \
         - extra: unknown property `extra`; did you mean `path`? Remove `extra` or rename it.\n  \
         - path: \"path\" is a required property\n  \
         - offset: \"x\" is not of type \"integer\"\n  \
         - limit: -1 is less than the minimum of 0\n\n\
         Received arguments:\n{\n  \"offset\": \"x\",\n  \"limit\": -1,\n  \"extra\": true\n}"
    );
    // A number where a string belongs is coerced (a common model slip); the rest is still
    // refused.
    let (text, is_error) = text_of(
        &session
            .call("read", json!({"path": 5, "offset": "x"}))
            .await,
    );
    assert!(is_error);
    assert_eq!(
        text,
        "Validation failed for tool \"read\":\n  \
         - offset: \"x\" is not of type \"integer\"\n\n\
         Received arguments:\n{\n  \"path\": 5,\n  \"offset\": \"x\"\n}"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_result() {
    let session = Session::start(None).await;
    let (text, is_error) = text_of(&session.call("nope", json!({"path": "a"})).await);
    assert!(is_error);
    assert_eq!(text, "Tool nope not found");
    // The session goes on.
    session.server.put("a.txt", "still here\n");
    let result = session.call("read", json!({"path": "a.txt"})).await;
    assert_eq!(ok_text(&result), "still here\n");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_long_bash_command_reports_progress_for_the_requests_token() {
    let mut session = Session::start(None).await;
    let command = "for i in 1 2 3 4 5; do echo $i; sleep 0.3; done";
    let handle = session
        .start_call("bash", json!({"command": command}))
        .await;
    let token = handle.progress_token.clone();
    let result = match tokio::time::timeout(PATIENCE, handle.await_response())
        .await
        .expect("the command ends in time")
        .expect("tools/call answers")
    {
        ServerResult::CallToolResult(result) => result,
        other => panic!("expected a tool result, got {other:?}"),
    };
    assert_eq!(ok_text(&result), "1\n2\n3\n4\n5");

    // Each notification carries only the output that is new since the previous one, so
    // together they are the output once, in order.
    // Notifications are handled apart from the response: collect them until none has come
    // for a while.
    let mut seen = Vec::new();
    while let Ok(Some(note)) =
        tokio::time::timeout(Duration::from_millis(500), session.progress.recv()).await
    {
        seen.push(note);
    }
    assert!(seen.len() >= 2, "progress arrives while it runs: {seen:?}");
    let mut output = String::new();
    for (n, note) in seen.iter().enumerate() {
        assert_eq!(note.progress_token, token);
        assert_eq!(note.progress, (n + 1) as f64);
        assert_eq!(note.total, None);
        let message = note.message.as_deref().expect("a message");
        if !message.starts_with("running for ") {
            output.push_str(message);
        }
    }
    assert_eq!(output, "1\n2\n3\n4\n5\n", "{seen:?}");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_silent_command_gets_a_heartbeat_at_least_every_two_seconds() {
    let mut session = Session::start(None).await;
    let started = Instant::now();
    let handle = session
        .start_call("bash", json!({"command": "sleep 2.5; echo done"}))
        .await;
    let mut beats = Vec::new();
    loop {
        tokio::select! {
            note = session.progress.recv() => {
                let note = note.expect("the client is open");
                beats.push((started.elapsed(), note.message.unwrap_or_default()));
            }
            _ = tokio::time::sleep(Duration::from_millis(3500)) => break,
        }
    }
    let result = match tokio::time::timeout(PATIENCE, handle.await_response())
        .await
        .expect("the command ends in time")
        .expect("tools/call answers")
    {
        ServerResult::CallToolResult(result) => result,
        other => panic!("expected a tool result, got {other:?}"),
    };
    assert_eq!(ok_text(&result), "done");
    let heartbeats: Vec<&str> = beats
        .iter()
        .map(|(_, m)| m.as_str())
        .filter(|m| m.starts_with("running for "))
        .collect();
    // A heartbeat once the command has been silent for a second, and never a gap of more
    // than two seconds (plus scheduling slack on a loaded machine) without a message.
    assert_eq!(heartbeats.first(), Some(&"running for 1 s"), "{beats:?}");
    let mut last = Duration::ZERO;
    for (at, message) in &beats {
        assert!(
            *at - last <= Duration::from_millis(2300),
            "{message:?} came {:?} after the previous message: {beats:?}",
            *at - last
        );
        last = *at;
    }
    // No gap of more than two seconds from the start to the last heartbeat.
    let mut last = Duration::ZERO;
    for (at, _) in beats.iter().filter(|(_, m)| m.starts_with("running for ")) {
        assert!(*at - last <= Duration::from_millis(2200), "{beats:?}");
        last = *at;
    }
    assert!(session.finish().await.success());
}

/// SIGTERM, SIGHUP and SIGINT each end the stdio server as the end of its input does: the
/// running call is cancelled, the background job killed, and the server exits cleanly.
#[tokio::test]
async fn sigterm_sighup_and_sigint_end_the_stdio_server_like_the_end_of_its_input() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let session = Session::start(None).await;
        let result = session
            .call(
                "bash",
                json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
            )
            .await;
        let job: u32 = ok_text(&result).parse().expect("bash prints the job's pid");
        let _long = session
            .start_call(
                "bash",
                json!({"command": "echo $$ > long.pid; exec sleep 30"}),
            )
            .await;
        let call = wait_pid(&session.server.path("long.pid")).await;
        assert!(running(job) && running(call));
        let Session {
            mut server, client, ..
        } = session;
        let pid = i32::try_from(server.child.id().expect("the server runs")).expect("a pid fits");
        // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = server.exit_status().await;
        assert!(status.success(), "signal {signal}: {status}");
        wait_gone(&[job, call], Duration::from_secs(5)).await;
        drop(client);
    }
}

#[tokio::test]
async fn initialize_carries_the_prompts_guidelines_as_instructions() {
    let session = Session::start(None).await;
    let info = session.client.peer_info().expect("the handshake is done");
    let instructions = info.instructions.clone().expect("instructions");
    assert!(
        instructions.starts_with("Guidelines:\n- "),
        "{instructions}"
    );
    assert!(info.capabilities.logging.is_some());
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_cancelled_bash_call_ends_and_its_processes_are_gone() {
    // bash runs alone in this configuration, so the next bash call can only start once the
    // cancelled one has really ended.
    let session = Session::start(Some(SEQUENTIAL_BASH_TOML)).await;
    let command = "sleep 30 & echo $! > sleep.pid; echo $$ > shell.pid; wait";
    let handle = session
        .start_call("bash", json!({"command": command}))
        .await;
    let shell = wait_pid(&session.server.path("shell.pid")).await;
    let sleep = wait_pid(&session.server.path("sleep.pid")).await;
    assert!(running(shell) && running(sleep));

    let cancelled = Instant::now();
    handle
        .cancel(Some("the user pressed stop".to_owned()))
        .await
        .expect("the cancellation is sent");
    wait_gone(&[shell, sleep], Duration::from_secs(5)).await;

    let result = session.call("bash", json!({"command": "echo after"})).await;
    assert_eq!(ok_text(&result), "after");
    assert!(
        cancelled.elapsed() < Duration::from_secs(15),
        "the cancelled call ended long before its 30 s sleep"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn concurrent_edits_of_one_file_through_separate_requests_all_survive() {
    const REGIONS: usize = 16;
    let session = Session::start(None).await;
    let original: String = (0..REGIONS)
        .map(|i| format!("region {i:02}: {}\n", "x".repeat(4096)))
        .collect();
    session.server.put("shared.txt", &original);

    let edits = (0..REGIONS).map(|i| {
        session.call(
            "edit",
            json!({"path": "shared.txt", "edits": [{
                "oldText": format!("region {i:02}:"),
                "newText": format!("REGION {i:02} (edited by call {i}):"),
            }]}),
        )
    });
    for result in futures::future::join_all(edits).await {
        assert_eq!(
            ok_text(&result),
            "Successfully replaced 1 block in shared.txt."
        );
    }
    let expected: String = (0..REGIONS)
        .map(|i| format!("REGION {i:02} (edited by call {i}): {}\n", "x".repeat(4096)))
        .collect();
    assert!(
        session.server.contents("shared.txt") == expected,
        "an edit was lost"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_sequential_bash_call_never_overlaps_another_call() {
    let session = Session::start(Some(SEQUENTIAL_BASH_TOML)).await;
    session.server.put("f.txt", "content\n");
    let timed = |i: usize, secs: &str| {
        json!({"command": format!(
            "date +%s%N > start{i}; sleep {secs}; date +%s%N > end{i}; echo bash {i}"
        )})
    };

    // The first bash call starts alone; everything else is sent while it runs.
    let first = session.call("bash", timed(0, "1"));
    let rest = async {
        wait_line(&session.server.path("start0")).await;
        let reads = (0..4).map(|_| async {
            let result = session.call("read", json!({"path": "f.txt"})).await;
            (ok_text(&result), now_nanos())
        });
        let bashes = (1..3).map(|i| session.call("bash", timed(i, "0.3")));
        futures::future::join(
            futures::future::join_all(reads),
            futures::future::join_all(bashes),
        )
        .await
    };
    let (first, (reads, bashes)) = futures::future::join(first, rest).await;
    assert_eq!(ok_text(&first), "bash 0");
    for (i, result) in bashes.iter().enumerate() {
        assert_eq!(ok_text(result), format!("bash {}", i + 1));
    }

    let spans: Vec<(u128, u128)> = (0..3)
        .map(|i| {
            (
                nanos(&session.server.path(&format!("start{i}"))),
                nanos(&session.server.path(&format!("end{i}"))),
            )
        })
        .collect();
    for (i, a) in spans.iter().enumerate() {
        for (j, b) in spans.iter().enumerate().skip(i + 1) {
            assert!(
                a.1 <= b.0 || b.1 <= a.0,
                "bash {i} {a:?} overlapped bash {j} {b:?}"
            );
        }
    }
    // The reads were sent while the first bash call ran, so none may have run (and
    // answered) before it ended.
    for (text, answered) in reads {
        assert_eq!(text, "content\n");
        assert!(
            answered > spans[0].1,
            "a read answered at {answered}, before bash 0 ended at {}",
            spans[0].1
        );
    }
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn parallel_bash_calls_overlap_without_a_sequential_mode() {
    // The counterpart of the test above: the same calls do overlap when bash is parallel,
    // so the absence of overlap there is the lock's doing.
    let session = Session::start(None).await;
    session.server.put("f.txt", "content\n");
    let calls = (0..3).map(|i| {
        session.call(
            "bash",
            json!({"command": format!("date +%s%N > start{i}; sleep 2; date +%s%N > end{i}")}),
        )
    });
    let read_answered = async {
        wait_line(&session.server.path("start0")).await;
        let result = session.call("read", json!({"path": "f.txt"})).await;
        assert_eq!(ok_text(&result), "content\n");
        now_nanos()
    };
    let (results, read_answered) =
        futures::future::join(futures::future::join_all(calls), read_answered).await;
    for result in &results {
        assert_eq!(ok_text(result), "(no output)");
    }
    let spans: Vec<(u128, u128)> = (0..3)
        .map(|i| {
            (
                nanos(&session.server.path(&format!("start{i}"))),
                nanos(&session.server.path(&format!("end{i}"))),
            )
        })
        .collect();
    let overlapping = (0..3)
        .flat_map(|i| (i + 1..3).map(move |j| (i, j)))
        .any(|(i, j)| spans[i].0 < spans[j].1 && spans[j].0 < spans[i].1);
    assert!(
        overlapping,
        "parallel bash calls ran one at a time: {spans:?}"
    );
    assert!(
        read_answered < spans[0].1,
        "a read waited for a parallel bash call"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn garbage_before_the_handshake_gets_parse_errors_and_does_not_stop_the_server() {
    let mut raw = RawSession::start(None);
    let mut garbage = vec![0u8, 0xff, 0xfe, b'\n'];
    garbage.extend_from_slice(b"{this is not json\n\n   \n");
    garbage.extend_from_slice(&[0x80, 0x81, b'x', b'\n']);
    raw.raw.send_bytes(&garbage).await;
    for _ in 0..3 {
        let answer = raw
            .raw
            .recv_within(STARTUP)
            .await
            .expect("the server answers");
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, json!(-32700)),
            "{answer}"
        );
    }
    raw.initialize().await;
    raw.server.put("a.txt", "served\n");
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read", "arguments": {"path": "a.txt"}}
        }))
        .await;
    assert_eq!(
        raw.raw.recv().await["result"]["content"][0]["text"],
        "served\n"
    );
    raw.raw.close_input();
    assert!(raw.server.exit_status().await.success());
}

/// The binary spoken to in raw JSON-RPC lines.
struct RawSession {
    server: Server,
    raw: Raw<ChildStdin, ChildStdout>,
}

impl RawSession {
    fn start(config: Option<&str>) -> RawSession {
        let (server, stdin, stdout) = Server::spawn(config);
        RawSession {
            server,
            raw: Raw::new(stdin, stdout),
        }
    }

    async fn initialize(&mut self) -> Value {
        self.raw.initialize_within(STARTUP).await
    }
}

#[tokio::test]
async fn garbage_and_bad_messages_mid_session_do_not_stop_the_server() {
    let mut raw = RawSession::start(None);
    let init = raw.initialize().await;
    assert_eq!(init["id"], 0);
    assert_eq!(init["result"]["serverInfo"]["name"], "pi-tools");
    raw.server.put("a.txt", "served\n");

    // Not JSON: a parse error with the null id JSON-RPC asks for, naming the reason.
    raw.raw.send_bytes(b"\x00\xff garbage {{{\n").await;
    let not_utf8 = raw.raw.recv().await;
    assert_eq!(not_utf8["id"], Value::Null);
    assert_eq!(not_utf8["error"]["code"], -32700);
    assert_eq!(
        not_utf8["error"]["message"],
        "Parse error: the line is not valid UTF-8 (invalid byte at offset 1). Send UTF-8 JSON, one message per line."
    );
    raw.raw.send_bytes(b"this is not json either\n").await;
    let not_json = raw.raw.recv().await;
    assert_eq!(
        (not_json["id"].clone(), not_json["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    // JSON but not JSON-RPC: "Invalid request" naming the reason, with the id when it
    // could be read.
    raw.raw.send(json!({"hello": "world"})).await;
    let invalid = raw.raw.recv().await;
    assert_eq!(invalid["id"], Value::Null);
    assert_eq!(invalid["error"]["code"], -32600);
    assert_eq!(
        invalid["error"]["message"],
        "Invalid request: `jsonrpc` must be \"2.0\". Send JSON-RPC 2.0 messages."
    );
    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 7, "params": {}}))
        .await;
    let no_method = raw.raw.recv().await;
    assert_eq!(no_method["id"], 7);
    assert_eq!(no_method["error"]["code"], -32600);
    assert!(
        no_method["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Invalid request: the message is neither a request")),
        "{no_method}"
    );
    // An unknown method: "Method not found" for its id.
    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}))
        .await;
    let unknown = raw.raw.recv().await;
    assert_eq!(unknown["id"], 1);
    assert_eq!(unknown["error"]["code"], -32601);

    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(
        raw.raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "read", "arguments": {"path": "a.txt"}}
        }))
        .await;
    assert_eq!(
        raw.raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "served\n"}],
            "isError": false
        }})
    );

    raw.raw.close_input();
    assert_eq!(raw.raw.recv_or_end().await, None);
    assert!(raw.server.exit_status().await.success());
}

#[tokio::test]
async fn end_of_input_ends_the_process_cleanly_and_leaves_no_processes_behind() {
    let mut raw = RawSession::start(None);
    raw.initialize().await;
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": {
                "command": "sleep 30 & echo $! > sleep.pid; echo $$ > shell.pid; wait"
            }}
        }))
        .await;
    let shell = wait_pid(&raw.server.path("shell.pid")).await;
    let sleep = wait_pid(&raw.server.path("sleep.pid")).await;
    assert!(running(shell) && running(sleep));

    let closed = Instant::now();
    raw.raw.close_input();
    // The call in flight is cancelled; its answer has no reader left and is not written
    // (some clients fail on a message after they closed the session), and stdout closes.
    assert_eq!(raw.raw.recv_or_end().await, None);
    let status = raw.server.exit_status().await;
    assert!(status.success(), "{status}");
    // Well before the 30 s sleep would have ended.
    assert!(closed.elapsed() < Duration::from_secs(15));
    wait_gone(&[shell, sleep], Duration::from_secs(5)).await;
}

#[tokio::test]
async fn background_jobs_of_finished_calls_do_not_outlive_the_server() {
    let session = Session::start(None).await;
    let result = session
        .call(
            "bash",
            json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
        )
        .await;
    let sleep: u32 = ok_text(&result).parse().expect("bash prints the job's pid");
    // The call is over, and its background job still runs.
    assert!(running(sleep));
    let result = session.call("bash", json!({"command": "echo later"})).await;
    assert_eq!(ok_text(&result), "later");
    assert!(running(sleep));

    let status = session.finish().await;
    assert!(status.success(), "{status}");
    wait_gone(&[sleep], Duration::from_secs(5)).await;
}

/// The `notifications/message` lines (level, logger, data) that arrive before the answer
/// to `id`, and that answer.
async fn logs_until(raw: &mut RawSession, id: i64) -> (Vec<(String, String, String)>, Value) {
    let mut logs = Vec::new();
    loop {
        let line = raw.raw.recv().await;
        if line["id"] == id {
            return (logs, line);
        }
        if line["method"] == "notifications/message" {
            let field = |name: &str| line["params"][name].as_str().unwrap_or_default().to_owned();
            logs.push((field("level"), field("logger"), field("data")));
        }
    }
}

/// While a bash call runs, each of its stderr lines reaches the client as a `warning` from
/// logger `bash` (a last line without a newline too, a long one in 4 KB pieces), while its
/// stdout does not; the model's output keeps both. A level above warning silences them.
#[tokio::test]
async fn bash_stderr_lines_reach_the_client_as_warnings_filtered_by_its_level() {
    let mut raw = RawSession::start(None);
    raw.initialize().await;
    let command = "echo out; echo 'first problem' >&2; sleep 0.05; echo out2; \
                   head -c 5000 /dev/zero | tr '\\0' x >&2; echo >&2; printf 'last' >&2";
    let bash = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": command}}})
    };
    raw.raw.send(bash(1)).await;
    let (logs, answer) = logs_until(&mut raw, 1).await;
    let warning = |data: &str| ("warning".to_owned(), "bash".to_owned(), data.to_owned());
    // A line longer than 4 KB comes in pieces of 4 KB.
    assert_eq!(
        logs,
        vec![
            warning("first problem"),
            warning(&"x".repeat(4096)),
            warning(&"x".repeat(904)),
            warning("last")
        ]
    );
    assert_eq!(answer["result"]["isError"], false);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .expect("a text result");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    let long = "x".repeat(5000);
    assert_eq!(
        lines,
        ["first problem", "last", "out", "out2", &long],
        "{text}"
    );

    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}))
        .await;
    assert_eq!(
        raw.raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    raw.raw.send(bash(3)).await;
    let (logs, answer) = logs_until(&mut raw, 3).await;
    assert_eq!(logs, Vec::new());
    assert_eq!(answer["result"]["isError"], false);
    raw.raw.close_input();
    assert!(raw.server.exit_status().await.success());
}
