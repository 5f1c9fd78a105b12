//! Runner overhead benchmark: `cargo run --release --example runner_overhead`.
//!
//! A batch of N calls of a trivial tool with schema `{i: number, note?: string}`; the batch
//! time runs from the first `tool_execution_start` event to the batch outcome. Each figure is
//! the median of several runs after a warm-up. Two more rows: the same tool written with
//! `#[tool]` returning a typed result (structured content plus its JSON text), and a tool
//! that makes one nested call of it (`ctx.call_tool`) per call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use pi_tools::{
    AgentTool, BoxFuture, EventSink, ExecutionMode, RunnerConfig, ToolCall, ToolContext, ToolError,
    ToolEvent, ToolResult, ToolSet, execute_tool_calls, tool, wrap,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

struct Trivial {
    schema: Value,
    sleep: Option<Duration>,
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
            if let Some(d) = self.sleep {
                tokio::time::sleep(d).await;
            }
            let i = args["i"].as_f64().unwrap_or_default();
            Ok(ToolResult::text(format!("{i}")))
        })
    }
}

/// A typed result.
#[derive(serde::Serialize, pi_tools::schemars::JsonSchema)]
#[schemars(crate = "pi_tools::schemars")]
struct Echoed {
    /// The number given.
    i: f64,
}

/// Returns its argument, typed.
#[tool]
async fn typed(i: f64, note: Option<String>) -> Result<Echoed, ToolError> {
    let _ = note;
    Ok(Echoed { i })
}

/// Calls `typed` once and returns its text.
#[tool]
async fn caller(ctx: &ToolContext, i: f64) -> Result<String, ToolError> {
    let result = ctx.call_tool("typed", json!({ "i": i })).await?;
    Ok(result.text_content())
}

/// Notes when the first start event arrives; counts events so the work is not optimised away.
#[derive(Default)]
struct TimingSink {
    first_start: OnceLock<Instant>,
    events: AtomicUsize,
}

impl EventSink for TimingSink {
    async fn emit(&self, event: ToolEvent) {
        if matches!(event, ToolEvent::ToolExecutionStart { .. }) {
            self.first_start.get_or_init(Instant::now);
        }
        self.events.fetch_add(1, Ordering::Relaxed);
    }
}

async fn batch_ms(tools: &ToolSet, calls: &[ToolCall], config: &RunnerConfig) -> f64 {
    let sink = TimingSink::default();
    let outcome = execute_tool_calls(tools, calls, config, &CancellationToken::new(), &sink).await;
    let end = Instant::now();
    assert_eq!(outcome.messages.len(), calls.len());
    assert!(outcome.messages.iter().all(|m| !m.is_error));
    assert!(sink.events.load(Ordering::Relaxed) >= calls.len() * 4);
    let start = *sink.first_start.get().expect("a start event");
    end.duration_since(start).as_secs_f64() * 1e3
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let schema = json!({
            "type": "object",
            "properties": {"i": {"type": "number"}, "note": {"type": "string"}},
            "required": ["i"]
        });
        let trivial: Arc<dyn AgentTool> = Arc::new(Trivial {
            schema: schema.clone(),
            sleep: None,
        });
        let tools = ToolSet::new([trivial]);
        println!("| N | mode | batch ms | µs per call |");
        println!("|---|---|---|---|");
        for mode in [ExecutionMode::Parallel, ExecutionMode::Sequential] {
            let config = RunnerConfig {
                execution: mode,
                ..RunnerConfig::default()
            };
            for n in [1usize, 100, 1000] {
                let calls: Vec<_> = (0..n)
                    .map(|i| ToolCall::new(format!("call_{i}"), "trivial", json!({"i": i})))
                    .collect();
                for _ in 0..5 {
                    batch_ms(&tools, &calls, &config).await;
                }
                let runs = if n == 1000 { 31 } else { 101 };
                let mut samples = Vec::with_capacity(runs);
                for _ in 0..runs {
                    samples.push(batch_ms(&tools, &calls, &config).await);
                }
                let ms = median(samples);
                println!("| {n} | {mode} | {ms:.3} | {:.2} |", ms * 1e3 / n as f64);
            }
        }

        // The product's default configuration sets a per-call timeout (180 s), which gives
        // every call a cancellation token of its own up front.
        let config = RunnerConfig {
            timeout: Some(Duration::from_secs(180)),
            ..RunnerConfig::default()
        };
        let calls: Vec<_> = (0..1000)
            .map(|i| ToolCall::new(format!("call_{i}"), "trivial", json!({"i": i})))
            .collect();
        for _ in 0..5 {
            batch_ms(&tools, &calls, &config).await;
        }
        let mut samples = Vec::with_capacity(31);
        for _ in 0..31 {
            samples.push(batch_ms(&tools, &calls, &config).await);
        }
        let ms = median(samples);
        println!(
            "| 1000 | parallel, 180 s timeout | {ms:.3} | {:.2} |",
            ms * 1e3 / 1000.0
        );

        let tools = ToolSet::new([
            wrap(Arc::new(TypedTool), None),
            wrap(Arc::new(CallerTool), None),
        ]);
        for (name, label) in [
            ("typed", "parallel, #[tool] typed result"),
            ("caller", "parallel, one nested call each"),
        ] {
            let calls: Vec<_> = (0..1000)
                .map(|i| ToolCall::new(format!("call_{i}"), name, json!({"i": i})))
                .collect();
            let config = RunnerConfig::default();
            for _ in 0..5 {
                batch_ms(&tools, &calls, &config).await;
            }
            let mut samples = Vec::with_capacity(31);
            for _ in 0..31 {
                samples.push(batch_ms(&tools, &calls, &config).await);
            }
            let ms = median(samples);
            println!("| 1000 | {label} | {ms:.3} | {:.2} |", ms * 1e3 / 1000.0);
        }

        let sleeper: Arc<dyn AgentTool> = Arc::new(Trivial {
            schema,
            sleep: Some(Duration::from_millis(20)),
        });
        let tools = ToolSet::new([sleeper]);
        let calls: Vec<_> = (0..1000)
            .map(|i| ToolCall::new(format!("call_{i}"), "trivial", json!({"i": i})))
            .collect();
        let config = RunnerConfig::default();
        batch_ms(&tools, &calls, &config).await;
        let mut samples = Vec::new();
        for _ in 0..9 {
            samples.push(batch_ms(&tools, &calls, &config).await);
        }
        println!(
            "| 1000 × 20 ms sleep | parallel | {:.3} | (wall for the whole batch) |",
            median(samples)
        );
    });
}
