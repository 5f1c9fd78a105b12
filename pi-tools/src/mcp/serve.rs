//! Running a session: over stdio, or over any byte stream.

use rmcp::ServiceExt;
use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::eof::{EofSignal, QuietAfterEnd};
use super::error::McpError;
use super::null_id::NullIdOnErrors;
use super::server::ToolServer;
use super::tools::McpTools;
use crate::core::RunnerConfig;

/// Serves `tools` over the process's stdin and stdout until stdin ends.
///
/// Stdout carries only JSON-RPC messages; log with `tracing` to stderr (see
/// [`init_stderr_logging`](super::init_stderr_logging)), never with `println!`.
///
/// ```no_run
/// # async fn run(tools: pi_tools::mcp::McpTools) -> Result<(), pi_tools::mcp::McpError> {
/// pi_tools::mcp::init_stderr_logging();
/// pi_tools::mcp::serve_stdio(tools, pi_tools::RunnerConfig::default()).await
/// # }
/// ```
pub async fn serve_stdio(tools: McpTools, config: RunnerConfig) -> Result<(), McpError> {
    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    serve_split(tools, config, stdin, stdout).await
}

/// Serves `tools` over one duplex byte stream (a socket, a pipe pair, or an in-process
/// `tokio::io::duplex` in tests) until its read side ends.
pub async fn serve<T>(tools: McpTools, config: RunnerConfig, io: T) -> Result<(), McpError>
where
    T: AsyncRead + AsyncWrite + Send + 'static,
{
    let (reader, writer) = tokio::io::split(io);
    serve_split(tools, config, reader, writer).await
}

/// Serves `tools`, reading requests from `reader` and writing answers to `writer`, until
/// `reader` ends.
///
/// One JSON-RPC message per line. A line that is not JSON is ignored (as the official MCP
/// SDKs do: answering garbage can start an error storm with a peer that echoes it), and
/// well-formed JSON that is not a JSON-RPC message is answered with an "Invalid request"
/// error with `"id": null`; either way the session goes on. End of input ends the session, as MCP's stdio transport defines:
/// every call in flight is cancelled, nothing more is written (its reader is gone), and the
/// function returns `Ok(())`. A client that disconnects before `initialize` also ends the
/// session cleanly.
///
/// # Errors
///
/// [`McpError::SchemaNotAnObject`] before anything is read, when a tool's schema cannot be
/// an MCP input schema; [`McpError::Handshake`] when the first request is not a usable
/// `initialize`; [`McpError::Session`] when the session task dies.
pub async fn serve_split<R, W>(
    tools: McpTools,
    config: RunnerConfig,
    reader: R,
    writer: W,
) -> Result<(), McpError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let input_ended = CancellationToken::new();
    let server = ToolServer::new(tools, config, input_ended.clone())?;
    let reader = EofSignal::new(reader, input_ended.clone());
    let writer = QuietAfterEnd::new(NullIdOnErrors::new(writer), input_ended.clone());
    let running = match server.serve((reader, writer)).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("the client closed the session before initializing it");
            return Ok(());
        }
        Err(err) => return Err(McpError::Handshake(Box::new(err))),
    };
    tracing::info!("MCP session started");
    let quit = running.waiting().await;
    // Whatever ended the session, nothing may keep running for it.
    input_ended.cancel();
    match quit {
        Ok(QuitReason::JoinError(err)) | Err(err) => Err(McpError::Session(err)),
        Ok(reason) => {
            tracing::info!(?reason, "MCP session ended");
            Ok(())
        }
    }
}
