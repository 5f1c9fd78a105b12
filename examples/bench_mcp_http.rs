//! MCP server benchmark over Streamable HTTP (and stdio), against the official TypeScript
//! SDK's reference server: `scripts/bench-mcp.sh` installs the reference and runs this.
//!
//! For each server and each number of concurrent clients (1, 8, 64), every client is a real
//! HTTP client of its own (its own connection pool, from its own loopback address,
//! 127.0.0.2 and up, as clients on their own hosts) with its own MCP session: it sends
//! `initialize` and `notifications/initialized`, then `tools/call` of an `echo` tool in a
//! loop, one request at a time, for a warm-up and then a measured window. Latency is from
//! sending a request to the end of its answer (the whole body, event stream or JSON);
//! calls/s counts the calls answered in the window. Each session is closed with `DELETE`.
//!
//! - `pi-tools`: this example is also the `pi-tools` command line (`pi_tools::cli::main`)
//!   with one more `#[tool]`, `echo`, linked in; it spawns itself as
//!   `mcp --http 127.0.0.1:0` with a configuration whose only active tool is `echo`. So the
//!   figures are those of `pi-tools mcp --http`: its runner, validation and transport.
//! - `reference`: `@modelcontextprotocol/server-everything streamableHttp`, its `echo`
//!   tool (same argument, same answer: `Echo: <message>`), run by the Node binary and the
//!   script named with `--reference NODE SCRIPT`; without it only pi-tools is measured.
//!
//! With `--stateless`, each HTTP cell is measured a second time with clients of MCP
//! 2026-07-28 (rows `http-2026`): no `initialize` and no session, every `tools/call` carrying
//! the protocol version and client capabilities in `_meta` (and the `Mcp-Method` /
//! `Mcp-Name` headers), each served outside any session. A server that does not serve
//! that era gets a row saying so.
//!
//! Both run on this machine in the same run, one after the other at each concurrency, so
//! they share its load; the clients run in this process. With `--stdio`, each server is
//! also measured over stdio: one session, with 1, 8 and 64 calls in flight (rmcp's client),
//! the servers taking turns four times a cell (a new session each turn);
//! `--no-http` leaves the HTTP cells out.
//! Peak RSS (`VmHWM`) of each server process is printed at the end.
//!
//! ```text
//! cargo build --release --example bench_mcp_http
//! target/release/examples/bench_mcp_http [--seconds 3] [--stdio] [--no-http] [--stateless] [--reference NODE SCRIPT]
//! ```

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use pi_tools::tool;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The benchmarked tool: the reference server's `echo`, with the same argument and answer.
#[tool(snippet = "Echo a message", read_only)]
async fn echo(
    /// Message to echo.
    message: String,
) -> Result<String, String> {
    Ok(format!("Echo: {message}"))
}

const CONCURRENCY: [usize; 3] = [1, 8, 64];
/// Turns each server takes at each stdio cell (the window is split between them).
const STDIO_ROUNDS: u32 = 4;
const WARM_UP: Duration = Duration::from_millis(500);
const STARTUP: Duration = Duration::from_secs(30);
/// A bound on any single request, so a stuck server ends the run instead of hanging it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const MESSAGE: &str = "hello from the benchmark";

#[path = "support/mcp_http.rs"]
mod mcp_http;
use mcp_http::{answer, bench_main, post};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    // Spawned as the server: be the `pi-tools` command line.
    bench_main("bench_mcp_http", Options::parse, run)
}

struct Options {
    window: Duration,
    stdio: bool,
    /// Leave out the HTTP cells (`--no-http`).
    no_http: bool,
    /// Measure each HTTP cell with 2026-07-28 clients too (`--stateless`).
    stateless: bool,
    reference: Option<(PathBuf, PathBuf)>,
}

impl Options {
    fn parse() -> Result<Options, String> {
        let mut options = Options {
            window: Duration::from_secs(3),
            stdio: false,
            no_http: false,
            stateless: false,
            reference: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--seconds" => {
                    let seconds: f64 = args
                        .next()
                        .and_then(|s| s.parse().ok())
                        .filter(|s: &f64| *s > 0.0 && *s <= 60.0)
                        .ok_or("--seconds takes a number of seconds from 0 to 60")?;
                    options.window = Duration::from_secs_f64(seconds);
                }
                "--stdio" => options.stdio = true,
                "--no-http" => options.no_http = true,
                "--stateless" => options.stateless = true,
                "--reference" => {
                    let (Some(node), Some(script)) = (args.next(), args.next()) else {
                        return Err(
                            "--reference takes the node binary and the server-everything script"
                                .into(),
                        );
                    };
                    options.reference = Some((node.into(), script.into()));
                }
                other => {
                    return Err(format!(
                        "unknown argument `{other}`; see the example's documentation"
                    ));
                }
            }
        }
        Ok(options)
    }
}

/// One measured cell: calls answered in the window and their latencies.
#[derive(Default)]
struct Figures {
    calls: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Figures {
    /// Another round's figures of the same cell.
    fn add(&mut self, round: Figures) {
        self.calls += round.calls;
        self.elapsed += round.elapsed;
        self.latencies.extend(round.latencies);
    }

    fn line(mut self, server: &str, transport: &str, concurrency: usize) -> String {
        self.latencies.sort();
        format!(
            "| {transport:<5} | {server:<9} | {concurrency:>3} | {:>8.0} | {:>8.3} | {:>8.3} |",
            self.calls as f64 / self.elapsed.as_secs_f64(),
            percentile(&self.latencies, 0.50).as_secs_f64() * 1e3,
            percentile(&self.latencies, 0.99).as_secs_f64() * 1e3,
        )
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

async fn run(options: Options) -> Result<(), Error> {
    let work = tempfile::tempdir()?;
    let config = work.path().join("bench.toml");
    std::fs::write(&config, "[tools]\nactive = [\"echo\"]\n")?;
    let exe = std::env::current_exe()?;

    let mut servers = vec![HttpServer::pi_tools(&exe, &config, work.path()).await?];
    if let Some((node, script)) = &options.reference {
        servers.push(HttpServer::reference(node, script).await?);
    }
    println!(
        "{} s per cell after a {} ms warm-up; every HTTP client has its own connection and session.",
        options.window.as_secs_f64(),
        WARM_UP.as_millis()
    );
    println!("| transport | server | clients | calls/s | p50 ms | p99 ms |");
    println!("|---|---|---:|---:|---:|---:|");
    for concurrency in CONCURRENCY.into_iter().filter(|_| !options.no_http) {
        for server in &servers {
            let figures = http_cell(&server.url, concurrency, options.window, Era::Session).await?;
            println!("{}", figures.line(server.name, "http", concurrency));
            if options.stateless {
                match http_cell(&server.url, concurrency, options.window, Era::Stateless).await {
                    Ok(figures) => {
                        println!("{}", figures.line(server.name, "http-2026", concurrency));
                    }
                    Err(err) => println!(
                        "| http-2026 | {:<9} | {concurrency:>3} | not served: {err} |",
                        server.name
                    ),
                }
            }
        }
    }
    if options.stdio {
        let mut commands = vec![("pi-tools", stdio_pi_tools(&exe, &config, work.path()))];
        if let Some((node, script)) = &options.reference {
            let mut command = Command::new(node);
            command.arg(script).arg("stdio");
            commands.push(("reference", command));
        }
        // The servers take turns, STDIO_ROUNDS times a cell, so a change in the machine's
        // load during the run weighs on both alike.
        for concurrency in CONCURRENCY {
            let mut totals: Vec<Figures> = commands.iter().map(|_| Figures::default()).collect();
            for _ in 0..STDIO_ROUNDS {
                for ((name, command), total) in commands.iter().zip(&mut totals) {
                    let round = options.window.div_f64(STDIO_ROUNDS as f64);
                    let figures =
                        stdio_cell(name, command_clone(command), concurrency, round).await?;
                    total.add(figures);
                }
            }
            for ((name, _), total) in commands.iter().zip(totals) {
                println!("{}", total.line(name, "stdio", concurrency));
            }
        }
    }
    for server in &mut servers {
        let rss = server.child.id().and_then(peak_rss_kib).map_or_else(
            || "unknown".to_owned(),
            |kib| format!("{:.1} MiB", kib as f64 / 1024.0),
        );
        println!("peak RSS of the {} HTTP server: {rss}", server.name);
        let _ = server.child.start_kill();
        let _ = server.child.wait().await;
    }
    Ok(())
}

/// A server process answering Streamable HTTP on `url`; killed when dropped.
struct HttpServer {
    name: &'static str,
    url: String,
    child: Child,
}

impl HttpServer {
    async fn pi_tools(exe: &Path, config: &Path, cwd: &Path) -> Result<HttpServer, Error> {
        let mut command = Command::new(exe);
        command
            .args(["mcp", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .arg("--cwd")
            .arg(cwd)
            .env_remove("RUST_LOG")
            .env_remove("PI_TOOLS_MCP_TOKEN")
            .stdout(Stdio::null());
        let (child, url) = spawn_until(command, "pi-tools", |line| {
            line.strip_prefix("pi-tools: serving MCP on ")
                .map(str::to_owned)
        })
        .await?;
        Ok(HttpServer {
            name: "pi-tools",
            url,
            child,
        })
    }

    async fn reference(node: &Path, script: &Path) -> Result<HttpServer, Error> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut command = Command::new(node);
        command
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            // It logs every request on stdout; a terminal or pipe would slow it down.
            .stdout(Stdio::null());
        let (child, _) = spawn_until(command, "the reference server", |line| {
            line.contains("listening on port").then(String::new)
        })
        .await?;
        Ok(HttpServer {
            name: "reference",
            url: format!("http://127.0.0.1:{port}/mcp"),
            child,
        })
    }
}

/// Spawns `command` and reads its stderr until `ready` finds what it looks for; keeps
/// draining stderr afterwards so the server never blocks on a full pipe.
async fn spawn_until(
    mut command: Command,
    what: &str,
    ready: impl Fn(&str) -> Option<String>,
) -> Result<(Child, String), Error> {
    let mut child = command
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{what} cannot be started: {e}"))?;
    let stderr = child.stderr.take().ok_or("stderr is piped")?;
    let mut lines = BufReader::new(stderr).lines();
    let found = tokio::time::timeout(STARTUP, async {
        while let Some(line) = lines.next_line().await? {
            if let Some(found) = ready(&line) {
                return Ok::<_, std::io::Error>(Some(found));
            }
            eprintln!("{what}: {line}");
        }
        Ok(None)
    })
    .await
    .map_err(|_| format!("{what} did not start within {STARTUP:?}"))??
    .ok_or_else(|| format!("{what} ended before it was ready"))?;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, found))
}

/// How a benchmark client speaks MCP over HTTP.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Era {
    /// 2025-11-25: `initialize`, then every call in its session.
    Session,
    /// 2026-07-28: no session; every call carries its `_meta`.
    Stateless,
}

/// `concurrency` clients, each with its own session (or none, in the stateless era),
/// calling `echo` in a loop.
async fn http_cell(
    url: &str,
    concurrency: usize,
    window: Duration,
    era: Era,
) -> Result<Figures, Error> {
    let mut sessions = Vec::with_capacity(concurrency);
    for n in 0..concurrency {
        sessions.push(HttpSession::open(url, era, n).await?);
    }
    let started = Instant::now();
    let warm_end = started + WARM_UP;
    let end = warm_end + window;
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|mut session| {
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                loop {
                    let sent = Instant::now();
                    if sent >= end {
                        break;
                    }
                    session.call_echo().await?;
                    if sent >= warm_end {
                        latencies.push(sent.elapsed());
                    }
                }
                session.close().await;
                Ok::<_, Error>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    // The last calls started before the end and may finish a little after it.
    let elapsed = started.elapsed().saturating_sub(WARM_UP).max(window);
    Ok(Figures {
        calls: latencies.len(),
        elapsed,
        latencies,
    })
}

/// The loopback address client `n` connects from: its own, as clients on other hosts
/// would. From one address, 64 clients would be one client to pi-tools' per-address bound
/// on connections (64): a client sending one request at a time holds two connections
/// (reqwest opens a new one when the last answer's connection is not back in its pool
/// yet, and keeps both), so the 64-client cell's 65th connection was closed on arrival
/// ("error sending request"). Linux routes all of 127.0.0.0/8 to the loopback device.
fn client_address(n: usize) -> std::net::IpAddr {
    let [_, _, high, low] = u32::try_from(n + 2).unwrap_or(u32::MAX).to_be_bytes();
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, high, low))
}

/// One client: its own HTTP connection pool and MCP session (none in the stateless era).
struct HttpSession {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl HttpSession {
    /// Client `n`, connecting from [`client_address`]`(n)`.
    async fn open(url: &str, era: Era, n: usize) -> Result<HttpSession, Error> {
        // reqwest's TLS here has no crypto provider of its own (see Cargo.toml): *ring*.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .local_address(client_address(n))
            .build()?;
        if era == Era::Stateless {
            let mut client = HttpSession {
                http,
                url: url.to_owned(),
                session: None,
                next_id: 1,
            };
            // One call first, so a server that does not serve the era is told at once.
            client.call_echo().await?;
            return Ok(client);
        }
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench_mcp_http", "version": "0"}}
        });
        let response = post(&http, url, None, &initialize).await?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or("the server gave no Mcp-Session-Id")?
            .to_owned();
        let answer = answer(response, 0).await?;
        if answer.get("result").is_none() {
            return Err(format!("initialize failed: {answer}").into());
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = post(&http, url, Some(&session), &initialized).await?;
        if response.status() != reqwest::StatusCode::ACCEPTED {
            return Err(format!("notifications/initialized got {}", response.status()).into());
        }
        Ok(HttpSession {
            http,
            url: url.to_owned(),
            session: Some(session),
            next_id: 1,
        })
    }

    async fn call_echo(&mut self) -> Result<(), Error> {
        let id = self.next_id;
        self.next_id += 1;
        let response = match &self.session {
            Some(session) => {
                let call = json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"message": MESSAGE}}
                });
                post(&self.http, &self.url, Some(session), &call).await?
            }
            None => {
                let call = json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {
                        "name": "echo", "arguments": {"message": MESSAGE},
                        "_meta": {
                            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {},
                            "io.modelcontextprotocol/clientInfo":
                                {"name": "bench_mcp_http", "version": "0"}
                        }
                    }
                });
                self.http
                    .post(&self.url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "tools/call")
                    .header("Mcp-Name", "echo")
                    .body(call.to_string())
                    .send()
                    .await?
            }
        };
        let answer = answer(response, id).await?;
        let text = answer["result"]["content"][0]["text"].as_str();
        if answer["result"]["isError"] == true || text != Some(&format!("Echo: {MESSAGE}")) {
            return Err(format!("the echo call failed: {answer}").into());
        }
        Ok(())
    }

    async fn close(self) {
        let Some(session) = &self.session else {
            return;
        };
        let _ = self
            .http
            .delete(&self.url)
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-06-18")
            .send()
            .await;
    }
}

fn stdio_pi_tools(exe: &Path, config: &Path, cwd: &Path) -> Command {
    let mut command = Command::new(exe);
    command
        .arg("mcp")
        .arg("--config")
        .arg(config)
        .arg("--cwd")
        .arg(cwd)
        .env_remove("RUST_LOG");
    command
}

fn command_clone(command: &Command) -> Command {
    let std = command.as_std();
    let mut copy = Command::new(std.get_program());
    copy.args(std.get_args());
    for (key, value) in std.get_envs() {
        match value {
            Some(value) => copy.env(key, value),
            None => copy.env_remove(key),
        };
    }
    copy
}

/// One stdio session with `concurrency` calls in flight, through rmcp's client.
async fn stdio_cell(
    what: &str,
    mut command: Command,
    concurrency: usize,
    window: Duration,
) -> Result<Figures, Error> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{what} cannot be started: {e}"))?;
    let stdin = child.stdin.take().ok_or("stdin is piped")?;
    let stdout = child.stdout.take().ok_or("stdout is piped")?;
    let client = ().serve((stdout, stdin)).await?;
    let started = Instant::now();
    let warm_end = started + WARM_UP;
    let end = warm_end + window;
    let peer = &client;
    let worker = |_| async move {
        let mut latencies = Vec::new();
        loop {
            let sent = Instant::now();
            if sent >= end {
                break;
            }
            let mut arguments = serde_json::Map::new();
            arguments.insert("message".into(), Value::String(MESSAGE.into()));
            let params = CallToolRequestParams::new("echo").with_arguments(arguments);
            let result = peer.call_tool(params).await?;
            if result.is_error == Some(true) {
                return Err(format!("the echo call failed: {result:?}").into());
            }
            if sent >= warm_end {
                latencies.push(sent.elapsed());
            }
        }
        Ok::<_, Error>(latencies)
    };
    let outcomes: Vec<_> = stream::iter(0..concurrency)
        .map(worker)
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let mut latencies = Vec::new();
    for outcome in outcomes {
        latencies.extend(outcome?);
    }
    let elapsed = started.elapsed().saturating_sub(WARM_UP).max(window);
    let _ = client.cancel().await;
    let _ = child.start_kill();
    let _ = child.wait().await;
    Ok(Figures {
        calls: latencies.len(),
        elapsed,
        latencies,
    })
}

/// The peak resident set of process `pid`, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
