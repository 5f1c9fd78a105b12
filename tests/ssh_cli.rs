//! `pi-tools run --ssh` and `pi-tools mcp --ssh` as separate processes against a real sshd on
//! 127.0.0.1: the tools change files on the "remote" side, one connection serves the
//! session, the command line uploads itself to serve commands there unless told not to, and
//! a malformed `--ssh` is a usage error naming the expected form.
#![cfg(all(feature = "ssh", feature = "cli"))]

use support::procfs::{processes_with, settle, settle_blocking};
use support::ssh as ssh_support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use ssh_support::{ALIAS, Sshd};

/// How long one answer of the binary may take on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(30);

fn pi_tools() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command.env_remove("RUST_LOG").env_remove("PI_TOOLS_CONFIG");
    command
}

/// A configuration file with every built-in tool active, in its own directory, and an SSH
/// `[env]` that uploads no remote server (`--ssh` gives the host and directory), so these
/// tests keep testing commands run each in an SSH session of its own.
fn all_tools_config(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("pi-tools.toml");
    std::fs::write(
        &file,
        format!(
            "[tools]\nactive = [\"read\", \"bash\", \"edit\", \"write\", \"grep\", \"find\", \"ls\"]\n\n\
             [env]\nkind = \"ssh\"\nhost = \"{ALIAS}\"\ncwd = \"/\"\nupload_helper = false\n"
        ),
    )
    .expect("config");
    file
}

/// `pi-tools mcp` over stdio, spoken to in JSON-RPC lines.
struct Mcp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl Mcp {
    fn spawn(mut command: Command) -> Mcp {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("pi-tools starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("the server reads its input");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and waits for its response.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .expect("the server answers in time");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Calls a tool; its text and error flag.
    fn call(&mut self, name: &str, arguments: Value) -> (String, bool) {
        let response = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let result = &response["result"];
        let text = result["content"]
            .as_array()
            .unwrap_or_else(|| panic!("a tool result: {response}"))
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"] == json!(true))
    }

    /// Closes the input and waits for the server to exit.
    fn finish(self) -> std::process::ExitStatus {
        let Mcp {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        rx.recv_timeout(PATIENCE)
            .expect("the server exits once its input closes")
            .expect("status")
    }
}

#[test]
fn mcp_over_ssh_serves_the_remote_directory() {
    let Some(sshd) = Sshd::start() else { return };
    let remote = tempfile::tempdir().expect("remote dir");
    let etc = tempfile::tempdir().expect("config dir");
    std::fs::write(remote.path().join("a.txt"), "one\ntwo\n").expect("a.txt");
    let mut command = pi_tools();
    command
        .arg("--config")
        .arg(all_tools_config(etc.path()))
        .arg("mcp")
        .arg("--ssh")
        .arg(format!("{ALIAS}{}", remote.path().display()))
        .arg("--ssh-config")
        .arg(sshd.config_file());
    let mut mcp = Mcp::spawn(command);

    assert_eq!(
        mcp.call("read", json!({"path": "a.txt"})),
        ("one\ntwo\n".to_string(), false)
    );
    let (text, error) = mcp.call("write", json!({"path": "sub/new.txt", "content": "made\n"}));
    assert!(!error, "{text}");
    assert_eq!(
        std::fs::read_to_string(remote.path().join("sub/new.txt")).expect("written remotely"),
        "made\n"
    );
    let (text, error) = mcp.call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}),
    );
    assert!(!error, "{text}");
    assert_eq!(
        std::fs::read_to_string(remote.path().join("a.txt")).expect("edited remotely"),
        "one\n2\n"
    );
    // The command runs in the remote directory; its background job ends with the session.
    // (Its duration, unique to this run, comes from a variable, so only the job's own
    // command line says `sleep 301.<pid>`.)
    let seconds = format!("301.{}", std::process::id());
    let job = format!("sleep {seconds}");
    let (text, error) = mcp.call(
        "bash",
        json!({"command": format!("pwd; echo out > from-bash.txt; t={seconds}; sleep $t >/dev/null 2>&1 &")}),
    );
    assert_eq!(
        (text.as_str(), error),
        (remote.path().display().to_string().as_str(), false)
    );
    assert_eq!(
        std::fs::read_to_string(remote.path().join("from-bash.txt")).expect("bash wrote"),
        "out\n"
    );
    assert_eq!(
        settle_blocking(1, || processes_with(&job).len()),
        1,
        "the job runs"
    );
    assert!(mcp.finish().success());
    assert_eq!(
        settle_blocking(0, || processes_with(&job).len()),
        0,
        "the remote background job ended with the session"
    );
}

#[test]
fn run_over_ssh_takes_ssh_settings_from_the_env_section() {
    let Some(sshd) = Sshd::start() else { return };
    let remote = tempfile::tempdir().expect("remote dir");
    let etc = tempfile::tempdir().expect("config dir");
    let config = etc.path().join("pi-tools.toml");
    std::fs::write(
        &config,
        format!(
            "[env]\nkind = \"ssh\"\nhost = \"{ALIAS}\"\ncwd = \"{}\"\nssh_config = \"{}\"\nupload_helper = false\n",
            remote.path().display(),
            sshd.config_file().display()
        ),
    )
    .expect("config");
    let batch = json!([
        {"id": "w", "name": "write", "arguments": {"path": "x.txt", "content": "remote\n"}},
        {"id": "b", "name": "bash", "arguments": {"command": "pwd; echo from-bash > b.txt"}}
    ]);
    let output = pi_tools()
        .arg("--config")
        .arg(&config)
        .args(["run", "--json", "--color", "never", "-"])
        .stdin_text(&batch.to_string());
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        std::fs::read_to_string(remote.path().join("x.txt")).expect("written remotely"),
        "remote\n"
    );
    let ends: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 2, "{stdout}");
    let bash = ends
        .iter()
        .find(|v| v["toolCallId"] == "b")
        .unwrap_or_else(|| panic!("bash ended: {stdout}"));
    assert_eq!(
        bash["result"]["content"][0]["text"],
        json!(remote.path().display().to_string()),
        "{bash}"
    );
    assert_eq!(
        std::fs::read_to_string(remote.path().join("b.txt")).expect("bash ran remotely"),
        "from-bash\n"
    );

    // The same with --ssh, which overrides [env]'s host and directory.
    let other = tempfile::tempdir().expect("another remote dir");
    let output = pi_tools()
        .arg("--config")
        .arg(&config)
        .args(["run", "--json", "--ssh"])
        .arg(format!("{ALIAS}{}", other.path().display()))
        .arg("-")
        .stdin_text(
            &json!([{"id": "w", "name": "write", "arguments": {"path": "y.txt", "content": "y"}}])
                .to_string(),
        );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(other.path().join("y.txt")).expect("written remotely"),
        "y"
    );
    assert!(!remote.path().join("y.txt").exists());
}

/// With no `upload_helper` key the command line uploads itself to the remote user's cache
/// directory, once, and the session's commands run under that uploaded `env-server`.
#[test]
fn the_command_line_uploads_itself_by_default_and_commands_run_through_it() {
    // A remote home of its own (the SFTP start directory, where the helper goes), so the
    // upload is seen to happen and goes away with the test.
    let home = tempfile::tempdir().expect("remote home");
    let sftp = format!(
        "Subsystem sftp {} -d {}",
        ssh_support::sftp_server(),
        home.path().display()
    );
    let set_home = format!("SetEnv HOME={}", home.path().display());
    let Some(sshd) = Sshd::start_with(&[&set_home, &sftp]) else {
        return;
    };
    let remote = tempfile::tempdir().expect("remote dir");
    let etc = tempfile::tempdir().expect("config dir");
    let config = etc.path().join("pi-tools.toml");
    std::fs::write(
        &config,
        format!(
            "[tools]\nactive = [\"bash\"]\n\n[env]\nkind = \"ssh\"\nhost = \"{ALIAS}\"\ncwd = \"{}\"\nssh_config = \"{}\"\n",
            remote.path().display(),
            sshd.config_file().display()
        ),
    )
    .expect("config");
    let binary = std::fs::metadata(env!("CARGO_BIN_EXE_cli-under-test")).expect("the binary");
    let built = binary
        .modified()
        .expect("mtime")
        .duration_since(std::time::UNIX_EPOCH)
        .expect("built after 1970")
        .as_secs();
    let helper = home.path().join(".cache/pi-tools").join(format!(
        "pi-tools-{}-{:x}-{built:x}",
        env!("CARGO_PKG_VERSION"),
        binary.len()
    ));
    // Each process the command runs under, from itself up: its executable and arguments.
    let ancestors = "p=$$; while [ \"$p\" -gt 1 ]; do echo \"$(readlink /proc/$p/exe) \
                     $(tr '\\0' ' ' < /proc/$p/cmdline)\"; p=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f2); done";
    let batch = json!([{"id": "b", "name": "bash", "arguments": {"command": ancestors}}]);
    let mut uploaded = None;
    for round in 0..2 {
        let output = pi_tools()
            .arg("--config")
            .arg(&config)
            .args(["run", "--json", "-"])
            .stdin_text(&batch.to_string());
        assert!(output.status.success(), "round {round}: {output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let end = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "tool_execution_end")
            .unwrap_or_else(|| panic!("bash ended: {stdout}"));
        let text = end["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        let server = format!("{0} {0} env-server ", helper.display());
        assert!(
            text.lines().any(|line| line == server),
            "round {round}: the command runs under `{server}`: {text}"
        );
        let meta = std::fs::metadata(&helper).expect("the helper is in the remote cache");
        assert_eq!(meta.len(), binary.len());
        // An upload renames a new file into place; the second session finds the helper
        // there and uploads nothing (it only touches it, for the cache's eviction).
        let identity = meta.ino();
        assert_eq!(
            *uploaded.get_or_insert(identity),
            identity,
            "round {round}: uploaded again"
        );
    }
}

#[test]
fn a_malformed_ssh_spec_names_the_expected_form() {
    for (spec, why) in [
        (
            "build-box",
            "names no absolute remote directory after the host",
        ),
        (
            "build-box:twenty/srv",
            "has `twenty` where a port number (1-65535) goes",
        ),
        ("/srv", "names no host"),
    ] {
        let output = pi_tools()
            .args(["run", "--ssh", spec, "-"])
            .stdin_text("[]");
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr).trim_end(),
            format!(
                "error: `--ssh {spec}` {why}; give [user@]host[:port]/absolute/path, e.g. me@build-box:2222/srv/project"
            )
        );
    }
    // --cwd names a local directory: with --ssh, or an SSH [env], it is refused.
    let output = pi_tools()
        .args(["run", "--cwd", "/tmp", "--ssh", "box/srv", "-"])
        .stdin_text("[]");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot be used with"),
        "{output:?}"
    );
    let etc = tempfile::tempdir().expect("config dir");
    let config = etc.path().join("pi-tools.toml");
    std::fs::write(
        &config,
        "[env]\nkind = \"ssh\"\nhost = \"box\"\ncwd = \"/srv\"\n",
    )
    .expect("config");
    let output = pi_tools()
        .arg("--config")
        .arg(&config)
        .args(["run", "--cwd", "/tmp", "-"])
        .stdin_text("[]");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim_end(),
        format!(
            "error: --cwd `/tmp` names a local directory, but [env] in {} says the tools work over SSH; give the remote directory with --ssh [user@]host[:port]/path, or [env] cwd",
            config.display()
        )
    );
    let output = pi_tools()
        .args(["mcp", "--ssh-config", "/nonexistent"])
        .stdin_text("");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("--ssh-config applies to an SSH workspace"),
        "{output:?}"
    );
}

#[test]
fn an_unreachable_host_fails_before_serving_naming_the_setting() {
    let Some(mut sshd) = Sshd::start() else {
        return;
    };
    sshd.stop();
    let output = pi_tools()
        .args(["mcp", "--ssh"])
        .arg(format!("{ALIAS}/tmp"))
        .arg("--ssh-config")
        .arg(sshd.config_file())
        .stdin_text("");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("pi-tools-test could not be reached"),
        "{stderr}"
    );
    assert!(stderr.contains("`port`"), "{stderr}");
}

/// Runs a command with `text` on its standard input.
trait StdinText {
    fn stdin_text(&mut self, text: &str) -> std::process::Output;
}

impl StdinText for Command {
    fn stdin_text(&mut self, text: &str) -> std::process::Output {
        let mut child = self
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pi-tools starts");
        let mut stdin = child.stdin.take().expect("stdin");
        // A program that refuses its arguments exits without reading its input.
        if let Err(e) = stdin.write_all(text.as_bytes()) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "input: {e}");
        }
        drop(stdin);
        child.wait_with_output().expect("output")
    }
}

/// One JSON-RPC POST to the HTTP server; the messages of its answer.
async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (Option<String>, Vec<Value>) {
    let mut request = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-06-18");
    }
    let response = tokio::time::timeout(PATIENCE, request.send())
        .await
        .expect("answered in time")
        .expect("sent");
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.expect("body");
    let messages = match serde_json::from_str::<Value>(&text) {
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    (id, messages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_http_over_ssh_ends_each_sessions_remote_jobs_with_it() {
    use tokio::io::AsyncBufReadExt;
    let Some(sshd) = Sshd::start() else { return };
    let remote = tempfile::tempdir().expect("remote dir");
    let etc = tempfile::tempdir().expect("config dir");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
        .env_remove("RUST_LOG")
        .env_remove("PI_TOOLS_CONFIG")
        .env_remove("PI_TOOLS_MCP_TOKEN")
        .arg("--config")
        .arg(all_tools_config(etc.path()))
        .args(["mcp", "--http", "127.0.0.1:0", "--ssh"])
        .arg(format!("{ALIAS}{}", remote.path().display()))
        .arg("--ssh-config")
        .arg(sshd.config_file())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("pi-tools starts");
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(PATIENCE, async {
        while let Some(line) = lines.next_line().await.expect("stderr") {
            if let Some(url) = line.strip_prefix("pi-tools: serving MCP on ") {
                return url.to_owned();
            }
        }
        panic!("the server ended without saying where it listens");
    })
    .await
    .expect("the server starts in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let http = crate::mcp_http_support::http_client();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let mut sessions = Vec::new();
    let mut jobs = Vec::new();
    for n in 0..2 {
        let (id, _) = post(&http, &url, None, initialize.clone()).await;
        let id = id.expect("a session id");
        post(
            &http,
            &url,
            Some(&id),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        let seconds = format!("302.{}{n}", std::process::id());
        let (_, answer) = post(
            &http,
            &url,
            Some(&id),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "bash",
                "arguments": {"command": format!("t={seconds}; sleep $t >/dev/null 2>&1 & echo started")}}}),
        )
        .await;
        assert_eq!(
            answer[0]["result"]["content"][0]["text"],
            json!("started"),
            "{answer:?}"
        );
        jobs.push(format!("sleep {seconds}"));
        sessions.push(id);
    }
    assert_eq!(settle(1, || processes_with(&jobs[0]).len()).await, 1);
    assert_eq!(settle(1, || processes_with(&jobs[1]).len()).await, 1);

    // The first client goes away: its job ends, the other's runs on.
    let deleted = http
        .delete(&url)
        .header("Mcp-Session-Id", &sessions[0])
        .header("MCP-Protocol-Version", "2025-06-18")
        .send()
        .await
        .expect("DELETE is sent");
    assert!(deleted.status().is_success(), "{deleted:?}");
    assert_eq!(settle(0, || processes_with(&jobs[0]).len()).await, 0);
    assert_eq!(processes_with(&jobs[1]).len(), 1);

    // The server ends (SIGTERM): the last session's job ends with it.
    let pid = child.id().expect("pid");
    // SAFETY: kill(2) of the child this test started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("the server exits in time")
        .expect("status");
    assert!(status.success(), "{status:?}");
    assert_eq!(settle(0, || processes_with(&jobs[1]).len()).await, 0);
}

/// Tools declared in the configuration run on the remote machine and give the same result
/// messages as on this one: an argument vector with a hostile value, and a script reading
/// its parameters from the environment.
#[test]
fn a_declared_tool_gives_the_same_transcript_over_ssh_as_here() {
    let Some(sshd) = Sshd::start() else { return };
    let tools = "[tools]\nactive = [\"lines\", \"greet\"]\n\n\
        [tool.lines]\ndescription = \"Count lines.\"\ncommand = [\"wc\", \"-l\", \"{files}\"]\n\
        [tool.lines.params.files]\ntype = \"array\"\nitems = \"string\"\n\n\
        [tool.greet]\ndescription = \"Greet.\"\nscript = 'printf \"hello <%s>\\n\" \"$who\"; pwd'\n\
        [tool.greet.params.who]\ntype = \"string\"\n";
    let batch = json!([
        {"id": "1", "name": "lines", "arguments": {"files": ["three.txt", "$(touch pwned)"]}},
        {"id": "2", "name": "greet", "arguments": {"who": "`touch pwned`; x"}},
        {"id": "3", "name": "lines", "arguments": {"files": ["-l"]}}
    ])
    .to_string();
    let messages = |output: std::process::Output, dir: &Path| -> Vec<Value> {
        assert!(output.status.success(), "{output:?}");
        let stdout =
            String::from_utf8_lossy(&output.stdout).replace(&dir.display().to_string(), "<DIR>");
        let mut messages: Vec<Value> = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["type"] == "message_end")
            .map(|mut v| {
                v["message"]["timestamp"] = json!(0);
                v["message"].take()
            })
            .collect();
        messages.sort_by_key(|m| m["toolCallId"].as_str().map(str::to_owned));
        messages
    };
    let here = tempfile::tempdir().expect("local dir");
    std::fs::write(here.path().join("three.txt"), "a\nb\nc\n").expect("file");
    std::fs::write(here.path().join("pi-tools.toml"), tools).expect("config");
    // Named: a found file declaring tools needs the user's trust (tests/cli/trust.rs).
    let local = pi_tools()
        .current_dir(here.path())
        .arg("--config")
        .arg(here.path().join("pi-tools.toml"))
        .args(["run", "--json", "--color", "never", "-"])
        .stdin_text(&batch);
    let local = messages(local, here.path());

    let remote = tempfile::tempdir().expect("remote dir");
    std::fs::write(remote.path().join("three.txt"), "a\nb\nc\n").expect("file");
    let etc = tempfile::tempdir().expect("config dir");
    let config = etc.path().join("pi-tools.toml");
    std::fs::write(
        &config,
        format!(
            "{tools}\n[env]\nkind = \"ssh\"\nhost = \"{ALIAS}\"\ncwd = \"{}\"\nssh_config = \"{}\"\nupload_helper = false\n",
            remote.path().display(),
            sshd.config_file().display()
        ),
    )
    .expect("config");
    let over_ssh = pi_tools()
        .arg("--config")
        .arg(&config)
        .args(["run", "--json", "--color", "never", "-"])
        .stdin_text(&batch);
    let over_ssh = messages(over_ssh, remote.path());
    assert_eq!(local.len(), 3, "{local:?}");
    assert_eq!(over_ssh, local);
    assert_eq!(
        local[1]["content"][0]["text"],
        "hello <`touch pwned`; x>\n<DIR>"
    );
    assert!(!here.path().join("pwned").exists());
    assert!(!remote.path().join("pwned").exists());
}
