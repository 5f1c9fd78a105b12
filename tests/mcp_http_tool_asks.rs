//! A tool's own questions over Streamable HTTP, in process: in a 2025-11-25 session the
//! question is an `elicitation/create` request on the call's event stream, answered by a
//! POST of the client's response; a 2026-07-28 request gets an input-required result and its
//! retry the tool's answer.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::mcp_tool_asks::Asking;
use std::time::Duration;

use pi_tools::RunnerConfig;
use pi_tools::mcp::{HttpOptions, McpTool, McpTools, serve_http};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A server of `greet` on a free port: its `/mcp` URL and the token that stops it.
async fn start(runs: &Arc<AtomicUsize>) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    // The in-process tests' `greet`, which asks the person's name and counts its runs.
    let tools: McpTools = [McpTool::new(Asking::tool("greet", runs))]
        .into_iter()
        .collect();
    let stop = CancellationToken::new();
    tokio::spawn(serve_http(
        tools,
        RunnerConfig::default,
        listener,
        HttpOptions::default(),
        stop.clone(),
    ));
    (url, stop)
}

fn client() -> reqwest::Client {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut request = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-11-25");
    }
    request
}

/// Reads JSON-RPC messages from a response, a JSON body or an event stream, one at a time.
struct Messages {
    response: reqwest::Response,
    buffer: String,
}

impl Messages {
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find('\n') {
                let line: String = self.buffer.drain(..=end).collect();
                let line = line.trim();
                let data = line.strip_prefix("data:").map(str::trim).unwrap_or(line);
                if data.starts_with('{') {
                    return Some(serde_json::from_str(data).expect("a JSON message"));
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("the server answers in time")
                .expect("the body is readable");
            match chunk {
                Some(bytes) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                None if self.buffer.trim().is_empty() => return None,
                None => self.buffer.push('\n'),
            }
        }
    }
}

#[tokio::test]
async fn a_tool_asks_a_2025_session_over_http_on_the_calls_stream() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (url, stop) = start(&runs).await;
    let http = client();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "http-asks", "version": "0"}}});
    let response = post(&http, &url, None, &initialize)
        .send()
        .await
        .expect("sent");
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("ascii")
        .to_owned();
    let _ = response.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&http, &url, Some(&session), &initialized)
        .send()
        .await
        .expect("sent");

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet", "arguments": {}}});
    let response = post(&http, &url, Some(&session), &call)
        .send()
        .await
        .expect("sent");
    let mut stream = Messages {
        response,
        buffer: String::new(),
    };
    let question = loop {
        let message = stream
            .next()
            .await
            .expect("the question comes on the call's stream");
        if message["method"] == "elicitation/create" {
            break message;
        }
    };
    assert_eq!(
        question["params"]["message"], "What is your name?",
        "{question}"
    );
    assert_eq!(
        question["params"]["requestedSchema"]["required"],
        json!(["name"]),
        "{question}"
    );
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "Ada"}}});
    let accepted = post(&http, &url, Some(&session), &answer)
        .send()
        .await
        .expect("sent");
    assert_eq!(accepted.status(), 202);
    let result = loop {
        let message = stream.next().await.expect("the result follows");
        if message["id"] == 1 {
            break message;
        }
    };
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, Ada!",
        "{result}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "a session needs no re-run");
    stop.cancel();
}

#[tokio::test]
async fn a_tool_asks_a_2026_client_over_http_with_the_calls_result() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (url, stop) = start(&runs).await;
    let http = client();
    let call = |id: i64, extra: Value| {
        let mut params = json!({"name": "greet", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "http-asks", "version": "0"}}});
        if let Value::Object(extra) = extra {
            for (k, v) in extra {
                params[k] = v;
            }
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    let send = |body: Value| {
        let request = post(&http, &url, None, &body)
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "greet");
        async move {
            let response = request.send().await.expect("sent");
            let status = response.status();
            let mut messages = Messages {
                response,
                buffer: String::new(),
            };
            loop {
                let message = messages.next().await.expect("an answer");
                if message["id"] == body["id"] {
                    return (status, message);
                }
            }
        }
    };

    let (_, asked) = send(call(1, json!({}))).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert_eq!(
        asked["result"]["inputRequests"]["elicitation-1"]["method"],
        "elicitation/create"
    );
    let state = asked["result"]["requestState"]
        .as_str()
        .expect("a state")
        .to_owned();
    let answer = json!({
        "inputResponses": {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state,
    });
    let (_, answered) = send(call(2, answer.clone())).await;
    assert_eq!(
        answered["result"]["content"][0]["text"], "Hello, Ada!",
        "{answered}"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "asked, then run again with the answer"
    );

    let (status, replayed) = send(call(3, answer)).await;
    // A JSON-RPC error of the call, as a refused policy answer is (HTTP 400 is for a
    // malformed `_meta` or an undeclared capability).
    assert_eq!(status, 200, "{replayed}");
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already used")),
        "{replayed}"
    );
    stop.cancel();
}
