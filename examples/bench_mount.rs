//! What mounting costs: the reference server's `echo`, called directly and through
//! `pi-tools mcp` as a gateway (the server mounted as `everything`), side by side.
//! `scripts/bench-mount.sh` installs the reference server and runs this in release mode.
//!
//! Both paths are stdio sessions of rmcp's client, one call at a time: `direct` talks to
//! `node server-everything` itself; `gateway` talks to this example spawned as the
//! `pi-tools` command line (`mcp`, with a configuration that mounts the same server and
//! activates only `everything__echo`), which validates the call, runs it through its runner
//! and forwards it to its own `node server-everything`. The rounds alternate between the two,
//! so both share the machine's load; the figures are the median and mean latency of each,
//! and the gateway's overhead over the direct call.
//!
//! ```text
//! cargo build --release -p pi-tools --example bench_mount
//! target/release/examples/bench_mount NODE SCRIPT [--calls 500] [--rounds 10]
//! ```

use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::json;
use tokio::process::{Child, Command};

const STARTUP: Duration = Duration::from_secs(60);

type Error = Box<dyn std::error::Error + Send + Sync>;
type Client = RunningService<RoleClient, ()>;

fn main() -> ExitCode {
    // Spawned as the gateway: be the `pi-tools` command line.
    // The gateway (`mcp`) and the guard it starts (`env-guard`), which spawned as the
    // benchmark would run it again beside the measured gateway.
    if matches!(
        std::env::args().nth(1).as_deref(),
        Some("mcp" | "env-guard")
    ) {
        return pi_tools::cli::main();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(node), Some(script)) = (args.first(), args.get(1)) else {
        eprintln!("usage: bench_mount NODE SCRIPT [--calls N] [--rounds R]");
        return ExitCode::from(2);
    };
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let calls = number("--calls", 500);
    let rounds = number("--rounds", 10);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    match runtime.block_on(bench(node, script, calls, rounds)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_mount: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn bench(node: &str, script: &str, calls: usize, rounds: usize) -> Result<(), Error> {
    let work = tempfile::TempDir::new()?;
    let config = work.path().join("pi-tools.toml");
    std::fs::write(
        &config,
        format!(
            "[tools]\nactive = [\"everything__echo\"]\n\n[mcp.servers.everything]\ncommand = [{}, {}]\n",
            serde_json::to_string(node)?,
            serde_json::to_string(script)?
        ),
    )?;
    let mut direct = Command::new(node);
    direct.arg(script).arg("stdio");
    let mut gateway = Command::new(std::env::current_exe()?);
    gateway
        .arg("mcp")
        .arg("--cwd")
        .arg(work.path())
        .arg("--config")
        .arg(&config);
    let (direct, mut direct_child) = connect(direct).await?;
    let (gateway, mut gateway_child) = connect(gateway).await?;
    // Warm-up: the first calls start the mounted server and fill caches on both paths.
    for _ in 0..50 {
        echo(&direct, "echo").await?;
        echo(&gateway, "everything__echo").await?;
    }
    let mut direct_times = Vec::with_capacity(calls * rounds);
    let mut gateway_times = Vec::with_capacity(calls * rounds);
    for _ in 0..rounds {
        for _ in 0..calls {
            direct_times.push(echo(&direct, "echo").await?);
        }
        for _ in 0..calls {
            gateway_times.push(echo(&gateway, "everything__echo").await?);
        }
    }
    let (direct_median, direct_mean) = figures(&mut direct_times);
    let (gateway_median, gateway_mean) = figures(&mut gateway_times);
    println!(
        "{} calls each, one at a time, {rounds} alternating rounds",
        calls * rounds
    );
    println!(
        "direct  (client -> node server):            median {direct_median:.3} ms, mean {direct_mean:.3} ms"
    );
    println!(
        "gateway (client -> pi-tools mcp -> server): median {gateway_median:.3} ms, mean {gateway_mean:.3} ms"
    );
    println!(
        "overhead of the gateway: median {:.3} ms, mean {:.3} ms per call (target: at most 0.3 ms)",
        gateway_median - direct_median,
        gateway_mean - direct_mean
    );
    // Closing their input ends both servers (the gateway ends its mounted one).
    direct.cancel().await?;
    gateway.cancel().await?;
    for child in [&mut direct_child, &mut gateway_child] {
        if tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .is_err()
        {
            child.kill().await?;
        }
    }
    Ok(())
}

async fn connect(mut command: Command) -> Result<(Client, Child), Error> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let client = tokio::time::timeout(STARTUP, ().serve((stdout, stdin))).await??;
    Ok((client, child))
}

/// One `echo` call's latency, in milliseconds.
async fn echo(client: &Client, tool: &'static str) -> Result<f64, Error> {
    let mut params = CallToolRequestParams::new(tool);
    params.arguments = json!({"message": "hello from the benchmark"})
        .as_object()
        .cloned();
    let started = Instant::now();
    let result = client.peer().call_tool(params).await?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let text = serde_json::to_value(&result)?;
    if text["content"][0]["text"] != "Echo: hello from the benchmark" {
        return Err(format!("unexpected answer from {tool}: {text}").into());
    }
    Ok(elapsed)
}

/// Median and mean.
fn figures(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    (median, mean)
}
