//! A mounted server whose tool list changes (`changing_server.py`: a call of `grow` swaps
//! its tool `old` for `fresh` and sends `notifications/tools/list_changed`): the gateway
//! lists and calls the new tool, a call of the removed one says it is no longer offered, a
//! 2025-11-25 session is told, and a 2026-07-28 request sees the new list (a 2026-07-28
//! `subscriptions/listen` is told too: see `listening`); a tool set taken before the
//! change says the same of the removed tool.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use pi_tools::config::ServerSettings;
use pi_tools::mount::McpServerTools;
use pi_tools::{CollectingSink, RunnerConfig, ToolCall, ToolSet, execute_tool_calls};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::mount_support::{Setup, toml_list};
use crate::mcp_http_support::{Events, HttpServer, messages, request_2026};
use support::cli_under_test;
use support::spawn::JsonLines;

/// How long the gateway may take to hear of the change and list the tools again.
pub(super) const PATIENCE: Duration = Duration::from_secs(30);

/// The sentence a call of the removed tool gets.
const GONE: &str = "Tool changing__old is no longer offered: the MCP server `changing` took it out of its tool list. List the tools again and call one of those.";

pub(super) fn command() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mount/changing_server.py");
    vec![
        "python3".to_owned(),
        "-u".to_owned(),
        script.to_str().expect("a UTF-8 path").to_owned(),
    ]
}

pub(super) fn config() -> String {
    format!(
        "[tools]\nactive = [\"changing__*\"]\n\n[mcp.servers.changing]\ncommand = {}\nstartup_timeout_secs = 60\n",
        toml_list(&command())
    )
}

pub(super) fn names(listed: &Value) -> Vec<String> {
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {listed}"))
        .iter()
        .map(|t| t["name"].as_str().expect("a name").to_owned())
        .collect()
}

pub(super) fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

/// `pi-tools mcp` over stdio, every line it writes kept in order of arrival.
pub(super) struct Gateway {
    pub(super) child: std::process::Child,
    /// The gateway's input, until [`Gateway::close_input`].
    pub(super) stdin: Option<std::process::ChildStdin>,
    pub(super) out: JsonLines,
}

impl Gateway {
    pub(super) fn start(setup: &Setup) -> Gateway {
        let mut command = std::process::Command::new(cli_under_test());
        command
            .arg("--config")
            .arg(setup.config())
            .arg("mcp")
            .current_dir(setup.work.path());
        Gateway::spawn(command)
    }

    /// Starts `command`, the gateway with its arguments and working directory.
    pub(super) fn spawn(mut command: std::process::Command) -> Gateway {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the gateway starts");
        let stdin = child.stdin.take().expect("stdin");
        let out = JsonLines::read(child.stdout.take().expect("stdout"), PATIENCE);
        Gateway {
            child,
            stdin: Some(stdin),
            out,
        }
    }

    /// The next line matching `wanted`, kept or read within [`PATIENCE`].
    pub(super) fn wait(&mut self, wanted: impl Fn(&Value) -> bool, what: &str) -> Value {
        self.out.wait(wanted, what)
    }

    /// Writes one message as a line.
    pub(super) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("the input is open");
        writeln!(stdin, "{message}").expect("the gateway reads");
    }

    /// Ends the gateway's input, as a client that leaves does.
    pub(super) fn close_input(&mut self) {
        self.stdin = None;
    }

    pub(super) fn request(&mut self, message: Value) -> Value {
        self.send(&message);
        let id = message["id"].clone();
        self.wait(|line| line["id"] == id, "answer")
    }

    pub(super) fn call(&mut self, id: i64, name: &str) -> Value {
        self.request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {}}}))
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_changed_tool_list_reaches_a_2025_session_and_a_2026_request_over_stdio() {
    let setup = Setup::new(&config());
    let mut gateway = Gateway::start(&setup);
    let initialized = gateway.request(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}));
    assert_eq!(
        initialized["result"]["capabilities"]["tools"],
        json!({"listChanged": true}),
        "{initialized}"
    );
    gateway.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let listed = gateway.request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(names(&listed), ["changing__grow", "changing__old"]);
    assert_eq!(text(&gateway.call(3, "changing__old")), "old called");
    assert_eq!(text(&gateway.call(4, "changing__grow")), "grown");

    let told = gateway.wait(
        |line| line["method"] == "notifications/tools/list_changed",
        "notifications/tools/list_changed",
    );
    assert!(told.get("id").is_none(), "{told}");
    let listed = gateway.request(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    assert_eq!(names(&listed), ["changing__grow", "changing__fresh"]);
    let fresh = gateway.call(6, "changing__fresh");
    assert_eq!(fresh["result"]["isError"], false, "{fresh}");
    assert_eq!(text(&fresh), "fresh called");
    let old = gateway.call(7, "changing__old");
    assert_eq!(old["error"]["code"], -32602, "{old}");
    assert_eq!(old["error"]["message"], GONE, "{old}");

    // A request of the stateless era reads the list anew, and is told not to keep it.
    let listed = gateway.request(request_2026(8, "tools/list", json!({}), &json!({})));
    assert_eq!(names(&listed), ["changing__grow", "changing__fresh"]);
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "private", "{listed}");
    // One change, one notification.
    assert!(
        !gateway
            .out
            .seen
            .iter()
            .any(|l| l["method"] == "notifications/tools/list_changed"),
        "{:?}",
        gateway.out.seen
    );
}

#[tokio::test]
async fn a_2025_http_session_is_told_on_its_stream_and_lists_the_new_tools() {
    let server = HttpServer::spawn_with(None, &[], Some(&config())).await;
    let session = server.open_session().await;
    let stream = server
        .stream(&session)
        .send()
        .await
        .expect("the session's stream opens");
    assert_eq!(stream.status(), 200);
    let mut events = Events::new(stream);
    let list = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
    let listed = |id: i64| {
        let request = server.post(Some(&session), &list(id));
        async move {
            let all = messages(request.send().await.expect("sent")).await;
            all.into_iter().find(|m| m["id"] == id).expect("an answer")
        }
    };
    assert_eq!(names(&listed(1).await), ["changing__grow", "changing__old"]);
    let grown = server.call(&session, 2, "changing__grow", json!({})).await;
    assert_eq!(text(&grown), "grown");
    let told = loop {
        let event = events.next().await.expect("the stream stays open");
        if event["method"] == "notifications/tools/list_changed" {
            break event;
        }
    };
    assert!(told.get("id").is_none(), "{told}");
    assert_eq!(
        names(&listed(3).await),
        ["changing__grow", "changing__fresh"]
    );
    let fresh = server.call(&session, 4, "changing__fresh", json!({})).await;
    assert_eq!(text(&fresh), "fresh called");
}

#[tokio::test]
async fn a_stateless_http_server_lists_and_calls_the_new_tools() {
    let server = HttpServer::spawn_with(None, &[], Some(&config())).await;
    let capabilities = json!({});
    let (listed, _, _) = server
        .post_2026(&request_2026(1, "tools/list", json!({}), &capabilities))
        .await;
    assert_eq!(names(&listed), ["changing__grow", "changing__old"]);
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed}");
    let grow = json!({"name": "changing__grow", "arguments": {}});
    let (grown, _, _) = server
        .post_2026(&request_2026(2, "tools/call", grow, &capabilities))
        .await;
    assert_eq!(text(&grown), "grown");
    // No notification reaches a stateless client: it sees the change when it lists again.
    let deadline = Instant::now() + PATIENCE;
    let mut id = 3;
    let listed = loop {
        let (listed, _, _) = server
            .post_2026(&request_2026(id, "tools/list", json!({}), &capabilities))
            .await;
        id += 1;
        if names(&listed) != ["changing__grow", "changing__old"] || Instant::now() > deadline {
            break listed;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(names(&listed), ["changing__grow", "changing__fresh"]);
    let fresh = json!({"name": "changing__fresh", "arguments": {}});
    let (fresh, _, _) = server
        .post_2026(&request_2026(id, "tools/call", fresh, &capabilities))
        .await;
    assert_eq!(text(&fresh), "fresh called");
    let old = json!({"name": "changing__old", "arguments": {}});
    let (old, _, _) = server
        .post_2026(&request_2026(id + 1, "tools/call", old, &capabilities))
        .await;
    assert_eq!(old["error"]["message"], GONE, "{old}");
}

/// The changing server mounted in a tool set of the library (`--flood` among `args`).
async fn mounted(args: &[&str]) -> (McpServerTools, ToolSet) {
    let mut command = command();
    command.extend(args.iter().map(|a| (*a).to_owned()));
    let mut settings = ServerSettings::stdio("changing", command);
    settings.startup_timeout = Duration::from_secs(60);
    let server = McpServerTools::connect(settings)
        .await
        .expect("the changing server starts");
    let mut tools = ToolSet::new([]);
    server.add_to(&mut tools);
    (server, tools)
}

/// One call of `name` without arguments through the runner: its result message.
async fn call_in(tools: &ToolSet, name: &str) -> Value {
    let outcome = execute_tool_calls(
        tools,
        &[ToolCall::new("c", name, json!({}))],
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await;
    serde_json::to_value(&outcome.messages[0]).expect("JSON")
}

#[tokio::test]
async fn a_tool_set_taken_before_the_change_says_the_removed_tool_is_gone() {
    let (server, tools) = mounted(&[]).await;
    let call = |name: &'static str| call_in(&tools, name);
    let grown = call("changing__grow").await;
    assert_eq!(grown["content"][0]["text"], "grown", "{grown}");
    // The server's notification is heard apart from the call's answer.
    let deadline = Instant::now() + PATIENCE;
    let old = loop {
        let old = call("changing__old").await;
        // Until then, the server itself refuses the tool it no longer lists.
        if old["content"][0]["text"] == GONE || Instant::now() > deadline {
            break old;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(old["isError"], true, "{old}");
    assert_eq!(old["content"][0]["text"], GONE, "{old}");
    server.end().await;
}

#[tokio::test]
async fn a_flood_of_list_changes_costs_one_listing_at_a_time_not_one_each() {
    let (server, tools) = mounted(&["--flood"]).await;
    let tools = &tools;
    let call = |name: &'static str| async move {
        let message = call_in(tools, name).await;
        message["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("a text result: {message}"))
            .to_owned()
    };
    let before: u32 = call("changing__lists").await.parse().expect("a count");
    assert_eq!(call("changing__flood").await, "flooded");
    // The 500 notifications all come before the answer to the first listing they cause:
    // notifications that find a listing asked for and not begun ask for none, so one
    // listing runs and at most one more waits. The count settles when both are done.
    let deadline = Instant::now() + PATIENCE;
    let mut after: u32 = call("changing__lists").await.parse().expect("a count");
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now: u32 = call("changing__lists").await.parse().expect("a count");
        if (now == after && now > before) || Instant::now() > deadline {
            break;
        }
        after = now;
    }
    assert!(
        (before + 1..=before + 2).contains(&after),
        "500 notifications caused {} listings",
        after - before
    );
    // The server still answers, and its tools stay.
    assert_eq!(call("changing__grow").await, "grown");
    server.end().await;
}
