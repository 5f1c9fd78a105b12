//! The policy's cost on allowed calls: `cargo run --release --example bench_policy`.
//!
//! A batch of 1,000 calls of a trivial tool named `bash` (it returns at once; nothing runs)
//! with the command `git status && cargo test --quiet 2>&1 | tail -n 5 > log.txt`, first
//! with no policy, then under a 50-rule policy (40 command prefixes, 10 path rules) that
//! allows every one of these calls, so each command is read and each simple command and
//! redirection checked. The hook keeps the readings of the commands it saw last, so a
//! second line gives 1,000 distinct commands (`… --quiet t0`, `t1`, …), each read anew; then
//! the same policy over a tool with no `command` argument. Last, where the time of a distinct
//! command goes: reading it (`policy::shell::read`) and the whole `Policy::check`, called
//! directly. Each figure is the median of 21 batches after a warm-up.

use std::sync::Arc;
use std::time::Instant;

use pi_tools::config::Config;
use pi_tools::policy::{PolicyHook, shell};
use pi_tools::{
    AgentTool, BoxFuture, Extensions, NoopSink, RunnerConfig, ToolCall, ToolContext, ToolError,
    ToolResult, ToolSet, execute_tool_calls,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

struct Trivial {
    name: &'static str,
    schema: Value,
}

impl AgentTool for Trivial {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Returns at once."
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(
        &self,
        _args: Value,
        _ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async { Ok(ToolResult::text("ok")) })
    }
}

/// 40 command rules and 10 path rules, none of which matches the benchmark's calls.
fn fifty_rules() -> String {
    let mut text = String::from("[policy]\ndefault = \"allow\"\n");
    let words = [
        "rm", "dd", "mkfs", "shutdown", "reboot", "curl", "wget", "ssh", "scp", "sudo",
    ];
    for (i, word) in words.iter().enumerate() {
        for sub in ["push", "fetch", "reset", "clean"] {
            text.push_str(&format!(
                "[[policy.rule]]\ntool = \"bash\"\ncommand = [\"{word}{i}\", [\"{sub}\", \"x\"]]\ndecision = \"deny\"\n"
            ));
        }
    }
    for i in 0..10 {
        text.push_str(&format!(
            "[[policy.rule]]\ntool = [\"write\", \"edit\"]\npath = [\"secrets{i}/**\", \"**/.env{i}\"]\ndecision = \"deny\"\n"
        ));
    }
    text
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

async fn per_call_us(tools: &ToolSet, calls: &[ToolCall], config: &RunnerConfig) -> f64 {
    let mut times = Vec::new();
    for run in 0..24 {
        let start = Instant::now();
        let outcome =
            execute_tool_calls(tools, calls, config, &CancellationToken::new(), &NoopSink).await;
        let elapsed = start.elapsed().as_secs_f64();
        assert!(
            outcome.messages.iter().all(|m| !m.is_error),
            "a call was refused"
        );
        if run >= 3 {
            times.push(elapsed * 1e6 / calls.len() as f64);
        }
    }
    median(times)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The rules name the built-in tools, which a rule may name only when they are registered.
    let registered: Vec<_> = pi_tools::Registry::from_inventory()?
        .iter()
        .cloned()
        .collect();
    let config = Config::parse(&fifty_rules(), "bench.toml", &registered)?;
    assert_eq!(config.policy.rules.len(), 50);
    let tools: ToolSet = [
        Arc::new(Trivial {
            name: "bash",
            schema: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
        }) as Arc<dyn AgentTool>,
        Arc::new(Trivial {
            name: "read",
            schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }),
    ]
    .into_iter()
    .collect();
    let command = "git status && cargo test --quiet 2>&1 | tail -n 5 > log.txt";
    let shell: Vec<ToolCall> = (0..1000)
        .map(|i| ToolCall::new(format!("c{i}"), "bash", json!({ "command": command })))
        .collect();
    let distinct: Vec<ToolCall> = (0..1000)
        .map(|i| {
            let command =
                format!("git status && cargo test --quiet t{i} 2>&1 | tail -n 5 > log.txt");
            ToolCall::new(format!("d{i}"), "bash", json!({ "command": command }))
        })
        .collect();
    let reads: Vec<ToolCall> = (0..1000)
        .map(|i| ToolCall::new(format!("r{i}"), "read", json!({ "path": "src/lib.rs" })))
        .collect();
    let plain = RunnerConfig::default();
    let hook = PolicyHook::new(Arc::new(config.policy.clone()), Extensions::new());
    let guarded = RunnerConfig {
        before_tool_call: Some(Arc::new(hook)),
        ..RunnerConfig::default()
    };
    println!("1,000 allowed calls per batch, µs per call (median of 21 batches)");
    let (a, b) = (
        per_call_us(&tools, &shell, &plain).await,
        per_call_us(&tools, &shell, &guarded).await,
    );
    println!(
        "bash `{command}`: no policy {a:.2} µs, 50-rule policy {b:.2} µs (+{:.2})",
        b - a
    );
    let (a, b) = (
        per_call_us(&tools, &distinct, &plain).await,
        per_call_us(&tools, &distinct, &guarded).await,
    );
    println!(
        "bash, 1,000 distinct commands (each read anew): no policy {a:.2} µs, 50-rule policy {b:.2} µs (+{:.2})",
        b - a
    );
    let (a, b) = (
        per_call_us(&tools, &reads, &plain).await,
        per_call_us(&tools, &reads, &guarded).await,
    );
    println!(
        "read src/lib.rs: no policy {a:.2} µs, 50-rule policy {b:.2} µs (+{:.2})",
        b - a
    );
    let cwd = std::env::current_dir()?;
    let texts: Vec<&str> = distinct
        .iter()
        .filter_map(|c| c.arguments["command"].as_str())
        .collect();
    let read = direct_us(|| {
        for text in &texts {
            std::hint::black_box(shell::read(text));
        }
    });
    let check = direct_us(|| {
        for call in &distinct {
            std::hint::black_box(config.policy.check("bash", &call.arguments, &cwd));
        }
    });
    println!(
        "a distinct command, called directly: reading it {read:.2} µs, the whole check {check:.2} µs"
    );
    Ok(())
}

/// µs per call of 1,000 calls made by `batch`, the median of 21 runs after a warm-up.
fn direct_us(mut batch: impl FnMut()) -> f64 {
    let mut times = Vec::new();
    for run in 0..24 {
        let start = Instant::now();
        batch();
        if run >= 3 {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    median(times)
}
