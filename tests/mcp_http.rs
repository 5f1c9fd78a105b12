//! `pi-tools mcp --http`, spawned and spoken to with a real HTTP client: the bearer token,
//! the Host/Origin allow-list, sessions that do not disturb each other, and the signals
//! that end it.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the binary may take to start on a loaded machine.
const STARTUP: Duration = Duration::from_secs(30);
/// How long a test waits for something that should happen at once.
const PATIENCE: Duration = Duration::from_secs(10);

/// A running `pi-tools mcp --http 127.0.0.1:0`. Killed if a test fails before it ends it.
struct HttpServer {
    work: TempDir,
    _etc: TempDir,
    child: Child,
    url: String,
    token: Option<String>,
    http: reqwest::Client,
    /// What the server said on stderr before it said where it listens.
    said: Vec<String>,
}

impl HttpServer {
    async fn spawn(token: Option<&str>) -> HttpServer {
        let work = TempDir::new().expect("a temporary working directory");
        let etc = TempDir::new().expect("a temporary configuration directory");
        let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
        command
            .args(["mcp", "--http", "127.0.0.1:0", "--cwd"])
            .arg(work.path());
        if let Some(token) = token {
            let file = etc.path().join("token");
            std::fs::write(&file, format!("{token}\n")).expect("the token is written");
            command.arg("--token-file").arg(file);
        }
        let mut child = command
            .env_remove("RUST_LOG")
            .env_remove("PI_TOOLS_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the pi-tools binary starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr).lines();
        let mut said = Vec::new();
        let url = tokio::time::timeout(STARTUP, async {
            while let Some(line) = lines.next_line().await.expect("stderr is readable") {
                if let Some(url) = line.strip_prefix("pi-tools: serving MCP on ") {
                    return url.to_owned();
                }
                said.push(line);
            }
            panic!("the server ended without saying where it listens");
        })
        .await
        .expect("the server starts in time");
        // Keep reading stderr, so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        HttpServer {
            work,
            _etc: etc,
            child,
            url,
            token: token.map(str::to_owned),
            http: reqwest::Client::new(),
            said,
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.work.path().join(relative)
    }

    /// A POST of one JSON-RPC message with the right token (if any) and `session`.
    fn post(&self, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-06-18");
        }
        request
    }

    /// Opens a session and returns its id.
    async fn open_session(&self) -> String {
        let response = self
            .post(None, &initialize())
            .send()
            .await
            .expect("initialize is sent");
        assert_eq!(response.status(), StatusCode::OK);
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let answer = messages(response).await;
        assert_eq!(answer[0]["result"]["serverInfo"]["name"], "pi-tools");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = self
            .post(Some(&session), &initialized)
            .send()
            .await
            .expect("initialized is sent");
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        session
    }

    /// One `tools/call` in `session`, answered.
    async fn call(&self, session: &str, id: i64, tool: &str, arguments: Value) -> Value {
        let response = self
            .post(Some(session), &call(id, tool, arguments))
            .send()
            .await
            .expect("the call is sent");
        assert_eq!(response.status(), StatusCode::OK);
        let answers = messages(response).await;
        answers
            .into_iter()
            .find(|m| m["id"] == id)
            .expect("the call is answered")
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "http-test", "version": "0"}}
    })
}

fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}
    })
}

/// The JSON-RPC messages of a response: its JSON body, or each `data:` of its event stream.
async fn messages(response: reqwest::Response) -> Vec<Value> {
    let body = tokio::time::timeout(PATIENCE, response.text())
        .await
        .expect("the response ends in time")
        .expect("the body is readable");
    if let Ok(value) = serde_json::from_str::<Value>(&body) {
        return vec![value];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

fn running(pid: u32) -> bool {
    // A zombie has ended; only its parent has not collected it yet.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

async fn wait_gone(pids: &[u32], within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    while pids.iter().any(|&p| running(p)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "processes {pids:?} still run"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_pid(path: &Path) -> u32 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn requests_without_the_token_or_with_a_wrong_one_are_refused() {
    let server = HttpServer::spawn(Some("correct horse battery staple")).await;
    let missing = server
        .http
        .post(&server.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(initialize().to_string())
        .send()
        .await
        .expect("sent");
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        missing.text().await.expect("a body"),
        "Unauthorized: send the server's token as `Authorization: Bearer <token>`.\n"
    );
    let wrong = server
        .http
        .post(&server.url)
        .bearer_auth("correct horse battery")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(initialize().to_string())
        .send()
        .await
        .expect("sent");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    // With it, the session opens and serves.
    let session = server.open_session().await;
    std::fs::write(server.path("a.txt"), "served\n").expect("written");
    let answer = server
        .call(&session, 1, "read", json!({"path": "a.txt"}))
        .await;
    assert_eq!(text_of(&answer), "served\n");
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused() {
    let server = HttpServer::spawn(None).await;
    let foreign_host = server
        .post(None, &initialize())
        .header("Host", "rebound.example.com")
        .send()
        .await
        .expect("sent");
    assert_eq!(foreign_host.status(), StatusCode::FORBIDDEN);
    let foreign_origin = server
        .post(None, &initialize())
        .header("Origin", "http://rebound.example.com")
        .send()
        .await
        .expect("sent");
    assert_eq!(foreign_origin.status(), StatusCode::FORBIDDEN);
    let local_origin = server
        .post(None, &initialize())
        .header("Origin", "http://localhost:3000")
        .send()
        .await
        .expect("sent");
    assert_eq!(local_origin.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_cancelled_call_in_one_session_leaves_the_other_session_unaffected() {
    let server = HttpServer::spawn(None).await;
    let first = server.open_session().await;
    let second = server.open_session().await;
    assert_ne!(first, second);

    let long = server
        .post(
            Some(&first),
            &call(
                1,
                "bash",
                json!({"command": "echo $$ > first.pid; exec sleep 30"}),
            ),
        )
        .send();
    let long = tokio::spawn(long);
    let first_pid = wait_pid(&server.path("first.pid")).await;
    assert!(running(first_pid));

    let other = {
        let request = server.post(
            Some(&second),
            &call(1, "bash", json!({"command": "sleep 1; echo second"})),
        );
        tokio::spawn(async move { messages(request.send().await.expect("sent")).await })
    };
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "test"}});
    let response = server
        .post(Some(&first), &cancel)
        .send()
        .await
        .expect("the cancellation is sent");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    wait_gone(&[first_pid], Duration::from_secs(5)).await;

    let answers = tokio::time::timeout(PATIENCE, other)
        .await
        .expect("the other session answers in time")
        .expect("joined");
    let answer = answers.iter().find(|m| m["id"] == 1).expect("answered");
    assert_eq!(text_of(answer), "second");
    assert_eq!(answer["result"]["isError"], false);
    long.abort();
}

/// SIGTERM, SIGHUP and SIGINT each cancel the calls, kill the background jobs and end the
/// server cleanly.
#[tokio::test]
async fn sigterm_sighup_and_sigint_cancel_calls_kill_background_jobs_and_exit_cleanly() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let mut server = HttpServer::spawn(None).await;
        let session = server.open_session().await;
        let answer = server
            .call(
                &session,
                1,
                "bash",
                json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
            )
            .await;
        let job: u32 = text_of(&answer).parse().expect("bash prints the job's pid");
        let long = server
            .post(
                Some(&session),
                &call(
                    2,
                    "bash",
                    json!({"command": "echo $$ > long.pid; exec sleep 30"}),
                ),
            )
            .send();
        let long = tokio::spawn(long);
        let call_pid = wait_pid(&server.path("long.pid")).await;
        assert!(running(job) && running(call_pid));

        let pid = server.child.id().expect("the server runs");
        let pid = i32::try_from(pid).expect("a pid fits");
        // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = tokio::time::timeout(PATIENCE, server.child.wait())
            .await
            .expect("the server ends in time after the signal")
            .expect("its status can be read");
        assert!(status.success(), "signal {signal}: {status}");
        wait_gone(&[job, call_pid], Duration::from_secs(5)).await;
        long.abort();
    }
}

/// Over HTTP the file tools stay in the working directory by default, and the server says
/// so at its start (issue 22, finding 5).
#[tokio::test]
async fn over_http_the_file_tools_are_confined_to_the_working_directory() {
    let server = HttpServer::spawn(None).await;
    assert_eq!(
        server.said,
        [
            "pi-tools: over HTTP the file tools are confined to the working directory; set [paths] allowed_roots to choose other directories"
        ]
    );
    let session = server.open_session().await;
    std::fs::write(server.path("a.txt"), "inside\n").expect("written");
    let answer = server
        .call(&session, 1, "read", json!({"path": "a.txt"}))
        .await;
    assert_eq!(text_of(&answer), "inside\n");
    let answer = server
        .call(&session, 2, "read", json!({"path": "/etc/passwd"}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let work = std::fs::canonicalize(server.path(".")).expect("canonical");
    assert_eq!(
        text_of(&answer),
        format!(
            "Could not read /etc/passwd: /etc/passwd is outside the allowed directories ({}). Use a path inside them.",
            work.display()
        )
    );
}
