//! The memory of idle MCP sessions: opens many sessions against `pi-tools mcp --http` and
//! prints the server's peak resident set and what one idle session costs.
//!
//! This example is also the `pi-tools` command line (`pi_tools::cli::main`); it spawns
//! itself as `mcp --http 127.0.0.1:0` with the default tools and `[mcp] max_sessions`
//! raised above the number of sessions, so none is evicted. Each session is what a client
//! that connects and then waits leaves behind: `initialize`, then
//! `notifications/initialized`, then nothing. Eight sessions are opened first (the
//! server's one-time allocations), then the server's resident set is read (`VmRSS`); then
//! the rest are opened, 32 at a time over a shared pool of connections, and the peak
//! (`VmHWM`) is read. Per session is (peak − before) / sessions opened after the reading.
//! At the end the first session is asked `tools/list`, to show it is still live.
//!
//! ```text
//! cargo build --release --example bench_mcp_sessions
//! target/release/examples/bench_mcp_sessions [--sessions 10000]
//! ```

use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt, TryStreamExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// Sessions opened before the first reading, so one-time allocations are not counted.
const WARM_SESSIONS: usize = 8;
/// Sessions being opened at once (within the server's 64 connections per client).
const OPENING_AT_ONCE: usize = 32;
const STARTUP: Duration = Duration::from_secs(30);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// `[mcp] max_sessions` by default.
const DEFAULT_MAX_SESSIONS: usize = 4096;

#[path = "support/mcp_http.rs"]
mod mcp_http;
use mcp_http::{answer, bench_main, post};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    // Spawned as the server: be the `pi-tools` command line.
    bench_main("bench_mcp_sessions", sessions_argument, run)
}

/// `--sessions N` (default 10,000).
fn sessions_argument() -> Result<usize, String> {
    let mut sessions = 10_000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sessions" => {
                sessions = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|n| *n > WARM_SESSIONS)
                    .ok_or(format!(
                        "--sessions takes a number of sessions above {WARM_SESSIONS}"
                    ))?;
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; see the example's documentation"
                ));
            }
        }
    }
    Ok(sessions)
}

async fn run(sessions: usize) -> Result<(), Error> {
    let work = tempfile::tempdir()?;
    let config = work.path().join("bench.toml");
    std::fs::write(
        &config,
        format!("[mcp]\nmax_sessions = {}\n", sessions + WARM_SESSIONS),
    )?;
    let exe = std::env::current_exe()?;
    let (mut child, url) = spawn_server(&exe, &config, work.path()).await?;
    let pid = child.id().ok_or("the server has no process id")?;
    // reqwest's TLS here has no crypto provider of its own (see Cargo.toml): *ring*.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .pool_max_idle_per_host(OPENING_AT_ONCE)
        .build()?;

    let first = open_session(&http, &url).await?;
    for _ in 1..WARM_SESSIONS {
        open_session(&http, &url).await?;
    }
    // Let the warm-up's connections and tasks settle before the reading.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = status_kib(pid, "VmRSS:").ok_or("cannot read the server's VmRSS")?;

    let started = Instant::now();
    stream::iter(0..sessions)
        .map(|_| open_session(&http, &url))
        .buffer_unordered(OPENING_AT_ONCE)
        .try_for_each(|_| std::future::ready(Ok(())))
        .await?;
    let took = started.elapsed();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let peak = status_kib(pid, "VmHWM:").ok_or("cannot read the server's VmHWM")?;
    let now = status_kib(pid, "VmRSS:").ok_or("cannot read the server's VmRSS")?;

    // The first session is still there: nothing was evicted.
    let listed = post(
        &http,
        &url,
        Some(&first),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await?;
    let listed = answer(listed, 1).await?;
    let tools = listed["result"]["tools"].as_array().map_or(0, Vec::len);
    if tools == 0 {
        return Err(format!("the first session no longer answers: {listed}").into());
    }

    let per_session = (peak.saturating_sub(before) * 1024) as f64 / sessions as f64;
    println!(
        "{sessions} idle sessions opened in {:.1} s ({:.0} sessions/s)",
        took.as_secs_f64(),
        sessions as f64 / took.as_secs_f64()
    );
    println!(
        "server RSS: {:.1} MB before, {:.1} MB peak (VmHWM), {:.1} MB at the end",
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        now as f64 / 1024.0
    );
    println!(
        "per idle session: {:.1} KB ({per_session:.0} bytes); the default bound, {DEFAULT_MAX_SESSIONS} sessions: {:.1} MB",
        per_session / 1024.0,
        per_session * DEFAULT_MAX_SESSIONS as f64 / 1024.0 / 1024.0
    );
    let _ = child.start_kill();
    let _ = child.wait().await;
    Ok(())
}

/// Spawns this executable as `pi-tools mcp --http` and waits for the address it serves on.
async fn spawn_server(exe: &Path, config: &Path, cwd: &Path) -> Result<(Child, String), Error> {
    let mut child = Command::new(exe)
        .args(["mcp", "--http", "127.0.0.1:0", "--config"])
        .arg(config)
        .arg("--cwd")
        .arg(cwd)
        .env_remove("RUST_LOG")
        .env_remove("PI_TOOLS_MCP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("the server cannot be started: {e}"))?;
    let stderr = child.stderr.take().ok_or("stderr is piped")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = tokio::time::timeout(STARTUP, async {
        while let Some(line) = lines.next_line().await? {
            if let Some(url) = line.strip_prefix("pi-tools: serving MCP on ") {
                return Ok::<_, std::io::Error>(Some(url.to_owned()));
            }
            eprintln!("server: {line}");
        }
        Ok(None)
    })
    .await
    .map_err(|_| format!("the server did not start within {STARTUP:?}"))??
    .ok_or("the server ended before it was ready")?;
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

/// Opens one session (`initialize`, then `notifications/initialized`) and leaves it idle.
async fn open_session(http: &reqwest::Client, url: &str) -> Result<String, Error> {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench_mcp_sessions", "version": "0"}}
    });
    let response = post(http, url, None, &initialize).await?;
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .ok_or("the server gave no Mcp-Session-Id")?
        .to_owned();
    let answered = answer(response, 0).await?;
    if answered.get("result").is_none() {
        return Err(format!("initialize failed: {answered}").into());
    }
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = post(http, url, Some(&session), &initialized).await?;
    if response.status() != reqwest::StatusCode::ACCEPTED {
        return Err(format!("notifications/initialized got {}", response.status()).into());
    }
    Ok(session)
}

/// A `/proc/<pid>/status` figure in KiB (`VmRSS:`, `VmHWM:`).
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
