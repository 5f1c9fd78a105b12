//! MCP server throughput benchmark: `cargo run --release --example bench_mcp`.
//!
//! One session, 1,000 `tools/call` requests of a trivial call, 8 in flight at any time.
//! Latency is from sending a request to reading its result.
//!
//! - In process (the default): the server and rmcp's client run in one process and talk
//!   JSON-RPC lines over an in-process pipe (`tokio::io::duplex`); the tool is a trivial one
//!   (schema `{i: number, note?: string}`, answers its argument). The figures include
//!   framing, JSON encoding and the runner but no process boundary.
//! - `--binary`: spawns the real `pi-tools mcp` (the path in `PI_TOOLS_BIN`, else
//!   `target/release/pi-tools`) and calls the built-in `read` on a one-line file over the
//!   child's stdin and stdout, so the figures add the pipes, the binary's runtime and the
//!   real tool. Build both first, then run the example:
//!   `cargo build --release --bin pi-tools --example bench_mcp &&
//!   target/release/examples/bench_mcp --binary`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use pi_tools::mcp::{McpTool, McpTools, serve};
use pi_tools::{AgentTool, BoxFuture, RunnerConfig, ToolContext, ToolError, ToolResult};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

const CALLS: usize = 1_000;
const IN_FLIGHT: usize = 8;
const WARM_UP: usize = 100;

struct Trivial {
    schema: Value,
}

impl AgentTool for Trivial {
    fn name(&self) -> &str {
        "trivial"
    }

    fn description(&self) -> &str {
        "Returns its argument."
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
            let i = args["i"].as_f64().unwrap_or_default();
            Ok(ToolResult::text(format!("{i}")))
        })
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The session under test, and what to await once the client has closed it.
struct Target {
    client: RunningService<RoleClient, ()>,
    what: &'static str,
    tool: &'static str,
    arguments: fn(usize) -> Value,
    end: Box<dyn FnOnce() -> futures::future::BoxFuture<'static, Result<(), String>>>,
    _dir: Option<tempfile::TempDir>,
}

async fn in_process() -> Result<Target, Box<dyn std::error::Error>> {
    let tool = Trivial {
        schema: json!({
            "type": "object",
            "properties": {"i": {"type": "number"}, "note": {"type": "string"}},
            "required": ["i"]
        }),
    };
    let tools: McpTools = [McpTool::new(std::sync::Arc::new(tool)).read_only(true)]
        .into_iter()
        .collect();
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(serve(tools, RunnerConfig::default(), server_io));
    let client = ().serve(client_io).await?;
    Ok(Target {
        client,
        what: "one in-process session",
        tool: "trivial",
        arguments: |i| json!({"i": i}),
        end: Box::new(move || {
            Box::pin(async move {
                match server.await {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) => Err(e.to_string()),
                    Err(e) => Err(e.to_string()),
                }
            })
        }),
        _dir: None,
    })
}

async fn binary() -> Result<Target, Box<dyn std::error::Error>> {
    let bin = std::env::var_os("PI_TOOLS_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/pi-tools"),
        PathBuf::from,
    );
    if !bin.is_file() {
        return Err(format!(
            "{} is not there; build it with `cargo build --release` or set PI_TOOLS_BIN",
            bin.display()
        )
        .into());
    }
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("tiny.txt"), "hello\n")?;
    let mut child = tokio::process::Command::new(&bin)
        .arg("mcp")
        .arg("--cwd")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{} cannot be started: {e}", bin.display()))?;
    let stdin = child.stdin.take().ok_or("stdin is piped")?;
    let stdout = child.stdout.take().ok_or("stdout is piped")?;
    let client = ().serve((stdout, stdin)).await?;
    Ok(Target {
        client,
        what: "one stdio session with the pi-tools binary (read of a one-line file)",
        tool: "read",
        arguments: |_| json!({"path": "tiny.txt"}),
        end: Box::new(move || {
            Box::pin(async move {
                let status = child.wait().await.map_err(|e| e.to_string())?;
                if status.success() {
                    Ok(())
                } else {
                    Err(format!("the server exited with {status}"))
                }
            })
        }),
        _dir: Some(dir),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = if std::env::args().skip(1).any(|a| a == "--binary") {
        binary().await?
    } else {
        in_process().await?
    };
    let client = &target.client;

    let call = |i: usize| async move {
        let serde_json::Value::Object(args) = (target.arguments)(i) else {
            unreachable!("the arguments are an object")
        };
        let params = CallToolRequestParams::new(target.tool).with_arguments(args);
        let sent = Instant::now();
        let result = client.call_tool(params).await;
        (sent.elapsed(), result)
    };
    let run = |n: usize| {
        stream::iter(0..n)
            .map(call)
            .buffer_unordered(IN_FLIGHT)
            .collect::<Vec<_>>()
    };

    run(WARM_UP).await;
    let started = Instant::now();
    let outcomes = run(CALLS).await;
    let elapsed = started.elapsed();

    let mut latencies = Vec::with_capacity(CALLS);
    for (latency, result) in outcomes {
        let result = result?;
        if result.is_error != Some(false) {
            return Err(format!("a call failed: {result:?}").into());
        }
        latencies.push(latency);
    }
    latencies.sort();
    println!(
        "{CALLS} tools/call over {}, {IN_FLIGHT} in flight: \
         {:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms",
        target.what,
        CALLS as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );

    let Target { client, end, .. } = target;
    client.cancel().await?;
    end().await?;
    Ok(())
}
