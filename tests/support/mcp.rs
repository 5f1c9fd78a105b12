//! An in-process MCP session for the server's tests: the server on one end of a pipe, rmcp's
//! client (or raw JSON-RPC lines) on the other.
use std::time::Duration;

use pi_tools::RunnerConfig;
use pi_tools::mcp::{McpError, McpTools, serve_split};
use rmcp::model::{ClientConfig, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
    Lines,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

/// How long a test waits for something that should happen at once.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A client that passes every progress notification it receives to the test.
#[derive(Clone)]
pub struct ProgressClient {
    progress: UnboundedSender<ProgressNotificationParam>,
}

impl ProgressClient {
    /// A client that sends every progress notification to `progress`.
    pub fn new(progress: UnboundedSender<ProgressNotificationParam>) -> Self {
        ProgressClient { progress }
    }
}

impl ClientHandler for ProgressClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

/// A client session with a server running in a task.
pub struct Session {
    pub client: RunningService<RoleClient, ProgressClient>,
    pub progress: UnboundedReceiver<ProgressNotificationParam>,
    pub server: JoinHandle<Result<(), McpError>>,
}

/// Starts a server for `tools` and connects rmcp's client to it.
pub async fn connect(tools: McpTools, config: RunnerConfig) -> Session {
    connect_after(Vec::new(), tools, config).await
}

/// Like [`connect`], but the server reads `prefix` (say, garbage) before the client's first
/// byte.
pub async fn connect_after(prefix: Vec<u8>, tools: McpTools, config: RunnerConfig) -> Session {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let reader = std::io::Cursor::new(prefix).chain(server_read);
    let server = tokio::spawn(serve_split(tools, config, reader, server_write));
    let (tx, progress) = unbounded_channel();
    let client = ProgressClient { progress: tx }
        .serve(client_io)
        .await
        .expect("the server answers initialize");
    Session {
        client,
        progress,
        server,
    }
}

/// A server spoken to in raw JSON-RPC lines, over any pipe pair (an in-process duplex, or a
/// spawned binary's stdin and stdout).
pub struct Raw<I, O> {
    input: Option<I>,
    output: Lines<BufReader<O>>,
}

impl<I: AsyncWrite + Unpin, O: AsyncRead + Unpin> Raw<I, O> {
    /// Speaks to a server that reads `input` and writes `output`.
    pub fn new(input: I, output: O) -> Self {
        Raw {
            input: Some(input),
            output: BufReader::new(output).lines(),
        }
    }

    /// Writes raw bytes to the server's input.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("the input is open");
        input.write_all(bytes).await.expect("the server reads");
        input.flush().await.expect("the server reads");
    }

    /// Writes one JSON-RPC message as a line.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.send_bytes(line.as_bytes()).await;
    }

    /// The next line, or `None` when the server closed its output, waiting `patience`.
    pub async fn recv_within(&mut self, patience: Duration) -> Option<Value> {
        let line = tokio::time::timeout(patience, self.output.next_line())
            .await
            .expect("the server answers or ends in time")
            .expect("the output is readable")?;
        Some(
            serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            }),
        )
    }

    /// The next line the server wrote, as JSON.
    pub async fn recv(&mut self) -> Value {
        self.recv_within(PATIENCE)
            .await
            .expect("the server's output is still open")
    }

    /// The next line, or `None` when the server closed its output.
    pub async fn recv_or_end(&mut self) -> Option<Value> {
        self.recv_within(PATIENCE).await
    }

    /// Performs the handshake (initialize, then notifications/initialized), waiting up to
    /// `patience` for the answer, and returns the initialize answer.
    pub async fn initialize_within(&mut self, patience: Duration) -> Value {
        self.send(serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}
            }
        }))
        .await;
        let answer = self
            .recv_within(patience)
            .await
            .expect("the server answers initialize");
        self.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }

    /// Performs the handshake and returns the initialize answer.
    pub async fn initialize(&mut self) -> Value {
        self.initialize_within(PATIENCE).await
    }

    /// Closes the server's input (end of file).
    pub fn close_input(&mut self) {
        self.input = None;
    }
}

/// A server in a task, spoken to in raw JSON-RPC lines.
pub struct RawPipe {
    raw: Raw<DuplexStream, DuplexStream>,
    pub server: JoinHandle<Result<(), McpError>>,
}

impl RawPipe {
    /// Starts a server for `tools`.
    pub fn start(tools: McpTools, config: RunnerConfig) -> Self {
        let (input, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, output) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(serve_split(tools, config, server_in, server_out));
        RawPipe {
            raw: Raw::new(input, output),
            server,
        }
    }
}

impl std::ops::Deref for RawPipe {
    type Target = Raw<DuplexStream, DuplexStream>;

    fn deref(&self) -> &Self::Target {
        &self.raw
    }
}

impl std::ops::DerefMut for RawPipe {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.raw
    }
}
