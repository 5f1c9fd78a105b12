//! MCP 2026-07-28 beside 2025-11-25 on one stdio endpoint, in process over raw JSON-RPC
//! lines: a request naming the new version in its `_meta` needs no `initialize`, and a
//! policy `ask` becomes an input-required result whose signed `requestState` runs the call
//! once when retried with the person's answer.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_tools::config::Config;
use pi_tools::mcp::McpTools;
use pi_tools::toolbox::Toolbox;
use pi_tools::{RunnerConfig, ToolDefinition, ToolResult};
use serde_json::{Value, json};
use support::FakeTool;
use support::echo;
use support::mcp::RawPipe;

/// The `_meta` of a 2026-07-28 request; `capabilities` are the client's.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "era-test", "version": "0"},
    })
}

fn request(id: i64, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: i64, command: &str, extra: Value) -> Value {
    let mut params = json!({"name": "bash", "arguments": {"command": command}});
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    request(
        id,
        "tools/call",
        params,
        json!({"elicitation": {"form": {}}}),
    )
}

fn served(list: impl IntoIterator<Item = Arc<dyn pi_tools::AgentTool>>) -> pi_tools::mcp::McpTools {
    list.into_iter().map(pi_tools::mcp::McpTool::new).collect()
}

#[tokio::test]
async fn a_2026_request_is_served_over_stdio_without_initialize() {
    let mut pipe = RawPipe::start(served([echo("echo")]), RunnerConfig::default());

    pipe.send(request(1, "server/discover", json!({}), json!({})))
        .await;
    let discovered = pipe.recv().await;
    let versions = discovered["result"]["supportedVersions"].to_string();
    assert!(versions.contains("2026-07-28"), "{discovered}");
    assert!(versions.contains("2025-11-25"), "{discovered}");
    assert_eq!(
        discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "pi-tools",
        "{discovered}"
    );

    pipe.send(request(2, "tools/list", json!({}), json!({})))
        .await;
    let listed = pipe.recv().await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    assert_eq!(listed["result"]["tools"][0]["name"], "echo");
    // Caching hints: not to be cached beyond this answer, nor shared.
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "private", "{listed}");

    pipe.send(request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"i": 1}}),
        json!({}),
    ))
    .await;
    let called = pipe.recv().await;
    assert_eq!(called["result"]["resultType"], "complete", "{called}");
    assert_eq!(called["result"]["isError"], false, "{called}");

    // Removed in the stateless era: the level travels in each request's _meta.
    pipe.send(request(
        4,
        "logging/setLevel",
        json!({"level": "debug"}),
        json!({}),
    ))
    .await;
    let level = pipe.recv().await;
    assert_eq!(level["error"]["code"], -32601, "{level}");

    // A version neither era knows.
    let mut unknown = request(5, "tools/list", json!({}), json!({}));
    unknown["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    pipe.send(unknown).await;
    let refused = pipe.recv().await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    assert!(
        refused["error"]["data"]["supported"]
            .to_string()
            .contains("2026-07-28"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_session_opened_with_initialize_also_takes_2026_requests() {
    let mut pipe = RawPipe::start(served([echo("echo")]), RunnerConfig::default());
    let init = pipe.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "pi-tools", "{init}");
    pipe.send(request(7, "server/discover", json!({}), json!({})))
        .await;
    let discovered = pipe.recv().await;
    assert!(
        discovered["result"]["supportedVersions"]
            .to_string()
            .contains("2026-07-28"),
        "{discovered}"
    );
    // The session's own requests still need no _meta.
    pipe.send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}))
        .await;
    let listed = pipe.recv().await;
    assert_eq!(listed["result"]["tools"][0]["name"], "echo", "{listed}");
    assert!(listed["result"].get("resultType").is_none(), "{listed}");
}

fn asking_toolbox(runs: &Arc<AtomicUsize>) -> Toolbox {
    let counter = Arc::clone(runs);
    let shell: Arc<dyn ToolDefinition> = FakeTool::new("bash")
        .parameters(json!({
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"]
        }))
        .behaviour(move |_args, _ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text("ran"))
        })
        .arc();
    let registered = vec![shell];
    let toml = "[tools]\nactive = [\"bash\"]\n[[policy.rule]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\nreason = \"A person decides what is touched.\"\n";
    let config = Config::parse(toml, "pi-tools.toml", &registered).expect("valid");
    Toolbox::new(registered, &config, Default::default())
}

/// The key and request of an input-required result's one question, and its state.
fn question(answer: &Value) -> (String, Value, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let requests = result["inputRequests"].as_object().expect("input requests");
    assert_eq!(requests.len(), 1, "{answer}");
    let (key, request) = requests.iter().next().expect("one");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    (key.clone(), request.clone(), state)
}

fn allow(key: &str, state: &str) -> Value {
    json!({
        "inputResponses": {key: {"action": "accept", "content": {"answer": "allow_once"}}},
        "requestState": state,
    })
}

fn refusal(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    answer["error"]["message"]
        .as_str()
        .expect("a message")
        .to_owned()
}

#[tokio::test]
async fn a_policy_ask_for_a_2026_client_is_a_question_in_the_result_whose_answer_runs_the_call_once()
 {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = asking_toolbox(&runs);
    let mut pipe = RawPipe::start(McpTools::from(&toolbox), toolbox.runner_config());

    pipe.send(call(1, "touch a", json!({}))).await;
    let asked = pipe.recv().await;
    let (key, request, state) = question(&asked);
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    let message = request["params"]["message"].as_str().expect("a message");
    assert!(message.contains("touch a"), "{message}");
    assert!(message.contains("A person decides"), "{message}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "nothing ran before the answer"
    );

    // A response to another question.
    pipe.send(call(
        2,
        "touch a",
        json!({
            "inputResponses": {"approve-other": {"action": "accept", "content": {"answer": "allow_once"}}},
            "requestState": state,
        }),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert!(message.contains("not the question"), "{message}");

    // The state on other arguments.
    pipe.send(call(3, "touch b", allow(&key, &state))).await;
    let message = refusal(&pipe.recv().await);
    assert!(message.contains("given for another call"), "{message}");

    // A tampered state.
    let mut tampered = state.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    pipe.send(call(4, "touch a", allow(&key, &tampered))).await;
    let message = refusal(&pipe.recv().await);
    assert!(
        message.contains("not made by this server process"),
        "{message}"
    );

    // A foreign state: the same shape, signed with another key.
    let foreign = rmcp::model::RequestStateCodec::try_new(vec![7u8; 32])
        .expect("a key")
        .seal(b"{}");
    pipe.send(call(5, "touch a", allow(&key, &foreign))).await;
    let message = refusal(&pipe.recv().await);
    assert!(
        message.contains("not made by this server process"),
        "{message}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran for a refusal");

    // The answer: the call runs, once.
    pipe.send(call(6, "touch a", allow(&key, &state))).await;
    let ran = pipe.recv().await;
    assert_eq!(ran["result"]["resultType"], "complete", "{ran}");
    assert_eq!(ran["result"]["content"][0]["text"], "ran", "{ran}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Replayed.
    pipe.send(call(7, "touch a", allow(&key, &state))).await;
    let message = refusal(&pipe.recv().await);
    assert!(message.contains("already used"), "{message}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the call ran once");

    // Declined: denied, nothing ran.
    pipe.send(call(8, "touch c", json!({}))).await;
    let (key, _, state) = question(&pipe.recv().await);
    pipe.send(call(
        9,
        "touch c",
        json!({"inputResponses": {key: {"action": "decline"}}, "requestState": state}),
    ))
    .await;
    let denied = pipe.recv().await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_2026_client_without_elicitation_is_denied_without_a_question() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = asking_toolbox(&runs);
    let mut pipe = RawPipe::start(McpTools::from(&toolbox), toolbox.runner_config());
    pipe.send(request(
        1,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "touch a"}}),
        json!({}),
    ))
    .await;
    let denied = pipe.recv().await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    let text = denied["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("did not declare the elicitation"), "{text}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
