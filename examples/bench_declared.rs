//! A declared tool's latency beside bash running the same command. Run with
//! `cargo run --release --example bench_declared`.
//!
//! One toolbox, built from a configuration that declares `say` (`command = ["echo",
//! "{text}"]`), runs batches of one call each in turn: bash with `echo hello`, then `say`
//! with `hello`, pair after pair, unconfined in a temporary directory (the sandbox's cost is
//! `bench_sandbox`'s). It prints each one's median and its 10th and 90th percentiles, and
//! the median of the pairs' ratios (declared / bash).

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::config::Config;
use pi_tools::env::WithEnv;
use pi_tools::env::local::LocalEnv;
use pi_tools::toolbox::Toolbox;
use pi_tools::{NoopSink, Registry, ToolCall, execute_tool_calls};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CONFIG: &str = r#"[tools]
active = ["bash", "say"]

[tool.say]
description = "Say a text."
command = ["echo", "{text}"]
[tool.say.params.text]
type = "string"
"#;

const PAIRS: usize = 300;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn show(name: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{name:<10} median {:>7.0} µs   p10 {:>7.0} µs   p90 {:>7.0} µs",
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.1).as_secs_f64() * 1e6,
        percentile(&times, 0.9).as_secs_f64() * 1e6,
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let registered: Vec<_> = Registry::from_inventory()?.iter().cloned().collect();
    let config = Config::parse(CONFIG, "bench.toml", &registered)?;
    let toolbox = Toolbox::new(registered, &config, Default::default());
    let runner = toolbox
        .runner_config()
        .with_env(Arc::new(LocalEnv::new(dir.path())));
    let tools = toolbox.tool_set();
    let cancel = CancellationToken::new();
    let bash = [ToolCall::new("b", "bash", json!({"command": "echo hello"}))];
    let say = [ToolCall::new("s", "say", json!({"text": "hello"}))];
    let (mut bash_times, mut say_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..PAIRS + 10 {
        let started = Instant::now();
        let outcome = execute_tool_calls(tools, &bash, &runner, &cancel, &NoopSink).await;
        let bash_time = started.elapsed();
        assert!(!outcome.messages[0].is_error, "{:?}", outcome.messages[0]);
        let started = Instant::now();
        let outcome = execute_tool_calls(tools, &say, &runner, &cancel, &NoopSink).await;
        let say_time = started.elapsed();
        assert!(!outcome.messages[0].is_error, "{:?}", outcome.messages[0]);
        // The first rounds warm the caches and the process table.
        if round >= 10 {
            bash_times.push(bash_time);
            say_times.push(say_time);
            ratios.push(say_time.as_secs_f64() / bash_time.as_secs_f64());
        }
    }
    println!("{PAIRS} pairs of one-call batches, unconfined, in turn:");
    show("bash", bash_times);
    show("declared", say_times);
    ratios.sort_by(f64::total_cmp);
    println!(
        "declared / bash, median of the pairs: {:.3}",
        ratios[ratios.len() / 2]
    );
    Ok(())
}
