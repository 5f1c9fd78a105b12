//! Running a session: over stdio, or over any byte stream.

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::{QuitReason, ServerInitializeError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::error::McpError;
use super::lines::{DirectCalls, LineTransport, QUEUED_REQUESTS, UNBOUNDED_IN_FLIGHT};
use super::listen_bound::ListenBound;
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
    let (stdin, stdout) = super::stdio();
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
/// One JSON-RPC message per line. Every line gets a usable answer: one that is not JSON
/// (not UTF-8, a lone surrogate, nesting deeper than 128, longer than the tools'
/// [`max_message_bytes`](McpTools::with_max_message_bytes)) gets a
/// `-32700` parse error with `"id": null`; JSON that is not a usable request gets `-32600`
/// naming the reason, with its id when the id could be read; a request before
/// `initialize` (other than `server/discover` and a request naming MCP 2026-07-28 in its
/// `_meta`, which is served without one), or one that reuses the id of a request still in
/// flight, is refused the same way. Either way the session goes on. While `max_concurrency` calls plus a queue of
/// 64 are unanswered, no further line is read (backpressure).
///
/// End of input ends the session once every request already read is answered: calls in
/// flight run to completion (within their own timeouts), their answers are written, and
/// the function returns `Ok(())`, as a script that pipes its requests and closes its side
/// expects. A client that disconnects before `initialize` also ends the session cleanly
/// (an `initialize` it sent is still answered).
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
    serve_split_until(tools, config, reader, writer, CancellationToken::new()).await
}

/// [`serve_split`], ending early when `stop` is cancelled (a signal): calls in flight are
/// cancelled and waited for, so nothing is left half-written, nothing more is written, and
/// the execution environment's session ends (its background jobs are killed).
pub async fn serve_split_until<R, W>(
    tools: McpTools,
    config: RunnerConfig,
    reader: R,
    writer: W,
    stop: CancellationToken,
) -> Result<(), McpError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    // Cancelled by a signal, a failed read or the session's end: every call in flight is
    // cancelled.
    let cancelled = CancellationToken::new();
    // Cancelled by a signal or a failed read: nothing more is written (the client is gone
    // or going). Not at end of input, whose answers are all written.
    let discard = CancellationToken::new();
    let slots = config
        .max_concurrency
        .map_or(UNBOUNDED_IN_FLIGHT, |n| n.max(1) + QUEUED_REQUESTS);
    let server = ToolServer::new(&tools, config, cancelled.clone())?;
    let calls = server.calls();
    let direct = DirectCalls::default();
    let (transport, writing) = LineTransport::new(
        reader,
        writer,
        slots,
        tools.max_message_bytes(),
        discard.clone(),
        Arc::clone(&direct),
        ListenBound::new(
            slots,
            "as many as the requests it reads ahead: `max_concurrency` plus 64, or 256",
        )
        .ending_with(server.listening_ended().clone()),
    );
    let running = tokio::select! {
        started = server.clone().serve(transport) => match started {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("the client closed the session before initializing it");
                written(writing).await;
                return Ok(());
            }
            Err(err) => {
                cancelled.cancel();
                discard.cancel();
                written(writing).await;
                return Err(McpError::Handshake(Box::new(err)));
            }
        },
        _ = stop.cancelled() => {
            cancelled.cancel();
            discard.cancel();
            written(writing).await;
            return Ok(());
        }
    };
    tracing::info!("MCP session started");
    // From now on the transport runs `tools/call` itself. Only it keeps the handle (and so
    // this session's server): the session's end waits for the server to be dropped.
    let _ = direct.set(server.direct_call(running.peer().clone()));
    drop((direct, server));
    let cancel = running.cancellation_token();
    let ended = cancelled.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = stop.cancelled() => discard.cancel(),
            _ = discard.cancelled() => {}
            _ = ended.cancelled() => {}
        }
        ended.cancel();
        cancel.cancel();
    });
    let quit = running.waiting().await;
    // Whatever ended the session, nothing may keep running for it: cancel every call and
    // wait for each to finish its cleanup (a cancelled write still completes or leaves the
    // old file; a command's process group is killed). At end of input every call has
    // answered already.
    cancelled.cancel();
    calls.close();
    if tokio::time::timeout(CALLS_GRACE, calls.wait())
        .await
        .is_err()
    {
        tracing::warn!("calls still running {CALLS_GRACE:?} after the session ended");
    }
    written(writing).await;
    match quit {
        Ok(QuitReason::JoinError(err)) | Err(err) => Err(McpError::Session(err)),
        Ok(reason) => {
            tracing::info!(?reason, "MCP session ended");
            Ok(())
        }
    }
}

/// Waits until the answers queued are written (the writer ends once the transport and its
/// calls are gone), at most [`CALLS_GRACE`]: a client that stopped reading cannot hold the
/// session open.
async fn written(mut writing: tokio::task::JoinHandle<()>) {
    if tokio::time::timeout(CALLS_GRACE, &mut writing)
        .await
        .is_err()
    {
        tracing::warn!("answers still unwritten {CALLS_GRACE:?} after the session ended");
        writing.abort();
    }
}

/// How long the end of a session waits for cancelled calls to finish.
const CALLS_GRACE: std::time::Duration = std::time::Duration::from_secs(5);
