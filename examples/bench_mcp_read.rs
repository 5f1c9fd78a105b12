//! Small reads over MCP stdio, against the official file server: `scripts/bench-mcp.sh`.
//!
//! Spawns `pi-tools mcp` (the path in `PI_TOOLS_BIN`, else `target/release/pi-tools`) and,
//! with `--reference NODE SCRIPT`, `@modelcontextprotocol/server-filesystem` on the same
//! directory, and reads a 1 KB file through each with rmcp's client: 2,000 calls one at a
//! time, then 2,000 with 8 in flight, after a warm-up of 200. For each it prints calls per
//! second, the median latency and the server's CPU time per call (user plus system, from
//! `/proc/<pid>/stat`, so the client's own work is not counted).
//!
//! ```sh
//! cargo build --release -p pi-tools --bin pi-tools --example bench_mcp_read
//! target/release/examples/bench_mcp_read [--reference NODE SCRIPT]
//! ```

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

const CALLS: usize = 2_000;
const WARM_UP: usize = 200;

type Error = Box<dyn std::error::Error>;

/// One server under test: its client session, its process and how it names the read.
struct Server {
    name: &'static str,
    client: RunningService<RoleClient, ()>,
    child: tokio::process::Child,
    tool: &'static str,
    arguments: Value,
}

impl Server {
    async fn spawn(
        name: &'static str,
        mut command: tokio::process::Command,
        tool: &'static str,
        arguments: Value,
    ) -> Result<Server, Error> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{name} cannot be started: {e}"))?;
        let stdin = child.stdin.take().ok_or("stdin is piped")?;
        let stdout = child.stdout.take().ok_or("stdout is piped")?;
        let client = ().serve((stdout, stdin)).await?;
        Ok(Server {
            name,
            client,
            child,
            tool,
            arguments,
        })
    }

    /// Calls per second, median latency and server CPU per call, for `calls` reads with
    /// `in_flight` at a time.
    async fn measure(&self, calls: usize, in_flight: usize) -> Result<Figures, Error> {
        let pid = self.child.id().ok_or("the server has ended")?;
        let call = |_| async move {
            let Value::Object(args) = self.arguments.clone() else {
                unreachable!("the arguments are an object")
            };
            let params = CallToolRequestParams::new(self.tool).with_arguments(args);
            let sent = Instant::now();
            let result = self.client.call_tool(params).await;
            (sent.elapsed(), result)
        };
        let cpu_before = cpu_time(pid)?;
        let started = Instant::now();
        let outcomes: Vec<_> = stream::iter(0..calls)
            .map(call)
            .buffer_unordered(in_flight)
            .collect()
            .await;
        let elapsed = started.elapsed();
        let cpu = cpu_time(pid)? - cpu_before;
        let mut latencies = Vec::with_capacity(calls);
        for (latency, result) in outcomes {
            let result = result?;
            if result.is_error == Some(true) {
                return Err(format!("{}: a read failed: {result:?}", self.name).into());
            }
            latencies.push(latency);
        }
        latencies.sort();
        Ok(Figures {
            calls_per_sec: calls as f64 / elapsed.as_secs_f64(),
            p50: latencies[latencies.len() / 2],
            cpu_per_call: cpu / calls as u32,
        })
    }

    async fn end(mut self) -> Result<(), Error> {
        self.client.cancel().await?;
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        Ok(())
    }
}

struct Figures {
    calls_per_sec: f64,
    p50: Duration,
    cpu_per_call: Duration,
}

/// A process's user plus system CPU time so far.
fn cpu_time(pid: u32) -> Result<Duration, Error> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .ok_or("an unreadable /proc stat")?
        .1
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15; the split starts at field 3.
    let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    // SAFETY: sysconf only reads a system constant.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_sec = u64::try_from(per_sec).unwrap_or(100).max(1);
    Ok(Duration::from_nanos(ticks * 1_000_000_000 / per_sec))
}

fn pi_tools_bin() -> Result<PathBuf, Error> {
    let bin = std::env::var_os("PI_TOOLS_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/pi-tools"),
        PathBuf::from,
    );
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "{} is not there; build it with `cargo build --release -p pi-tools --bin pi-tools` or set PI_TOOLS_BIN",
            bin.display()
        )
        .into())
    }
}

async fn servers(dir: &Path, reference: Option<(PathBuf, PathBuf)>) -> Result<Vec<Server>, Error> {
    let file = dir.join("one-kb.txt");
    let mut command = tokio::process::Command::new(pi_tools_bin()?);
    command.arg("mcp").arg("--cwd").arg(dir);
    let mut list =
        vec![Server::spawn("pi-tools", command, "read", json!({"path": "one-kb.txt"})).await?];
    if let Some((node, script)) = reference {
        let mut command = tokio::process::Command::new(node);
        command.arg(script).arg(dir);
        let arguments = json!({"path": file.display().to_string()});
        list.push(Server::spawn("server-filesystem", command, "read_text_file", arguments).await?);
    }
    Ok(list)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let mut reference = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--reference" => {
                let node = args.next().ok_or("--reference takes NODE and SCRIPT")?;
                let script = args.next().ok_or("--reference takes NODE and SCRIPT")?;
                reference = Some((PathBuf::from(node), PathBuf::from(script)));
            }
            other => {
                return Err(format!("unknown argument {other}; see the example's header").into());
            }
        }
    }
    let dir = tempfile::tempdir()?;
    let line = "a line of text that is sixty-four bytes long, newline included.\n";
    std::fs::write(dir.path().join("one-kb.txt"), line.repeat(16))?;
    let servers = servers(dir.path(), reference).await?;

    println!("{CALLS} reads of a 1 KB file over stdio, each server measured in turn");
    println!();
    println!("| server | in flight | calls/s | p50 ms | server CPU ms/call |");
    println!("|---|---:|---:|---:|---:|");
    for in_flight in [1, 8] {
        for server in &servers {
            server.measure(WARM_UP, in_flight).await?;
            let figures = server.measure(CALLS, in_flight).await?;
            println!(
                "| {} | {in_flight} | {:.0} | {:.3} | {:.3} |",
                server.name,
                figures.calls_per_sec,
                figures.p50.as_secs_f64() * 1e3,
                figures.cpu_per_call.as_secs_f64() * 1e3,
            );
        }
    }
    for server in servers {
        server.end().await?;
    }
    Ok(())
}
