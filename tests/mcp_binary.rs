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

mod concurrency;
mod endings;
mod jobs;
mod refusals;
mod streaming;
mod tasks_2025;

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

    /// A bash call that leaves a background job (`sleep 30`) and ends; the job's pid.
    async fn background_job(&self) -> u32 {
        let result = self
            .call(
                "bash",
                json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
            )
            .await;
        ok_text(&result).parse().expect("bash prints the job's pid")
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
                    definition.spec().description
                )
            } else {
                definition.spec().description.to_owned()
            };
            json!({
                "name": name,
                "title": definition.spec().label,
                "description": description,
                "inputSchema": definition.spec().parameters,
                "outputSchema": definition.spec().output_schema,
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
    let refused = tokio::time::timeout(
        PATIENCE,
        session
            .client
            .call_tool(params("grep", json!({"pattern": "x"}))),
    )
    .await
    .expect("the server answers in time")
    .expect_err("a tool that is not active is no result");
    let rmcp::ServiceError::McpError(error) = refused else {
        panic!("a JSON-RPC error, got {refused:?}");
    };
    assert_eq!(error.code.0, -32602);
    // grep is registered but off by default: the error says which key turns it on.
    assert_eq!(
        error.message,
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
async fn the_system_prompt_is_offered_as_an_mcp_prompt() {
    let session = Session::start(None).await;
    let info = session.client.peer_info().expect("the handshake is done");
    assert!(info.capabilities.prompts.is_some());
    let prompts = session.client.list_all_prompts().await.expect("listed");
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["system_prompt"]);
    let prompt = session
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("system_prompt"))
        .await
        .expect("fetched");
    let text = serde_json::to_value(&prompt.messages[0]).expect("serializable");
    assert_eq!(text["role"], "user");
    let text = text["content"]["text"].as_str().expect("a text message");
    // The system prompt's two sections, as `pi-tools prompt` prints them.
    assert!(text.starts_with("Available tools:\n- read: "), "{text}");
    assert!(text.contains("\n\nGuidelines:\n- "), "{text}");
    assert!(session.finish().await.success());
}
