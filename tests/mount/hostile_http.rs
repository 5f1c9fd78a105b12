//! A server mounted by `url` (a real Streamable HTTP server on a local port, stateless)
//! whose answer is over `[mcp] max_message_bytes`, or under it with more JSON values than
//! decoding may take memory for, as a JSON body and as an event stream: the call fails at
//! once with the reason, and the server's next call works.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::header;
use axum::response::{IntoResponse, Response};
use pi_tools::config::ServerSettings;
use pi_tools::mount::{McpServerTools, MountOptions};
use pi_tools::{RunnerConfig, ToolSet};
use serde_json::{Value, json};

use super::call;
use super::mount_support::{STARTUP, text_of};

/// Serves the MCP endpoints `/json` (answers as JSON bodies) and `/sse` (as one event);
/// its port.
async fn serve() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a local port");
    let port = listener.local_addr().expect("its address").port();
    let app = axum::Router::new()
        .route(
            "/json",
            axum::routing::post(|body: String| async move { answer(&body, false) }),
        )
        .route(
            "/sse",
            axum::routing::post(|body: String| async move { answer(&body, true) }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// The answer to one message (also the https test's server): tools `big` (`count` numbers of structured content, or a
/// text of `bytes` bytes) and `echo`.
pub(super) fn answer(body: &str, sse: bool) -> Response {
    let Ok(message) = serde_json::from_str::<Value>(body) else {
        return axum::http::StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = message
        .get("id")
        .filter(|_| message.get("method").is_some())
    else {
        return axum::http::StatusCode::ACCEPTED.into_response();
    };
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let schema = json!({"type": "object"});
    let text = match message["method"].as_str() {
        Some("initialize") => result(json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-http", "version": "1"}})),
        Some("tools/list") => result(json!({"tools": [
            {"name": "big", "inputSchema": schema, "annotations": {"readOnlyHint": true}},
            {"name": "echo", "inputSchema": schema, "annotations": {"readOnlyHint": true}}]})),
        Some("tools/call") => {
            let args = &message["params"]["arguments"];
            if message["params"]["name"] == "echo" {
                result(json!({"content": [{"type": "text", "text": args["text"]}]}))
            } else if let Some(bytes) = args["bytes"].as_u64() {
                let text = "x".repeat(usize::try_from(bytes).expect("a size"));
                result(json!({"content": [{"type": "text", "text": text}]}))
            } else {
                let count = args["count"].as_u64().unwrap_or(1) as usize;
                let items = vec![0; count];
                result(json!({"content": [{"type": "text", "text": "big"}],
                              "structuredContent": {"items": items}}))
            }
        }
        _ => result(json!({})),
    };
    if sse {
        let event = format!("event: message\ndata: {text}\n\n");
        ([(header::CONTENT_TYPE, "text/event-stream")], event).into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/json")], text).into_response()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_limit_or_with_too_many_values_fails_its_call_over_http() {
    let port = serve().await;
    for way in ["json", "sse"] {
        let mut settings = ServerSettings::http("h", format!("http://127.0.0.1:{port}/{way}"));
        settings.startup_timeout = STARTUP;
        let options = MountOptions {
            max_message_bytes: 1 << 20,
            ..MountOptions::default()
        };
        let cwd = std::env::current_dir().expect("cwd");
        let server = McpServerTools::connect_in(settings, &cwd, &options)
            .await
            .expect("the HTTP server is mounted");
        let mut tools = ToolSet::new([]);
        server.add_to(&mut tools);
        let tools = Arc::new(tools);
        let config = RunnerConfig::default();

        let started = Instant::now();
        let (message, _) = call(&tools, &config, "h__big", json!({"bytes": 2_000_000})).await;
        assert_eq!(message["isError"], true, "{way}: {message}");
        assert_eq!(
            text_of(&message),
            "The MCP server `h` could not run h__big: the gateway did not read its answer: it sent a message longer than 1048576 bytes, the limit of [mcp] max_message_bytes.",
            "{way}"
        );

        // Under the limit (600 KB), but 300 000 values: more than decoding may take memory for.
        let (message, _) = call(&tools, &config, "h__big", json!({"count": 300_000})).await;
        assert_eq!(message["isError"], true, "{way}: {message}");
        assert_eq!(
            text_of(&message),
            "The MCP server `h` could not run h__big: the gateway did not read its answer: it sent a message of 300014 JSON values; the gateway decodes at most 65536 in one message (one per 16 bytes of [mcp] max_message_bytes).",
            "{way}"
        );
        assert!(started.elapsed() < Duration::from_secs(15), "{way}");

        // The server's other calls go on, and an answer within the bounds is read.
        let (message, _) = call(&tools, &config, "h__echo", json!({"text": "still here"})).await;
        assert_eq!(text_of(&message), "still here", "{way}: {message}");
        let (message, _) = call(&tools, &config, "h__big", json!({"count": 60_000})).await;
        assert_eq!(message["isError"], false, "{way}: {message}");
        server.end().await;
    }
}
