//! MCP server throughput benchmark: `cargo run --release --example bench_mcp`.
//!
//! One session, 1,000 `tools/call` requests of a trivial tool (schema `{i: number,
//! note?: string}`, answers its argument), 8 in flight at any time. The server and rmcp's
//! client run in one process and talk JSON-RPC lines over an in-process pipe
//! (`tokio::io::duplex`), so the figures include framing, JSON encoding and the runner but
//! no process boundary. Latency is from sending a request to reading its result.

use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use pi_tools::mcp::{McpTool, McpTools, serve};
use pi_tools::{AgentTool, BoxFuture, RunnerConfig, ToolContext, ToolError, ToolResult};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
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

    let call = |i: usize| {
        let client = &client;
        async move {
            let mut args = serde_json::Map::new();
            args.insert("i".to_owned(), json!(i));
            let params = CallToolRequestParams::new("trivial").with_arguments(args);
            let sent = Instant::now();
            let result = client.call_tool(params).await;
            (sent.elapsed(), result)
        }
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
        "{CALLS} tools/call over one in-process session, {IN_FLIGHT} in flight: \
         {:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms",
        CALLS as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
    );

    client.cancel().await?;
    server.await??;
    Ok(())
}
