//! The MCP server, in process: handshake, listing, calls through the runner's pipeline,
//! progress, cancellation, the session lock and robustness against bad input.
#![cfg(feature = "mcp")]

use support::mcp as mcp_support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_support::{PATIENCE, RawPipe, connect};
use pi_tools::dialect::{Dialect, tool_schema};
use pi_tools::mcp::{McpTool, McpTools};
use pi_tools::{
    BeforeToolCallContext, BeforeToolCallOutcome, ContentBlock, RunnerConfig, ToolCall,
    ToolDefinition, ToolError, ToolResult, ToolSet, execute_tool_calls, wrap,
};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use support::{FakeTool, Scripted, echo, schema};
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

mod prompts;
mod robustness;

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

fn params(tool: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(args(arguments))
}

/// The result's content as wire JSON, plus its `isError`.
fn wire(result: &CallToolResult) -> (Value, bool) {
    let value = serde_json::to_value(result).expect("a result serialises");
    (value["content"].clone(), result.is_error == Some(true))
}

fn only_text(result: &CallToolResult) -> String {
    let (content, _) = wire(result);
    match content.as_array().map(Vec::as_slice) {
        Some([block]) if block["type"] == "text" => {
            block["text"].as_str().expect("text is a string").to_owned()
        }
        _ => panic!("expected one text block, got {content}"),
    }
}

fn tools(list: impl IntoIterator<Item = McpTool>) -> McpTools {
    list.into_iter().collect()
}

/// Issue: a server of one's own was always "pi-tools" with no instructions unless set by
/// hand, and serving a toolbox took a loop. One call gives the toolbox's tools with the
/// prompt's guidelines as instructions; the name and version are the program's.
#[tokio::test]
async fn a_toolbox_serves_itself_under_the_programs_name_with_its_guidelines() {
    let registered: Vec<Arc<dyn ToolDefinition>> = vec![
        Arc::new(FakeTool::new("lookup").guidelines(&["Use lookup before guessing."])),
        Arc::new(FakeTool::new("note")),
    ];
    let config = pi_tools::config::Config::parse(
        "[tools]\nactive = [\"lookup\", \"note\"]\n",
        "pi-tools.toml",
        &registered,
    )
    .expect("valid");
    let toolbox = pi_tools::toolbox::Toolbox::new(registered, &config, Default::default());
    let served = McpTools::from(&toolbox).with_server_info("my-agent", "2.3.4");
    assert_eq!(served.server_info(), ("my-agent", "2.3.4"));
    let session = connect(served, toolbox.runner_config()).await;
    let info = session.client.peer_info().expect("the handshake is done");
    let server = info.server_info.as_ref().expect("the server names itself");
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        ("my-agent", "2.3.4")
    );
    assert_eq!(
        info.instructions.as_deref(),
        Some("Guidelines:\n- Use lookup before guessing.")
    );
    let names: Vec<String> = session
        .client
        .list_all_tools()
        .await
        .expect("tools/list answers")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["lookup", "note"]);
}

#[tokio::test]
async fn initialize_names_the_server_and_lists_tools_with_canonical_schemas_and_hints() {
    let reader = echo("read");
    let writer = Scripted::new("write", |_a, _c| async { Ok(ToolResult::text("w")) }).arc();
    let plain = echo("plain");
    let served = tools([
        McpTool::new(reader.clone()).title("Read").read_only(true),
        McpTool::new(writer.clone())
            .title("Write")
            .destructive(true),
        McpTool::new(plain.clone()),
    ]);
    let session = connect(served, RunnerConfig::default()).await;

    let info = session.client.peer_info().expect("the handshake is done");
    let server = info.server_info.as_ref().expect("the server names itself");
    assert_eq!(server.name, "pi-tools");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some());

    let listed = session
        .client
        .list_all_tools()
        .await
        .expect("tools/list answers");
    let listed: Vec<Value> = listed
        .iter()
        .map(|t| serde_json::to_value(t).expect("a tool serialises"))
        .collect();
    assert_eq!(
        listed,
        vec![
            json!({
                "name": "read", "title": "Read", "description": "A scripted test tool.",
                "inputSchema": reader.parameters(),
                "annotations": {"readOnlyHint": true}
            }),
            json!({
                "name": "write", "title": "Write", "description": "A scripted test tool.",
                "inputSchema": writer.parameters(),
                "annotations": {"readOnlyHint": false, "destructiveHint": true}
            }),
            // A tool of one's own with no label: its name is its title.
            json!({
                "name": "plain", "title": "plain", "description": "A scripted test tool.",
                "inputSchema": plain.parameters(),
            }),
        ]
    );
    assert_eq!(listed[0]["inputSchema"], schema());
}

/// `pi-tools schema --dialect mcp` (`tool_schema`) and the server's `tools/list` (what
/// `pi-tools mcp` serves: `McpTool::with_definition`) list a definition alike, whether it
/// has a label and hints or none.
#[tokio::test]
async fn tools_list_and_the_mcp_dialect_list_a_definition_alike() {
    let definitions: Vec<Arc<dyn ToolDefinition>> = vec![
        Arc::new(FakeTool::new("plain")),
        Arc::new(FakeTool::new("labelled").label("Labelled")),
        Arc::new(FakeTool::new("reader").read_only()),
        Arc::new(FakeTool::new("remover").label("Remover").destructive()),
    ];
    let served: McpTools = definitions
        .iter()
        .map(|def| McpTool::with_definition(wrap(Arc::clone(def), None), def.as_ref()))
        .collect();
    let session = connect(served, RunnerConfig::default()).await;
    let listed: Vec<Value> = session
        .client
        .list_all_tools()
        .await
        .expect("tools/list answers")
        .iter()
        .map(|t| serde_json::to_value(t).expect("a tool serialises"))
        .collect();
    let dialect: Vec<Value> = definitions
        .iter()
        .map(|def| tool_schema(def.as_ref(), Dialect::Mcp).expect("an object schema"))
        .collect();
    assert_eq!(listed, dialect);
    // No label and no hints: the name as the title (as a client shows the built-ins'), and
    // no annotations (MCP's defaults apply).
    assert_eq!(
        listed[0],
        json!({
            "name": "plain",
            "title": "plain",
            "description": "The plain tool.",
            "inputSchema": {"type": "object", "properties": {}, "required": []}
        })
    );
    assert_eq!(listed[1]["title"], "Labelled");
    assert!(listed[1].get("annotations").is_none());
    assert_eq!(listed[2]["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(listed[2]["title"], "reader");
    assert_eq!(
        listed[3]["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
}

#[tokio::test]
async fn a_call_returns_the_tools_text_and_images() {
    let pictured = Scripted::new("picture", |args, _ctx| async move {
        Ok(ToolResult {
            content: vec![
                ContentBlock::text(format!("picture {}", args["i"])),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ],
            details: json!({"for": "the UI only"}),
            ..ToolResult::default()
        })
    })
    .arc();
    let session = connect(
        tools([McpTool::new(echo("echo")), McpTool::new(pictured)]),
        RunnerConfig::default(),
    )
    .await;

    let result = session
        .client
        .call_tool(params("echo", json!({"i": 7})))
        .await
        .expect("tools/call answers");
    assert_eq!(result.is_error, Some(false));
    assert_eq!(only_text(&result), "ok 7");
    assert_eq!(result.structured_content, None);

    let result = session
        .client
        .call_tool(params("picture", json!({"i": 1})))
        .await
        .expect("tools/call answers");
    assert_eq!(
        wire(&result),
        (
            json!([
                {"type": "text", "text": "picture 1"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ]),
            false
        )
    );
    assert_eq!(result.structured_content, None);
}

#[tokio::test]
async fn invalid_arguments_are_an_error_result_listing_every_violation() {
    let tool = echo("echo");
    let bad = json!({"note": {"not": "a string"}});
    let expected = execute_tool_calls(
        &ToolSet::new([tool.clone()]),
        &[ToolCall::new("x", "echo", bad.clone())],
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &pi_tools::NoopSink,
    )
    .await
    .messages
    .remove(0);
    let session = connect(tools([McpTool::new(tool)]), RunnerConfig::default()).await;

    let result = session
        .client
        .call_tool(params("echo", bad))
        .await
        .expect("tools/call answers");
    assert_eq!(result.is_error, Some(true));
    let text = only_text(&result);
    assert_eq!(text, support::text_of(&expected));
    let violations: Vec<&str> = text.lines().filter(|l| l.starts_with("  - ")).collect();
    assert_eq!(violations.len(), 2, "{text}");
    assert!(violations[0].starts_with("  - i:"), "{text}");
    assert!(violations[1].starts_with("  - note:"), "{text}");
}

#[tokio::test]
async fn unknown_tools_are_protocol_errors_failures_and_blocking_hooks_error_results() {
    let failing = Scripted::new("failing", |_a, _c| async {
        Err(ToolError::new(
            "The disk is full. Free some space and try again.",
        ))
    })
    .arc();
    let config = RunnerConfig {
        before_tool_call: Some(Arc::new(|ctx: BeforeToolCallContext| async move {
            Ok(if ctx.call.name == "guarded" {
                BeforeToolCallOutcome::Block {
                    reason: Some("Not in this directory.".to_owned()),
                }
            } else {
                BeforeToolCallOutcome::Continue
            })
        })),
        ..RunnerConfig::default()
    };
    let session = connect(
        tools([
            McpTool::new(failing),
            McpTool::new(echo("guarded")),
            McpTool::new(echo("echo")),
        ]),
        config,
    )
    .await;

    // An unknown tool is a protocol error naming the tools served.
    let refused = session
        .client
        .call_tool(params("nope", json!({"i": 1})))
        .await
        .expect_err("an unknown tool is no result");
    let rmcp::ServiceError::McpError(error) = refused else {
        panic!("a JSON-RPC error, got {refused:?}");
    };
    assert_eq!(error.code.0, -32602);
    assert_eq!(
        error.message,
        "Unknown tool `nope`. The tools are: failing, guarded, echo. Call one of them by its exact name."
    );
    for (tool, text) in [
        (
            "failing",
            "The disk is full. Free some space and try again.",
        ),
        ("guarded", "Not in this directory."),
    ] {
        let result = session
            .client
            .call_tool(params(tool, json!({"i": 1})))
            .await
            .expect("tools/call answers with a result, not a protocol error");
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert_eq!(only_text(&result), text);
    }
    let result = session
        .client
        .call_tool(params("echo", json!({"i": 2})))
        .await
        .expect("tools/call answers");
    assert_eq!(only_text(&result), "ok 2");
}

/// Sends a tools/call through the progress-aware request API; returns the request handle's
/// progress token and the awaited result.
async fn call_with_progress(
    session: &mcp_support::Session,
    params: CallToolRequestParams,
) -> (rmcp::model::ProgressToken, CallToolResult) {
    let handle = session
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("the request is sent");
    let token = handle.progress_token.clone();
    match handle.await_response().await.expect("tools/call answers") {
        ServerResult::CallToolResult(result) => (token, result),
        other => panic!("expected a tool result, got {other:?}"),
    }
}

#[tokio::test]
async fn updates_become_progress_notifications_for_the_requests_token() {
    let ticker = Scripted::new("ticker", |_args, ctx| async move {
        for n in 1..=3 {
            ctx.update(ToolResult::text(format!("tick {n}")));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Ok(ToolResult::text("done"))
    })
    .arc();
    let mut session = connect(tools([McpTool::new(ticker)]), RunnerConfig::default()).await;

    let (token, result) = call_with_progress(&session, params("ticker", json!({"i": 1}))).await;
    assert_eq!(only_text(&result), "done");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let note = tokio::time::timeout(PATIENCE, session.progress.recv())
            .await
            .expect("progress arrives in time")
            .expect("the client is running");
        seen.push(note);
    }
    for (n, note) in seen.iter().enumerate() {
        assert_eq!(note.progress_token, token);
        assert_eq!(note.progress, (n + 1) as f64);
        assert_eq!(
            note.message.as_deref(),
            Some(format!("tick {}", n + 1).as_str())
        );
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        session.progress.try_recv().is_err(),
        "one notification per update"
    );
}

#[tokio::test]
async fn a_burst_of_status_updates_is_coalesced_into_the_first_and_the_last() {
    let burst = Scripted::new("burst", |_args, ctx| async move {
        for n in 1..=20 {
            ctx.update(ToolResult::text(format!("line {n}")));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(ToolResult::text("done"))
    })
    .arc();
    let mut session = connect(tools([McpTool::new(burst)]), RunnerConfig::default()).await;

    let (token, result) = call_with_progress(&session, params("burst", json!({"i": 1}))).await;
    assert_eq!(only_text(&result), "done");
    let mut notes = Vec::new();
    while let Ok(Some(note)) =
        tokio::time::timeout(Duration::from_millis(300), session.progress.recv()).await
    {
        notes.push(note);
    }
    // Notifications reach the test in tasks of their own: put them in the server's order.
    notes.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    // Each update replaces the one before (they do not continue each other): what goes out
    // is at most the first and, coalesced, the last, never the ones between.
    assert!(!notes.is_empty() && notes.len() <= 2, "{notes:?}");
    for (n, note) in notes.iter().enumerate() {
        assert_eq!(note.progress_token, token);
        assert_eq!(note.progress, (n + 1) as f64);
    }
    assert_eq!(
        notes.last().and_then(|n| n.message.as_deref()),
        Some("line 20")
    );
    if notes.len() == 2 {
        assert_eq!(notes[0].message.as_deref(), Some("line 1"));
    }
}

#[tokio::test]
async fn a_cancelled_call_ends_and_its_tool_sees_the_token_cancelled() {
    let entered = Arc::new(Notify::new());
    let (observed_tx, observed_rx) = oneshot::channel::<bool>();
    let observed_tx = Arc::new(Mutex::new(Some(observed_tx)));
    let signal = entered.clone();
    let waiter = Scripted::new("wait", move |_args, ctx| {
        let signal = signal.clone();
        let observed_tx = observed_tx.clone();
        async move {
            signal.notify_one();
            let cancelled = tokio::time::timeout(PATIENCE, ctx.cancellation().cancelled())
                .await
                .is_ok();
            if let Some(tx) = observed_tx.lock().unwrap().take() {
                let _ = tx.send(cancelled && ctx.is_cancelled());
            }
            Ok(ToolResult::text("stopped"))
        }
    })
    .arc();
    let session = connect(
        tools([McpTool::new(waiter), McpTool::new(echo("echo"))]),
        RunnerConfig::default(),
    )
    .await;

    let handle = session
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params("wait", json!({"i": 1})))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("the request is sent");
    tokio::time::timeout(PATIENCE, entered.notified())
        .await
        .expect("the tool starts");
    let started = Instant::now();
    handle
        .cancel(Some("the user pressed stop".to_owned()))
        .await
        .expect("the cancellation is sent");
    let observed = tokio::time::timeout(PATIENCE, observed_rx)
        .await
        .expect("the tool ends in time")
        .expect("the tool reports");
    assert!(observed, "the tool's token was cancelled");
    assert!(started.elapsed() < PATIENCE);

    let result = session
        .client
        .call_tool(params("echo", json!({"i": 3})))
        .await
        .expect("the session goes on");
    assert_eq!(only_text(&result), "ok 3");
}

/// Enter and exit times of each call, by tool name.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<(String, Instant, Instant)>>>);

fn timed(name: &str, spans: &Spans, sequential: bool) -> McpTool {
    let spans = spans.clone();
    let tool_name = name.to_owned();
    let tool = Scripted::new(name, move |_args, _ctx| {
        let spans = spans.clone();
        let tool_name = tool_name.clone();
        async move {
            let enter = Instant::now();
            tokio::time::sleep(Duration::from_millis(80)).await;
            spans
                .0
                .lock()
                .unwrap()
                .push((tool_name, enter, Instant::now()));
            Ok(ToolResult::text("ok"))
        }
    });
    McpTool::new(if sequential { tool.sequential() } else { tool }.arc())
}

#[tokio::test]
async fn a_sequential_tool_never_overlaps_another_call() {
    let spans = Spans::default();
    let session = connect(
        tools([timed("par", &spans, false), timed("seq", &spans, true)]),
        RunnerConfig::default(),
    )
    .await;

    let names = ["par", "par", "seq", "par", "par", "seq", "par", "par"];
    let calls = names
        .iter()
        .map(|name| session.client.call_tool(params(name, json!({"i": 1}))));
    for result in futures::future::join_all(calls).await {
        assert_eq!(only_text(&result.expect("tools/call answers")), "ok");
    }

    let spans = spans.0.lock().unwrap().clone();
    assert_eq!(spans.len(), names.len());
    let overlaps =
        |a: &(String, Instant, Instant), b: &(String, Instant, Instant)| a.1 < b.2 && b.1 < a.2;
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.0 == "seq" || b.0 == "seq" {
                assert!(!overlaps(a, b), "{} overlapped {}", a.0, b.0);
            }
        }
    }
    // Parallel calls still share the session (otherwise the check above proves nothing).
    let pars: Vec<_> = spans.iter().filter(|s| s.0 == "par").collect();
    let shared = pars
        .iter()
        .enumerate()
        .any(|(i, a)| pars[i + 1..].iter().any(|b| overlaps(a, b)));
    assert!(shared, "parallel calls ran one at a time: {spans:?}");
}

#[tokio::test]
async fn max_concurrency_bounds_the_calls_of_the_whole_session() {
    let spans = Spans::default();
    let config = RunnerConfig {
        max_concurrency: Some(2),
        ..RunnerConfig::default()
    };
    let session = connect(tools([timed("par", &spans, false)]), config).await;
    let calls = (0..6).map(|_| session.client.call_tool(params("par", json!({"i": 1}))));
    for result in futures::future::join_all(calls).await {
        assert_eq!(only_text(&result.expect("tools/call answers")), "ok");
    }
    let spans = spans.0.lock().unwrap().clone();
    assert_eq!(spans.len(), 6);
    let peak = spans
        .iter()
        .map(|a| spans.iter().filter(|b| b.1 <= a.1 && a.1 < b.2).count())
        .max();
    assert_eq!(peak, Some(2), "{spans:?}");
}
