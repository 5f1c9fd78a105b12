//! Runner overhead benchmark: `cargo run --release --example runner_overhead`.
//!
//! A batch of N calls of a trivial tool with schema `{i: number, note?: string}`; the batch
//! time runs from the first `tool_execution_start` event to the batch outcome. Each figure is
//! the median of several runs after a warm-up. Two more rows: the same tool written with
//! `#[tool]` returning a typed result (structured content plus its JSON text), and a tool
//! that makes one nested call of it (`ctx.call_tool`) per call.
//!
//! Wall times move with whatever else the machine runs. For figures that do not,
//! `runner_overhead --only ROW --batches K` runs K batches of 1,000 calls of one row
//! (`trivial`, `untyped`, `typed`, `caller` or `inline`, the caller's own work without its
//! nested call) and nothing else, to be counted by callgrind:
//! `scripts/bench-runner-instructions.sh` runs each row with one batch and with three and
//! prints the instructions per call (the difference over 2,000 calls, so the setup drops out).

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

/// Returns its argument as text: the same tool as `typed` without a typed result.
#[tool]
async fn untyped(i: f64, note: Option<String>) -> Result<String, ToolError> {
    let _ = note;
    Ok(format!("{i}"))
}

/// Calls `typed` once and returns its text.
#[tool]
async fn caller(ctx: &ToolContext, i: f64) -> Result<String, ToolError> {
    let result = ctx.call_tool("typed", json!({ "i": i })).await?;
    Ok(result.text_content())
}

/// What `caller` does besides its nested call: the same arguments built (and dropped), and
/// a text of the same form returned. `caller` less this is what the nested call costs,
/// with taking its result apart (the text read, the result dropped).
#[tool]
async fn inline(i: f64) -> Result<String, ToolError> {
    let arguments = json!({ "i": i });
    let i = arguments["i"].as_f64().unwrap_or_default();
    Ok(format!("{{\"i\":{i}}}"))
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

/// The tool sets of the rows `--only` can name.
fn row_tools(row: &str, schema: &Value) -> Option<ToolSet> {
    Some(match row {
        "trivial" => ToolSet::new([Arc::new(Trivial {
            schema: schema.clone(),
            sleep: None,
        }) as Arc<dyn AgentTool>]),
        "untyped" => ToolSet::new([wrap(Arc::new(UntypedTool), None)]),
        "typed" => ToolSet::new([wrap(Arc::new(TypedTool), None)]),
        "caller" => ToolSet::new([
            wrap(Arc::new(TypedTool), None),
            wrap(Arc::new(CallerTool), None),
        ]),
        "inline" => ToolSet::new([
            wrap(Arc::new(TypedTool), None),
            wrap(Arc::new(InlineTool), None),
        ]),
        _ => return None,
    })
}

/// `--only ROW --batches K`: K batches of 1,000 parallel calls of one row, nothing printed.
fn only(args: &[String]) -> Option<(String, usize)> {
    let at = args.iter().position(|a| a == "--only")?;
    let row = args.get(at + 1).cloned().unwrap_or_default();
    let batches = args
        .iter()
        .position(|a| a == "--batches")
        .and_then(|b| args.get(b + 1))
        .and_then(|k| k.parse().ok())
        .unwrap_or(1);
    Some((row, batches))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some((row, batches)) = only(&args) {
        // One worker thread: callgrind runs threads one at a time anyway, and a single
        // worker makes the count the same from run to run.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let schema = json!({
            "type": "object",
            "properties": {"i": {"type": "number"}, "note": {"type": "string"}},
            "required": ["i"]
        });
        let Some(tools) = row_tools(&row, &schema) else {
            eprintln!("--only takes trivial, untyped, typed, caller or inline, not {row:?}");
            std::process::exit(2);
        };
        let calls: Vec<_> = (0..1000)
            .map(|i| ToolCall::new(format!("call_{i}"), row.as_str(), json!({"i": i})))
            .collect();
        runtime.block_on(async {
            for _ in 0..batches {
                batch_ms(&tools, &calls, &RunnerConfig::default()).await;
            }
        });
        return;
    }
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
            wrap(Arc::new(UntypedTool), None),
            wrap(Arc::new(TypedTool), None),
            wrap(Arc::new(CallerTool), None),
            wrap(Arc::new(InlineTool), None),
        ]);
        for (name, label) in [
            ("untyped", "parallel, #[tool] text result"),
            ("typed", "parallel, #[tool] typed result"),
            ("caller", "parallel, one nested call each"),
            (
                "inline",
                "parallel, the caller's own work without its nested call",
            ),
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
