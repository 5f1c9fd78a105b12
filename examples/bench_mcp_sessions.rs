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
//! With `--folders N` the working directory holds N folders (a hundred to a parent) that
//! every session's repository search covers; with `--call` each session runs one bash
//! call (`echo hi`) after opening, so its sandbox is used, then goes idle. After every
//! 1,000 sessions (and a pause of 1.2 s, for the sessions just woken to fall asleep again)
//! the server's open descriptors, inotify instances, private temporary directories
//! (`pi-tools-sandbox-*`) and resident set are printed, read in /proc.
//!
//! ```text
//! cargo build --release --example bench_mcp_sessions
//! target/release/examples/bench_mcp_sessions [--sessions 10000] [--folders 30000] [--call]
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

/// What to open: how many sessions, in how many folders, and whether each runs a call.
#[derive(Clone, Copy)]
struct Load {
    sessions: usize,
    folders: usize,
    call: bool,
}

/// `--sessions N` (default 10,000), `--folders N` (default 0), `--call`.
fn sessions_argument() -> Result<Load, String> {
    let mut sessions = 10_000;
    let mut folders = 0;
    let mut call = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--folders" => {
                folders = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--folders takes a number of folders")?;
            }
            "--call" => call = true,
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
    Ok(Load {
        sessions,
        folders,
        call,
    })
}

async fn run(load: Load) -> Result<(), Error> {
    let sessions = load.sessions;
    let work = tempfile::tempdir()?;
    for i in 0..load.folders {
        std::fs::create_dir_all(work.path().join(format!("d{}/e{i}", i / 100)))?;
    }
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
    let mut opened = 0;
    println!("| sessions | descriptors | inotify instances | sandbox directories | RSS (MB) |");
    println!("|---|---|---|---|---|");
    while opened < sessions {
        let chunk = (sessions - opened).min(1000);
        stream::iter(0..chunk)
            .map(|_| async {
                let session = open_session(&http, &url).await?;
                if load.call {
                    call_bash(&http, &url, &session).await?;
                }
                Ok::<_, Error>(())
            })
            .buffer_unordered(OPENING_AT_ONCE)
            .try_for_each(|_| std::future::ready(Ok(())))
            .await?;
        opened += chunk;
        // A woken session stays awake a second before it may sleep again: read once the
        // last ones could.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let (descriptors, inotify) = descriptors(pid);
        println!(
            "| {opened} | {descriptors} | {inotify} | {} | {:.1} |",
            sandbox_dirs(pid),
            status_kib(pid, "VmRSS:").unwrap_or(0) as f64 / 1024.0
        );
    }
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
        "{sessions} idle sessions{} opened in {:.1} s ({:.0} sessions/s), {} folders",
        if load.call {
            " (each after one bash call)"
        } else {
            ""
        },
        took.as_secs_f64(),
        sessions as f64 / took.as_secs_f64(),
        load.folders
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
    // A wrapping profiler writes its report when the server ends on its own: ask it to
    // (SIGTERM) before the kill.
    if std::env::var_os("BENCH_SERVER_WRAPPER").is_some()
        && let Some(pid) = child.id()
    {
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await;
        let _ = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    Ok(())
}

/// Spawns this executable as `pi-tools mcp --http` and waits for the address it serves on.
async fn spawn_server(exe: &Path, config: &Path, cwd: &Path) -> Result<(Child, String), Error> {
    // `BENCH_SERVER_WRAPPER` (a command and its arguments, split at spaces) runs the server
    // under another program, a heap profiler for one: `BENCH_SERVER_WRAPPER="valgrind
    // --tool=massif --massif-out-file=/tmp/massif.out"`.
    let wrapper = std::env::var("BENCH_SERVER_WRAPPER").unwrap_or_default();
    let mut words = wrapper.split_whitespace();
    let mut command = match words.next() {
        Some(program) => {
            let mut command = Command::new(program);
            command.args(words).arg(exe);
            command
        }
        None => Command::new(exe),
    };
    let mut child = command
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

/// One bash call in `session`, answered with `hi`.
async fn call_bash(http: &reqwest::Client, url: &str, session: &str) -> Result<(), Error> {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "bash", "arguments": {"command": "echo hi"}}});
    let answered = answer(post(http, url, Some(session), &call).await?, 1).await?;
    if answered["result"]["content"][0]["text"] != "hi" {
        return Err(format!("the call failed: {answered}").into());
    }
    Ok(())
}

/// The server's open descriptors, and how many of them are inotify instances.
fn descriptors(pid: u32) -> (usize, usize) {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return (0, 0);
    };
    let mut all = 0;
    let mut inotify = 0;
    for entry in entries.flatten() {
        all += 1;
        if std::fs::read_link(entry.path())
            .is_ok_and(|t| t.to_string_lossy() == "anon_inode:inotify")
        {
            inotify += 1;
        }
    }
    (all, inotify)
}

/// The server's private temporary directories, in the temporary directory and `/dev/shm`.
fn sandbox_dirs(pid: u32) -> usize {
    let prefix = format!("pi-tools-sandbox-{pid}-");
    [std::env::temp_dir(), "/dev/shm".into()]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .count()
}

/// A `/proc/<pid>/status` figure in KiB (`VmRSS:`, `VmHWM:`).
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
