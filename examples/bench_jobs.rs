//! What jobs cost: the latency from a job's first output to the model's read of it, the
//! bookkeeping a call pays (a runner call without jobs, with the session's notices in its
//! extensions or not; bash `echo hi` as a plain call and in job mode with a yield it ends
//! within), and the peak memory of a job flooding its output.
//!
//! The latency: a job prints the clock (`date +%s%N`) after a pause, while `job_output`
//! waits for it; the figure is the time from that clock to `job_output`'s return, so it
//! holds the command's own write, the pipe, the ring, the wake-up and the answer's
//! formatting. The flood: `head -c 500000000 /dev/zero` in the background, read by nobody
//! until it ends; the peak RSS this process added (`VmHWM`) against its bound of kept
//! output (1 MiB).
//!
//! ```text
//! cargo run --release --example bench_jobs -- [runs]
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::builtins::bash::{BashArgs, BashConfig, JobArgs, bash};
use pi_tools::builtins::jobs::output::job_output;
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{
    CancellationToken, Extensions, NoopSink, Notices, RunnerConfig, ToolCall, ToolContext,
    ToolError, ToolSet, execute_tool_calls, tool, wrap,
};

/// Does nothing: the runner's own cost per call.
#[tool]
async fn noop() -> Result<String, ToolError> {
    Ok(String::new())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Median and 90th percentile, in ms.
fn spread(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    (ms(times[times.len() / 2]), ms(times[times.len() * 9 / 10]))
}

/// This process's peak resident memory so far, in KB.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn job(command: &str, background: bool, yield_secs: Option<f64>) -> BashArgs {
    BashArgs {
        job: JobArgs {
            background,
            yield_secs,
            ..JobArgs::default()
        },
        ..BashArgs::new(command)
    }
}

/// Milliseconds from a job's first output (the clock it printed) to job_output's return.
async fn first_output_to_read(env: &Arc<dyn ExecutionEnv>, runs: usize) -> Vec<Duration> {
    let ctx = ToolContext::new("bench", CancellationToken::new()).with_env(Arc::clone(env));
    let mut times = Vec::with_capacity(runs);
    for id in 1..=runs as u64 {
        let command = "sleep 0.05; date +%s%N; sleep 30";
        bash(&ctx, &BashConfig::default(), job(command, true, None))
            .await
            .expect("the job starts");
        let read = job_output(&ctx, id, None, 5.0).await.expect("reads");
        let returned = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970");
        let printed: u128 = read
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("the job printed the clock");
        times.push(Duration::from_nanos(
            (returned.as_nanos().saturating_sub(printed)) as u64,
        ));
        env.jobs().expect("jobs").get(id).expect("the job").kill();
    }
    times
}

/// The runner's time per call of a tool doing nothing, with `extensions`.
async fn runner_calls(extensions: Extensions, runs: usize) -> Vec<Duration> {
    let tools: ToolSet = [wrap(Arc::new(NoopTool), None)].into_iter().collect();
    let config = RunnerConfig {
        extensions,
        ..RunnerConfig::default()
    };
    let calls = [ToolCall::new("n", "noop", serde_json::json!({}))];
    let cancel = CancellationToken::new();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        execute_tool_calls(&tools, &calls, &config, &cancel, &NoopSink).await;
        times.push(start.elapsed());
    }
    times
}

/// bash `echo hi` per call: plain, or in job mode with a yield it ends within.
async fn echo_calls(env: &Arc<dyn ExecutionEnv>, yielding: bool, runs: usize) -> Vec<Duration> {
    let ctx = ToolContext::new("bench", CancellationToken::new()).with_env(Arc::clone(env));
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let args = job("echo hi", false, yielding.then_some(10.0));
        let start = Instant::now();
        bash(&ctx, &BashConfig::default(), args)
            .await
            .expect("echo runs");
        times.push(start.elapsed());
    }
    times
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()));

    let (median, p90) = spread(first_output_to_read(&env, 30.min(runs)).await);
    println!("first output to the model's read: median {median:.2} ms, p90 {p90:.2} ms");

    // Alternate the two, so a busy spell of the machine hits both.
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        without.extend(runner_calls(Extensions::new(), runs * 10).await);
        with.extend(runner_calls(Extensions::new().with(Notices::default()), runs * 10).await);
    }
    let (a, _) = spread(without);
    let (b, _) = spread(with);
    println!(
        "runner call without / with the session's notices: {:.2} / {:.2} us ({:+.2} us)",
        a * 1000.0,
        b * 1000.0,
        (b - a) * 1000.0
    );
    let (mut plain, mut yielded) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        plain.extend(echo_calls(&env, false, runs).await);
        yielded.extend(echo_calls(&env, true, runs).await);
    }
    let (a, _) = spread(plain);
    let (b, _) = spread(yielded);
    println!(
        "bash echo hi plain / with a yield it ends within: {a:.3} / {b:.3} ms ({:+.3} ms)",
        b - a
    );

    let before = peak_rss_kb();
    let ctx = ToolContext::new("bench", CancellationToken::new()).with_env(Arc::clone(&env));
    let started = Instant::now();
    let flood = "head -c 500000000 /dev/zero; echo end";
    let out = bash(&ctx, &BashConfig::default(), job(flood, true, None))
        .await
        .expect("the flood starts");
    let id = out.details.and_then(|d| d.job).expect("a job");
    let handle = env.jobs().expect("jobs").get(id).expect("the job");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    assert!(handle.ended_by(deadline).await, "the flood ends");
    let total = handle.peek(None, 0).total;
    println!(
        "a job flooding {} MB in {:.1} s: peak RSS added {:.1} MB (its kept output is bounded at 1 MiB)",
        total / 1_000_000,
        started.elapsed().as_secs_f64(),
        peak_rss_kb().saturating_sub(before) as f64 / 1024.0
    );
    env.end_session();
}
