//! What `pi-tools check` costs over a large mounted catalog: a server listing thousands of
//! tools whose schemas vary as a public catalog's do (`tests/mount/wild_server.py` with
//! `WILD_TOOLS=N`: nested objects, string, integer and free-form enums, dates, free-form
//! objects, contradictions, dotted names), mounted as `wild` with every tool active.
//!
//! It runs this example as the `pi-tools` command line (`check`) several times and prints
//! the wall-clock and CPU time of each run (starting the server and listing its tools
//! included), then, in process, the time of each part of what `check` adds: rendering every tool in
//! every dialect and looking for contradictions.
//!
//! ```text
//! cargo run --release -p pi-tools-examples --example bench_catalog -- [--tools 3416] [--runs 5]
//! ```

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use pi_tools::config::ServerSettings;
use pi_tools::dialect::{Dialect, tool_schemas};
use pi_tools::mount::{McpServerTools, MountOptions};
use pi_tools::tool::contradictions;

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    // Spawned as the command line (`check`, and the guard it starts, `env-guard`): be it.
    // The guard spawned as the benchmark would run the benchmark again beside the check.
    if matches!(
        std::env::args().nth(1).as_deref(),
        Some("check" | "env-guard")
    ) {
        return pi_tools::cli::main();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    match bench(number("--tools", 3416), number("--runs", 5)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_catalog: {e}");
            ExitCode::FAILURE
        }
    }
}

fn server_command() -> Result<Vec<String>, Error> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/mount/wild_server.py")
        .canonicalize()?;
    let script = script.to_str().ok_or("the script's path is not UTF-8")?;
    Ok(vec!["python3".into(), "-u".into(), script.into()])
}

fn bench(tools: usize, runs: usize) -> Result<(), Error> {
    let work = tempfile::TempDir::new()?;
    let config = work.path().join("pi-tools.toml");
    let command: Vec<String> = server_command()?
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?;
    std::fs::write(
        &config,
        format!(
            "[tools]\nactive = [\"wild__*\"]\n\n[mcp.servers.wild]\ncommand = [{}]\nenv = {{ WILD_TOOLS = \"{tools}\" }}\nstartup_timeout_secs = 120\n",
            command.join(", ")
        ),
    )?;
    let mut times = Vec::with_capacity(runs);
    let mut cpu = Vec::with_capacity(runs);
    let mut summary = String::new();
    for _ in 0..runs {
        let cpu_before = children_cpu();
        let start = Instant::now();
        let out = Command::new(std::env::current_exe()?)
            .arg("check")
            .arg("--config")
            .arg(&config)
            .current_dir(work.path())
            .stdin(Stdio::null())
            .output()?;
        times.push(start.elapsed());
        cpu.push(children_cpu().saturating_sub(cpu_before));
        if !out.status.success() {
            return Err(format!(
                "check failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        summary = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    let left_out = summary
        .lines()
        .filter(|l| l.starts_with("left out of"))
        .count();
    let warnings = summary
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .count();
    times.sort();
    cpu.sort();
    println!(
        "pi-tools check over {tools} mounted tools, {runs} runs (server start and listing included)"
    );
    println!(
        "  wall clock: median {:.3} s, min {:.3} s, max {:.3} s (target: under 2 s)",
        secs(times[times.len() / 2]),
        secs(times[0]),
        secs(times[times.len() - 1])
    );
    println!(
        "  CPU time (user + system, the check and the server it starts): median {:.3} s; the wall clock includes waiting for the CPU on a loaded machine",
        secs(cpu[cpu.len() / 2])
    );
    println!("  it reported {left_out} tools left out of some dialect and {warnings} warnings");
    in_process(tools)
}

/// The parts `check` adds, in process, over the same tools.
fn in_process(tools: usize) -> Result<(), Error> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let mut settings = ServerSettings::stdio("wild", server_command()?);
        settings.startup_timeout = Duration::from_secs(120);
        if let pi_tools::config::ServerTransport::Stdio { env, .. } = &mut settings.transport {
            env.insert("WILD_TOOLS".into(), tools.to_string());
        }
        let start = Instant::now();
        let cwd = std::env::current_dir()?;
        let server = McpServerTools::connect_in(settings, &cwd, &MountOptions::default()).await?;
        let mounted = start.elapsed();
        let definitions = server.definitions();
        let start = Instant::now();
        let mut left_out = 0;
        for dialect in Dialect::ALL {
            left_out += tool_schemas(definitions.iter().map(|t| t.as_ref()), dialect)
                .excluded
                .len();
        }
        let rendered = start.elapsed();
        let start = Instant::now();
        let warnings = contradictions::warnings(definitions.iter().map(|t| t.as_ref())).len();
        let linted = start.elapsed();
        println!("in process, {} tools:", definitions.len());
        println!(
            "  mount (start, handshake, listing): {:.3} s",
            secs(mounted)
        );
        println!(
            "  every tool in all {} dialects: {:.3} s ({left_out} left out)",
            Dialect::ALL.len(),
            secs(rendered)
        );
        println!(
            "  contradictions: {:.3} s ({warnings} warnings)",
            secs(linted)
        );
        server.end().await;
        Ok(())
    })
}

/// The CPU time (user and system) of the child processes waited for so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
