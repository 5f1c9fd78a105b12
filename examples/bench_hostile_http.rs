//! Peak memory of the gateway (`pi-tools mcp`) when a server mounted by `url` (Streamable
//! HTTP) answers a `tools/call` with a message built to take memory: 40 MB (20 M elements
//! of structured content, over the default `[mcp] max_message_bytes` of 16 MiB), and the
//! largest answer the default lets through (15 MB, 1 M values); each as a JSON body and as
//! an event stream.
//!
//! ```text
//! cargo run --release -p pi-tools-examples --example bench_hostile_http
//! ```
//!
//! The server is a small Streamable HTTP server in this process (stateless: no session, so
//! no stream of its own); the gateway is this example spawned as the `pi-tools` command
//! line, which writes its peak resident set (`VmHWM`, Linux) when it ends. A case prints
//! that peak, the peak given a one-element answer the same way, and what the answer added.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::ExitCode;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[path = "support/peak.rs"]
mod peak;
use peak::{spawn_gateway, status_bytes};

type Error = Box<dyn std::error::Error + Send + Sync>;

const MB: f64 = 1_000_000.0;

/// Where the spawned gateway writes its peak resident set when it ends.
const PEAK_VAR: &str = "BENCH_HOSTILE_HTTP_PEAK_FILE";

fn main() -> ExitCode {
    // Run with no arguments. Spawned with any, this is the `pi-tools` command line (its
    // `mcp`, and the `env-guard` the gateway starts).
    if let Some(command) = std::env::args().nth(1) {
        let code = pi_tools::cli::main();
        if command == "mcp"
            && let Some(file) = std::env::var_os(PEAK_VAR)
        {
            let _ = std::fs::write(file, status_bytes("VmHWM").to_string());
        }
        return code;
    }
    match bench() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_hostile_http: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench() -> Result<(), Error> {
    let runtime = tokio::runtime::Runtime::new()?;
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let port = listener.local_addr()?.port();
    runtime.spawn(async move {
        let app = axum::Router::new()
            .route(
                "/json",
                axum::routing::post(|body: String| async move { mcp(&body, false) }).get(no_stream),
            )
            .route(
                "/sse",
                axum::routing::post(|body: String| async move { mcp(&body, true) }).get(no_stream),
            );
        let _ = axum::serve(listener, app).await;
    });
    let work = tempfile::TempDir::new()?;
    println!(
        "{:<50} {:>10} {:>10} {:>10}  answer",
        "case", "input", "peak", "added"
    );
    for way in ["json", "sse"] {
        let url = format!("http://127.0.0.1:{port}/{way}");
        let (base, _) = gateway(work.path(), &url, &json!({"count": 1}))?;
        for (case, input, arguments) in [
            (
                "40 MB answer (20 M elements)",
                40_000_000,
                json!({"count": 20_000_000}),
            ),
            (
                "16 MB answer (8 M values)",
                16_000_000,
                json!({"count": 8_000_000}),
            ),
            (
                "15 MB answer (1 M values)",
                15_000_000,
                json!({"count": 1_000_000, "width": 12}),
            ),
        ] {
            let (peak, answer) = gateway(work.path(), &url, &arguments)?;
            let added = peak.saturating_sub(base);
            println!(
                "{:<50} {:>7.1} MB {:>7.1} MB {:>7.1} MB  {answer} (one-element answer's peak {:.1} MB)",
                format!("gateway, HTTP server, {way}: {case}"),
                input as f64 / MB,
                peak as f64 / MB,
                added as f64 / MB,
                base as f64 / MB
            );
        }
    }
    Ok(())
}

/// The peak of `pi-tools mcp` mounting the server at `url` as `web`, its tool called with
/// `arguments`, and the start of the answer the gateway gave.
fn gateway(dir: &Path, url: &str, arguments: &Value) -> Result<(u64, String), Error> {
    let config_file = dir.join("gateway.toml");
    std::fs::write(
        &config_file,
        format!("[tools]\nactive = [\"web__big\"]\n\n[mcp.servers.web]\nurl = \"{url}\"\n"),
    )?;
    let peak_file = dir.join("gateway.peak");
    let mut child = spawn_gateway(dir, &config_file, PEAK_VAR, &peak_file)?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut answer = |stdin: &mut std::process::ChildStdin, message: &Value| {
        writeln!(stdin, "{message}")?;
        let id = format!("\"id\":{}", message["id"]);
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                return Err::<String, Error>("the gateway ended".into());
            }
            // Only the start is kept: the answer may be 15 MB.
            if line.contains(&id) {
                let mut head: String = line.chars().take(400).collect();
                if head.len() < line.trim_end().len() {
                    head.push('…');
                }
                return Ok(head.trim_end().to_owned());
            }
        }
    };
    answer(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
    )?;
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )?;
    let head = answer(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "web__big", "arguments": arguments}}),
    )?;
    drop(stdin);
    child.wait()?;
    let peak = std::fs::read_to_string(&peak_file)?.trim().parse()?;
    Ok((peak, head))
}

/// No stream of the server's own: it keeps no session.
async fn no_stream() -> StatusCode {
    StatusCode::METHOD_NOT_ALLOWED
}

/// The server's one endpoint: a tool `big`, whose answer has `count` elements of structured
/// content (`width` bytes of string each, 0: the number 0), as a JSON body at `/json` and
/// as one event at `/sse`.
fn mcp(body: &str, sse: bool) -> Response {
    let Ok(message) = serde_json::from_str::<Value>(body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = message
        .get("id")
        .filter(|_| message.get("method").is_some())
    else {
        // A notification or an answer.
        return StatusCode::ACCEPTED.into_response();
    };
    let text = match message["method"].as_str() {
        Some("initialize") => answer(
            id,
            &json!({"protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "big", "version": "1"}}),
        ),
        Some("tools/list") => answer(
            id,
            &json!({"tools": [{"name": "big", "description": "A big answer.",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": true}}]}),
        ),
        Some("tools/call") => {
            let args = &message["params"]["arguments"];
            big_answer(
                id,
                args["count"].as_u64().unwrap_or(1),
                args["width"].as_u64().unwrap_or(0),
            )
        }
        _ => answer(id, &json!({})),
    };
    if sse {
        let event = format!("event: message\ndata: {text}\n\n");
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            Body::from(event),
        )
            .into_response()
    } else {
        (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(text),
        )
            .into_response()
    }
}

fn answer(id: &Value, result: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

fn big_answer(id: &Value, count: u64, width: u64) -> String {
    let item = if width == 0 {
        "0".to_owned()
    } else {
        format!("\"{}\"", "x".repeat(usize::try_from(width).unwrap_or(1)))
    };
    let mut text = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"big\"}}],\"isError\":false,\"structuredContent\":{{\"items\":["
    );
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&item);
    }
    text.push_str("]}}}");
    text
}
