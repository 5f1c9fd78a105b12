//! Arguments mirrored into HTTP headers (MCP 2026-07-28, SEP-2243), over Streamable HTTP in
//! process: a tool whose input schema marks `region` with `x-mcp-header` is called only when
//! the `Mcp-Param-Region` header says the same as the argument (plainly or in Base64); a
//! missing, different or malformed header is refused with `-32020` before the tool runs, and
//! a tool that marks nothing needs no such header.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_tools::mcp::{HttpOptions, McpTool, McpTools, serve_http};
use pi_tools::{AgentTool, BoxFuture, RunnerConfig, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Says where it would deploy; counts its runs.
struct Deploy {
    name: &'static str,
    runs: Arc<AtomicUsize>,
    schema: Value,
}

impl AgentTool for Deploy {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "Says where it would deploy."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute(
        &self,
        args: Value,
        _ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text(format!(
                "Would deploy to {}.",
                args["region"].as_str().unwrap_or("nowhere")
            )))
        })
    }
}

/// A server with `deploy` (its `region` mirrored into `Mcp-Param-Region`) and `plain` (the
/// same schema unmarked); its `/mcp` URL, the token that stops it and `deploy`'s runs.
async fn start() -> (String, CancellationToken, Arc<AtomicUsize>) {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let runs = Arc::new(AtomicUsize::new(0));
    let deploy = Deploy {
        name: "deploy",
        runs: Arc::clone(&runs),
        schema: json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"]
        }),
    };
    let plain = Deploy {
        name: "plain",
        runs: Arc::default(),
        schema: json!({
            "type": "object",
            "properties": {"region": {"type": "string"}},
            "required": ["region"]
        }),
    };
    let tools: McpTools = [deploy, plain]
        .into_iter()
        .map(|tool| McpTool::new(Arc::new(tool) as Arc<dyn AgentTool>))
        .collect();
    let stop = CancellationToken::new();
    tokio::spawn(serve_http(
        tools,
        RunnerConfig::default,
        listener,
        HttpOptions::default(),
        stop.clone(),
    ));
    (url, stop, runs)
}

/// A 2026-07-28 `tools/call` of `tool` with `region`, with `header` as `Mcp-Param-Region`
/// when given: the HTTP status and the JSON-RPC answer.
async fn call(url: &str, tool: &str, region: &str, header: Option<&str>) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool,
        "arguments": {"region": region},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "param-headers", "version": "0"}
        }
    }});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool);
    if let Some(header) = header {
        request = request.header("Mcp-Param-Region", header);
    }
    let response = request.body(body.to_string()).send().await.expect("sent");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    let answer = text
        .lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON message"))
        .find(|message| message.get("result").is_some() || message.get("error").is_some())
        .unwrap_or_else(|| panic!("an answer: {text}"));
    (status, answer)
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

#[tokio::test]
async fn a_mirrored_argument_needs_its_header_saying_the_same() {
    let (url, stop, runs) = start().await;
    // The header says the same, plainly or in Base64 (`=?base64?...?=`).
    let (status, answer) = call(&url, "deploy", "eu-west", Some("eu-west")).await;
    assert_eq!((status, text(&answer)), (200, "Would deploy to eu-west."));
    let (status, answer) = call(&url, "deploy", "eu-west", Some("=?base64?ZXUtd2VzdA==?=")).await;
    assert_eq!((status, text(&answer)), (200, "Would deploy to eu-west."));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // A different value, no header, or Base64 that is not: refused, and the tool not run.
    for header in [Some("us-east"), None, Some("=?base64?ZXUtd2VzdA?=")] {
        let (status, answer) = call(&url, "deploy", "eu-west", header).await;
        assert_eq!(
            (status, &answer["error"]["code"]),
            (400, &json!(-32020)),
            "{header:?}: {answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("Mcp-Param-Region"),
            "{header:?}: {message}"
        );
        // The library's words, made a sentence that says what to send.
        assert!(
            message.starts_with(|c: char| c.is_uppercase())
                && message.contains(". The request was not run. Over HTTP a 2026-07-28 request must carry `Mcp-Method`")
                && message.ends_with("; send them so."),
            "{header:?}: {message}"
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // A tool that marks nothing needs no header.
    let (status, answer) = call(&url, "plain", "eu-west", None).await;
    assert_eq!((status, text(&answer)), (200, "Would deploy to eu-west."));
    stop.cancel();
}
