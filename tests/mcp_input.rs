//! The MCP server's answers to input it cannot use, its backpressure, logging, instructions
//! and unknown-property errors, in process over raw JSON-RPC lines.
#![cfg(feature = "mcp")]

use support::mcp as mcp_support;

use std::sync::Arc;
use std::time::Duration;

use mcp_support::{Raw, RawPipe};
use pi_tools::mcp::{McpTool, McpTools, init_stderr_logging, serve_split};
use pi_tools::{RunnerConfig, ToolResult};
use serde_json::{Value, json};
use support::{Scripted, echo};
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

fn served(list: impl IntoIterator<Item = Arc<dyn pi_tools::AgentTool>>) -> McpTools {
    list.into_iter().map(McpTool::new).collect()
}

fn call(id: Value, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}
    })
}

/// The error of an answer: (id, code, message).
fn error_of(answer: &Value) -> (Value, i64, String) {
    (
        answer["id"].clone(),
        answer["error"]["code"].as_i64().expect("an error answer"),
        answer["error"]["message"]
            .as_str()
            .expect("an error message")
            .to_owned(),
    )
}

#[tokio::test]
async fn unusable_lines_get_an_error_naming_the_reason_and_the_session_goes_on() {
    let mut pipe = RawPipe::start(served([echo("echo")]), RunnerConfig::default());
    pipe.initialize().await;

    // A lone surrogate: not JSON text serde can represent.
    pipe.send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\ud800"}}"#)
        .await;
    pipe.send_bytes(b"\n").await;
    let (id, code, message) = error_of(&pipe.recv().await);
    assert_eq!((id, code), (Value::Null, -32700));
    assert_eq!(
        message,
        "Parse error: the line is not JSON: unexpected end of hex escape at line 1 column 62. Send one JSON-RPC message per line."
    );

    // Nesting deeper than 128.
    let deep = format!("{}{}\n", "[".repeat(200), "]".repeat(200));
    pipe.send_bytes(deep.as_bytes()).await;
    let (id, code, message) = error_of(&pipe.recv().await);
    assert_eq!((id, code), (Value::Null, -32700));
    assert!(
        message.contains("nests deeper than 128 levels"),
        "{message}"
    );

    // A line over 16 MiB: skipped to its end and answered, not dropped silently.
    let mut huge = vec![b' '; 17 << 20];
    huge.push(b'\n');
    let writing = {
        let mut chunks = huge.chunks(1 << 16).map(<[u8]>::to_vec).collect::<Vec<_>>();
        chunks.reverse();
        chunks
    };
    let mut chunks = writing;
    while let Some(chunk) = chunks.pop() {
        pipe.send_bytes(&chunk).await;
    }
    let (id, code, message) = error_of(&pipe.recv().await);
    assert_eq!((id, code), (Value::Null, -32700));
    assert_eq!(
        message,
        "Parse error: the line is longer than 16777216 bytes (`[mcp] max_message_bytes`) and was skipped. Send smaller messages (put large data in files), or raise the setting."
    );

    // A readable id is kept, and the reason is named.
    pipe.send(json!({"jsonrpc": "1.0", "id": "abc", "method": "ping"}))
        .await;
    assert_eq!(
        error_of(&pipe.recv().await),
        (
            json!("abc"),
            -32600,
            "Invalid request: `jsonrpc` must be \"2.0\". Send JSON-RPC 2.0 messages.".to_owned()
        )
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": [1], "method": "ping"}))
        .await;
    assert_eq!(
        error_of(&pipe.recv().await),
        (
            Value::Null,
            -32600,
            "Invalid request: the id [1] is neither a string nor an integer. Use a string or integer id.".to_owned()
        )
    );
    pipe.send(json!([{"jsonrpc": "2.0", "id": 3, "method": "ping"}]))
        .await;
    assert_eq!(
        error_of(&pipe.recv().await),
        (
            Value::Null,
            -32600,
            "Invalid request: the message is a batch (JSON array); send each message on its own line.".to_owned()
        )
    );

    // Still serving.
    pipe.send(call(json!(9), "echo", json!({"i": 1}))).await;
    assert_eq!(
        pipe.recv().await["result"]["content"][0]["text"],
        json!("ok 1")
    );
}

#[tokio::test]
async fn a_request_before_initialize_is_refused_clearly_and_ping_is_answered() {
    let mut pipe = RawPipe::start(served([echo("echo")]), RunnerConfig::default());
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(
        error_of(&pipe.recv().await),
        (
            json!(1),
            -32600,
            "Invalid request: `tools/list` came before `initialize`. Open the session with an `initialize` request, then send `notifications/initialized`.".to_owned()
        )
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    let init = pipe.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "pi-tools");
}

#[tokio::test]
async fn a_second_request_with_the_id_of_one_in_flight_is_refused() {
    let gate = Arc::new(Semaphore::new(0));
    let slow = {
        let gate = gate.clone();
        Scripted::new("slow", move |_args, _ctx| {
            let gate = gate.clone();
            async move {
                let _pass = gate.acquire().await;
                Ok(ToolResult::text("done"))
            }
        })
        .arc()
    };
    let mut pipe = RawPipe::start(served([slow]), RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(call(json!(5), "slow", json!({"i": 1}))).await;
    pipe.send(call(json!(5), "slow", json!({"i": 2}))).await;
    assert_eq!(
        error_of(&pipe.recv().await),
        (
            json!(5),
            -32600,
            "Invalid request: a request with id 5 is still in flight. Give every request its own id.".to_owned()
        )
    );
    gate.add_permits(1);
    let answer = pipe.recv().await;
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    // Answered, the id is free again.
    gate.add_permits(1);
    pipe.send(call(json!(5), "slow", json!({"i": 3}))).await;
    assert_eq!(pipe.recv().await["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn a_cancelled_call_gets_no_answer_and_its_id_is_free_for_the_next_request() {
    // The tool notices the cancellation, then answers anyway: that answer must not reach the
    // client, and above all must not pass for the answer to the next request with the id.
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let stubborn = {
        let gate = gate.clone();
        Scripted::new("stubborn", move |_args, ctx| {
            let (gate, events_tx) = (gate.clone(), events_tx.clone());
            async move {
                let _ = events_tx.send("started");
                ctx.cancellation().cancelled().await;
                let _ = events_tx.send("cancelled");
                let _pass = gate.acquire().await;
                Ok(ToolResult::text("answered after the cancellation"))
            }
        })
        .arc()
    };
    let mut pipe = RawPipe::start(served([stubborn, echo("echo")]), RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(call(json!(7), "stubborn", json!({"i": 1}))).await;
    let mut next_event = async || {
        tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .expect("the tool reports in time")
    };
    assert_eq!(next_event().await, Some("started"));
    pipe.send(json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "the user pressed stop"}
    }))
    .await;
    assert_eq!(next_event().await, Some("cancelled"));
    // Its id is free at once: the next request with it is not refused.
    pipe.send(call(json!(7), "echo", json!({"i": 2}))).await;
    let answer = pipe.recv().await;
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "ok 2");
    // The cancelled call now ends with a result, which is dropped.
    gate.add_permits(1);
    let stray = tokio::time::timeout(Duration::from_millis(500), pipe.recv()).await;
    assert!(stray.is_err(), "the cancelled call was answered: {stray:?}");
    pipe.send(call(json!(8), "echo", json!({"i": 3}))).await;
    assert_eq!(pipe.recv().await["result"]["content"][0]["text"], "ok 3");
}

#[tokio::test]
async fn the_server_stops_reading_while_max_concurrency_plus_the_queue_are_unanswered() {
    let gate = Arc::new(Semaphore::new(0));
    let slow = {
        let gate = gate.clone();
        Scripted::new("slow", move |_args, _ctx| {
            let gate = gate.clone();
            async move {
                let _pass = gate.acquire().await;
                Ok(ToolResult::text("done"))
            }
        })
        .arc()
    };
    let config = RunnerConfig {
        max_concurrency: Some(1),
        ..RunnerConfig::default()
    };
    // A small pipe, so a server that stops reading shows as a writer that cannot go on.
    let (mut input, server_in) = tokio::io::duplex(4096);
    let (server_out, output) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(serve_split(served([slow]), config, server_in, server_out));
    let mut raw = Raw::new(tokio::io::sink(), output);
    let init = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    });
    input
        .write_all(format!("{init}\n").as_bytes())
        .await
        .expect("the server reads");
    assert_eq!(raw.recv().await["id"], 0);
    // 1 executing + 64 queued are read; the rest must wait in the pipe.
    let written = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writing = {
        let written = written.clone();
        tokio::spawn(async move {
            for id in 1..=400 {
                let line = format!("{}\n", call(json!(id), "slow", json!({"i": id})));
                input
                    .write_all(line.as_bytes())
                    .await
                    .expect("the server reads");
                written.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            input
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stalled_at = written.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        (65..400).contains(&stalled_at),
        "the server read {stalled_at} requests while only 65 may be unanswered (plus a pipe's worth)"
    );
    // Released, every request is answered, once each.
    gate.add_permits(1000);
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 400 {
        let answer = raw.recv().await;
        let id = answer["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("an answer with an id: {answer}"));
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
        assert!(answered.insert(id), "request {id} was answered twice");
    }
    drop(writing);
    server.abort();
}

#[tokio::test]
async fn an_unknown_property_is_an_error_naming_the_closest_known_one() {
    let mut pipe = RawPipe::start(served([echo("echo")]), RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(call(json!(1), "echo", json!({"i": 1, "notes": "x"})))
        .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["result"]["isError"], true);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.starts_with(
            "Validation failed for tool \"echo\":\n  - notes: unknown property `notes`; did you mean `note`? Remove `notes` or rename it."
        ),
        "{text}"
    );
}

#[tokio::test]
async fn instructions_and_the_logging_capability_are_in_the_initialize_answer() {
    let tools = served([echo("echo")]).with_instructions("Guidelines:\n- Be brief.");
    let mut pipe = RawPipe::start(tools, RunnerConfig::default());
    let init = pipe.initialize().await;
    assert_eq!(init["result"]["instructions"], "Guidelines:\n- Be brief.");
    assert_eq!(init["result"]["capabilities"]["logging"], json!({}));
}

/// Collects `notifications/message` data until the answer to `id` arrives.
async fn logs_until_answer(pipe: &mut RawPipe, id: i64) -> Vec<(String, String)> {
    let mut logs = Vec::new();
    loop {
        let line = pipe.recv().await;
        if line["id"] == id {
            return logs;
        }
        if line["method"] == "notifications/message" {
            logs.push((
                line["params"]["level"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                line["params"]["data"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
        }
    }
}

#[tokio::test]
async fn a_calls_tracing_events_reach_its_client_at_the_level_it_set() {
    init_stderr_logging();
    let chatty = Scripted::new("chatty", |args, _ctx| async move {
        tracing::debug!(i = %args["i"], "debug detail");
        tracing::info!("info line");
        tracing::warn!("warn line");
        Ok(ToolResult::text("spoke"))
    })
    .arc();
    let mut pipe = RawPipe::start(served([chatty]), RunnerConfig::default());
    pipe.initialize().await;
    // Until the client sets a level: info and above.
    pipe.send(call(json!(1), "chatty", json!({"i": 1}))).await;
    assert_eq!(
        logs_until_answer(&mut pipe, 1).await,
        vec![
            ("info".to_owned(), "info line".to_owned()),
            ("warning".to_owned(), "warn line".to_owned())
        ]
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "warning"}}))
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    pipe.send(call(json!(3), "chatty", json!({"i": 3}))).await;
    assert_eq!(
        logs_until_answer(&mut pipe, 3).await,
        vec![("warning".to_owned(), "warn line".to_owned())]
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "debug"}}))
        .await;
    pipe.recv().await;
    pipe.send(call(json!(5), "chatty", json!({"i": 5}))).await;
    assert_eq!(
        logs_until_answer(&mut pipe, 5).await,
        vec![
            ("debug".to_owned(), "debug detail i=5".to_owned()),
            ("info".to_owned(), "info line".to_owned()),
            ("warning".to_owned(), "warn line".to_owned())
        ]
    );
}

/// Echoes its text; takes whatever else it is given.
#[pi_tools::tool(accept_unknown_properties)]
async fn lenient(
    /// The text to echo.
    text: String,
) -> Result<String, pi_tools::ToolError> {
    Ok(text)
}

/// Echoes its text.
#[pi_tools::tool]
async fn strict(
    /// The text to echo.
    text: String,
) -> Result<String, pi_tools::ToolError> {
    Ok(text)
}

#[tokio::test]
async fn a_tool_declared_with_accept_unknown_properties_takes_extra_arguments() {
    let tools = served([
        pi_tools::wrap(Arc::new(LenientTool), None),
        pi_tools::wrap(Arc::new(StrictTool), None),
    ]);
    let mut pipe = RawPipe::start(tools, RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(call(
        json!(1),
        "lenient",
        json!({"text": "hi", "file_path": "x"}),
    ))
    .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "hi");
    pipe.send(call(json!(2), "strict", json!({"text": "hi", "txt": "x"})))
        .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(
                "  - txt: unknown property `txt`; did you mean `text`? Remove `txt` or rename it."
            )),
        "{answer}"
    );
}
