//! `pi-tools mcp --http`, spawned, and what its tests ask of it with a real HTTP client.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the binary may take to start on a loaded machine.
pub const STARTUP: Duration = Duration::from_secs(30);
/// How long a test waits for something that should happen at once.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A plain-http client. pi-tools's `mount` gives reqwest rustls without a crypto provider
/// (it brings its own *ring* configuration), so in this workspace reqwest's TLS has none
/// unless one is installed: install *ring* as the process's (once; later calls find it
/// there), as a program that shares reqwest with pi-tools would.
pub fn http_client() -> reqwest::Client {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A running `pi-tools mcp --http 127.0.0.1:0`. Killed if a test fails before it ends it.
pub struct HttpServer {
    pub work: TempDir,
    /// Holds the configuration file ([`HttpServer::config_file`]) and the token file.
    etc: TempDir,
    pub child: Child,
    pub url: String,
    pub token: Option<String>,
    pub http: reqwest::Client,
    /// What the server said on stderr before it said where it listens.
    pub said: Vec<String>,
    /// What it said on stderr after that, so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    pub async fn spawn(token: Option<&str>) -> HttpServer {
        HttpServer::spawn_with(token, &[], None).await
    }

    /// Starts the server with `args` added and, when given, `config` as its configuration.
    pub async fn spawn_with(
        token: Option<&str>,
        args: &[&str],
        config: Option<&str>,
    ) -> HttpServer {
        HttpServer::spawn_logging(token, args, config, None).await
    }

    /// As [`HttpServer::spawn_with`], with `RUST_LOG` set to `filter` when given (the log
    /// lines go to [`HttpServer::log`]).
    pub async fn spawn_logging(
        token: Option<&str>,
        args: &[&str],
        config: Option<&str>,
        filter: Option<&str>,
    ) -> HttpServer {
        HttpServer::spawn_full(token, args, config, filter, None).await
    }

    /// The server with its file-descriptor limit (soft and hard) set to `limit`.
    pub async fn spawn_with_descriptor_limit(limit: u32) -> HttpServer {
        HttpServer::spawn_full(None, &[], None, None, Some(limit)).await
    }

    /// The server with `config` as its configuration and its file-descriptor limit (soft
    /// and hard) set to `limit`.
    pub async fn spawn_limited(config: Option<&str>, limit: u32) -> HttpServer {
        HttpServer::spawn_full(None, &[], config, None, Some(limit)).await
    }

    async fn spawn_full(
        token: Option<&str>,
        args: &[&str],
        config: Option<&str>,
        filter: Option<&str>,
        descriptors: Option<u32>,
    ) -> HttpServer {
        let work = TempDir::new().expect("a temporary working directory");
        let etc = TempDir::new().expect("a temporary configuration directory");
        let binary = env!("CARGO_BIN_EXE_cli-under-test");
        // With a limit, a shell sets it and becomes the server (`exec`: the same pid).
        let mut command = match descriptors {
            None => Command::new(binary),
            Some(limit) => {
                let mut shell = Command::new("sh");
                shell
                    .arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
                    .arg(binary);
                shell
            }
        };
        command
            .args(["mcp", "--http", "127.0.0.1:0", "--cwd"])
            .arg(work.path())
            .args(args);
        if let Some(config) = config {
            let file = etc.path().join("pi-tools.toml");
            std::fs::write(&file, config).expect("the configuration is written");
            command.arg("--config").arg(file);
        }
        if let Some(token) = token {
            let file = etc.path().join("token");
            std::fs::write(&file, format!("{token}\n")).expect("the token is written");
            command.arg("--token-file").arg(file);
        }
        command.env_remove("RUST_LOG");
        if let Some(filter) = filter {
            command.env("RUST_LOG", filter);
        }
        let mut child = command
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
        let log = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn({
            let log = Arc::clone(&log);
            async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    log.lock().expect("the log is not poisoned").push(line);
                }
            }
        });
        HttpServer {
            work,
            etc,
            child,
            url,
            token: token.map(str::to_owned),
            http: http_client(),
            said,
            log,
        }
    }

    /// The configuration file the server was started with (when it was given one).
    pub fn config_file(&self) -> PathBuf {
        self.etc.path().join("pi-tools.toml")
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.work.path().join(relative)
    }

    /// A POST of `body` as it is, with the right token (if any) and `session`.
    pub fn post_raw(&self, session: Option<&str>, body: &str) -> reqwest::RequestBuilder {
        let mut request = self.post_as(None, body);
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

    /// A POST of `body` outside any session, with `authorization` as the whole
    /// `Authorization` header (none: without one) instead of the right token.
    pub fn post_as(&self, authorization: Option<&str>, body: &str) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_owned());
        match authorization {
            Some(value) => request.header("Authorization", value),
            None => request,
        }
    }

    /// A DELETE of `session`, with the right token (if any).
    pub fn delete(&self, session: &str) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .delete(&self.url)
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-06-18");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    /// A GET of `session`'s stream of server messages (what the official SDKs open right
    /// after `initialize`), with the right token (if any).
    pub fn stream(&self, session: &str) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .get(&self.url)
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-06-18");
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    /// A POST of one JSON-RPC message with the right token (if any) and `session`.
    pub fn post(&self, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        self.post_raw(session, &body.to_string())
    }

    /// Posts a 2026-07-28 request `body` outside any session, with the standard headers such
    /// a client sends (which the server checks): the JSON-RPC answer with its id, every
    /// message, and the response's headers.
    pub async fn post_2026(&self, body: &Value) -> (Value, Vec<Value>, reqwest::header::HeaderMap) {
        let mut request = self
            .post_raw(None, &body.to_string())
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", body["method"].as_str().expect("a method"));
        let params = &body["params"];
        if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
            request = request.header("Mcp-Name", name);
        }
        let response = request.send().await.expect("sent");
        let headers = response.headers().clone();
        let all = messages(response).await;
        let answer = all
            .iter()
            .find(|m| m["id"] == body["id"])
            .cloned()
            .unwrap_or_else(|| panic!("no answer to {body}: {all:?}"));
        (answer, all, headers)
    }

    /// Opens a session and returns its id.
    pub async fn open_session(&self) -> String {
        self.try_open_session()
            .await
            .unwrap_or_else(|why| panic!("the session was refused: {why}"))
    }

    /// Opens a session and returns its id, or what the server said refusing it (503, with
    /// `Retry-After: 5`).
    pub async fn try_open_session(&self) -> Result<String, String> {
        let response = self
            .post(None, &initialize())
            .send()
            .await
            .expect("initialize is sent");
        if response.status() == StatusCode::SERVICE_UNAVAILABLE {
            let retry = response.headers().get("retry-after").cloned();
            assert_eq!(retry.as_ref().map(|v| v.as_bytes()), Some(&b"5"[..]));
            return Err(response.text().await.unwrap_or_default());
        }
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
        Ok(session)
    }

    /// Two processes in `session`: a background job left by a finished bash call (request
    /// 1), and a bash call still running (request 2, sent by the returned task). Returns
    /// their pids, both running, and the task.
    pub async fn job_and_running_call(
        &self,
        session: &str,
    ) -> (
        u32,
        u32,
        tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
    ) {
        let answer = self
            .call(
                session,
                1,
                "bash",
                json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
            )
            .await;
        let job: u32 = text_of(&answer).parse().expect("bash prints the job's pid");
        let (call_pid, long) = self.running_call(session, 2, "long.pid").await;
        assert!(running(job));
        (job, call_pid, long)
    }

    /// Request `id` in `session`: a bash call that runs until it is ended (`sleep 30`),
    /// sent by the returned task. Waits until its process writes its pid to `pid_file`
    /// and returns that pid, running, and the task.
    pub async fn running_call(
        &self,
        session: &str,
        id: i64,
        pid_file: &str,
    ) -> (
        u32,
        tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
    ) {
        let command = format!("echo $$ > {pid_file}; exec sleep 30");
        let request = self.post(
            Some(session),
            &call(id, "bash", json!({ "command": command })),
        );
        let task = tokio::spawn(request.send());
        let pid = wait_pid(&self.path(pid_file)).await;
        assert!(running(pid));
        (pid, task)
    }

    /// One `tools/call` in `session`, answered.
    pub async fn call(&self, session: &str, id: i64, tool: &str, arguments: Value) -> Value {
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

/// A request of the 2026-07-28 era: its `_meta` carries the version and the client's
/// capabilities.
pub fn request_2026(id: i64, method: &str, mut params: Value, capabilities: &Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "era-test", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "http-test", "version": "0"}}
    })
}

pub fn call(id: i64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}
    })
}

/// The JSON-RPC messages of a response: its JSON body, or each `data:` of its event stream.
pub async fn messages(response: reqwest::Response) -> Vec<Value> {
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

pub fn text_of(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

pub fn running(pid: u32) -> bool {
    // A zombie has ended; only its parent has not collected it yet.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

pub async fn wait_gone(pids: &[u32], within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    while pids.iter().any(|&p| running(p)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "processes {pids:?} still run"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn wait_pid(path: &Path) -> u32 {
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

/// The JSON-RPC messages of an event stream, read as they come (a question the server asks
/// during a call arrives before the call's answer, which waits for it).
pub struct Events {
    response: reqwest::Response,
    pending: String,
}

impl Events {
    pub fn new(response: reqwest::Response) -> Events {
        Events {
            response,
            pending: String::new(),
        }
    }

    /// The next message, or `None` when the stream has ended; fails past [`PATIENCE`].
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.pending.find('\n') {
                let line: String = self.pending.drain(..=end).collect();
                if let Some(data) = line.trim_end().strip_prefix("data:")
                    && let Ok(message) = serde_json::from_str(data.trim())
                {
                    return Some(message);
                }
                continue;
            }
            let chunk = tokio::time::timeout(PATIENCE, self.response.chunk())
                .await
                .expect("the stream goes on in time")
                .expect("the stream is readable")?;
            self.pending.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}
