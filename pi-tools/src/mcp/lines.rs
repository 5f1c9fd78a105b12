//! The stdio transport: one JSON-RPC message per line, read with bounds and answered when
//! unusable.
//!
//! The protocol library reads lines itself and drops what it cannot parse; this transport
//! reads them instead, so every line gets a usable answer: a line that is not JSON (invalid
//! UTF-8, a lone surrogate, nesting deeper than 128, an oversized line) gets `-32700` with
//! the reason; JSON that is not a usable request gets `-32600` with the reason and the id
//! when it could be read; a request before `initialize` and a request reusing the id of one
//! still in flight are refused. It also applies backpressure: while `slots` requests are
//! unanswered, no further line is read, so a client that pipelines any number of requests
//! costs bounded memory (the operating system's pipe buffer holds the rest).

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, NumberOrString, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// JSON-RPC's codes for a line that is not JSON, and for JSON that is not a request.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// Requests read ahead of the ones executing, beyond `max_concurrency`.
pub(crate) const QUEUED_REQUESTS: usize = 64;
/// The in-flight bound when no `max_concurrency` is configured.
pub(crate) const UNBOUNDED_IN_FLIGHT: usize = 256;

/// Requests read and not yet answered, by id; each holds one slot.
#[derive(Default)]
struct InFlight {
    ids: Mutex<HashMap<RequestId, OwnedSemaphorePermit>>,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, OwnedSemaphorePermit>> {
        self.ids.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A sender waits while more than this many bytes of lines wait for the writer (a client
/// that does not read its answers).
const MAX_QUEUED_BYTES: usize = 8 << 20;

/// The lines waiting for the writer. A line is queued the moment it is sent, so the order
/// of sends is the order on the wire (a call's progress notifications come before its
/// result, though the protocol library finishes each send in a task of its own); only the
/// wait for room is left to the sender's future.
#[derive(Clone)]
struct Outbox {
    lines: mpsc::UnboundedSender<Vec<u8>>,
    queue: Arc<Queued>,
}

/// The bytes queued, shared with the writer, which wakes waiting senders.
#[derive(Default)]
struct Queued {
    bytes: AtomicUsize,
    drained: Notify,
}

impl Queued {
    /// Called by the writer for each line it takes.
    fn written(&self, bytes: usize) {
        let before = self.bytes.fetch_sub(bytes, Ordering::Relaxed);
        if before > MAX_QUEUED_BYTES && before - bytes <= MAX_QUEUED_BYTES {
            self.drained.notify_waiters();
        }
    }
}

impl Outbox {
    fn new() -> (Outbox, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (lines, rx) = mpsc::unbounded_channel();
        let outbox = Outbox {
            lines,
            queue: Arc::default(),
        };
        (outbox, rx)
    }

    /// Queues a line; `false` once the writer is gone (the session is over).
    fn push(&self, line: Vec<u8>) -> bool {
        self.queue.bytes.fetch_add(line.len(), Ordering::Relaxed);
        self.lines.send(line).is_ok()
    }

    /// Waits while the queue is over its bound.
    async fn room(&self) {
        let over = || self.queue.bytes.load(Ordering::Relaxed) > MAX_QUEUED_BYTES;
        while over() && !self.lines.is_closed() {
            let drained = self.queue.drained.notified();
            if !over() {
                return;
            }
            drained.await;
        }
    }
}

/// The transport handed to the protocol library.
pub(crate) struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: Outbox,
    in_flight: Arc<InFlight>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl LineTransport {
    /// Starts reading `reader` and writing `writer`. `ended` is cancelled at end of input
    /// (or a read error); from then on nothing more is written, since the client closed
    /// its side. At most `slots` requests are read and unanswered at once; a line longer
    /// than `max_line` bytes is skipped and answered with an error.
    pub(crate) fn new<R, W>(
        reader: R,
        writer: W,
        slots: usize,
        max_line: usize,
        ended: CancellationToken,
    ) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (incoming_tx, incoming) = mpsc::channel(16);
        let (outgoing, outgoing_rx) = Outbox::new();
        let in_flight = Arc::new(InFlight::default());
        let reading = Reader {
            input: BufReader::new(reader),
            forward: incoming_tx,
            answer: outgoing.clone(),
            in_flight: in_flight.clone(),
            slots: Arc::new(Semaphore::new(slots.max(1))),
            max_line,
            initialized: false,
        };
        let read_task = tokio::spawn({
            let ended = ended.clone();
            async move {
                reading.run().await;
                ended.cancel();
            }
        });
        let write_task = tokio::spawn(write_lines(
            writer,
            outgoing_rx,
            Arc::clone(&outgoing.queue),
            ended,
        ));
        LineTransport {
            incoming,
            outgoing,
            in_flight,
            tasks: vec![read_task, write_task],
        }
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Transport<RoleServer> for LineTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        // The answer frees its request's slot, so the reader may take the next request.
        let answered = match &item {
            ServerJsonRpcMessage::Response(r) => Some(r.id.clone()),
            ServerJsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        if let Some(id) = answered {
            self.in_flight.lock().remove(&id);
        }
        // Queued now, in the order of the calls; the writer is gone only when the session is
        // over, and nothing is lost then.
        let queued = serialize(&item).map(|line| self.outgoing.push(line));
        let outgoing = self.outgoing.clone();
        async move {
            if queued? {
                outgoing.room().await;
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// One message as a line. An error answer without an id gets `"id": null`, as JSON-RPC
/// requires (the protocol library leaves the member out).
fn serialize(message: &ServerJsonRpcMessage) -> io::Result<Vec<u8>> {
    let mut line = match message {
        ServerJsonRpcMessage::Error(e) if e.id.is_none() => {
            let mut value = serde_json::to_value(message).map_err(io::Error::other)?;
            if let Value::Object(map) = &mut value {
                map.insert("id".to_owned(), Value::Null);
            }
            serde_json::to_vec(&value)
        }
        _ => serde_json::to_vec(message),
    }
    .map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// An error answer written by the transport itself.
fn error_line(id: Option<&RequestId>, code: i64, message: &str) -> Vec<u8> {
    let id = id.map_or(Value::Null, |id| match id {
        NumberOrString::Number(n) => json!(n),
        NumberOrString::String(s) => json!(s.as_ref()),
    });
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// What one read produced.
enum Line {
    Complete(Vec<u8>),
    /// A line longer than the limit, skipped to its end.
    TooLong,
}

struct Reader<R> {
    input: BufReader<R>,
    forward: mpsc::Sender<ClientJsonRpcMessage>,
    answer: Outbox,
    in_flight: Arc<InFlight>,
    slots: Arc<Semaphore>,
    /// The longest line read; a longer one is skipped and answered with an error.
    max_line: usize,
    initialized: bool,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// Reads until end of input, a read error or the session's end.
    async fn run(mut self) {
        loop {
            let line = match self.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(err) => {
                    tracing::warn!(%err, "reading the session's input failed; ending the session");
                    return;
                }
            };
            let outcome = match line {
                Line::TooLong => Err(error_line(
                    None,
                    PARSE_ERROR,
                    &format!(
                        "Parse error: the line is longer than {} bytes (`[mcp] max_message_bytes`) and was skipped. Send smaller messages (put large data in files), or raise the setting.",
                        self.max_line
                    ),
                )),
                Line::Complete(bytes) => self.classify(&bytes).await,
            };
            let sent = match outcome {
                Ok(Some(message)) => self.forward.send(message).await.is_ok(),
                Ok(None) => true,
                Err(answer) => {
                    let queued = self.answer.push(answer);
                    self.answer.room().await;
                    queued
                }
            };
            if !sent {
                return;
            }
        }
    }

    /// The next line without its end, `None` at end of input. A last line without a
    /// newline still counts.
    async fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (too_long, line.is_empty()) {
                    (true, _) => Some(Line::TooLong),
                    (false, true) => None,
                    (false, false) => Some(Line::Complete(line)),
                });
            }
            let (piece, used, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            if !too_long {
                if line.len() + piece.len() > self.max_line {
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(piece);
                }
            }
            self.input.consume(used);
            if done {
                return Ok(Some(if too_long {
                    Line::TooLong
                } else {
                    Line::Complete(line)
                }));
            }
        }
    }

    /// A message to forward, nothing (a blank line), or the error line that answers it.
    async fn classify(&mut self, bytes: &[u8]) -> Result<Option<ClientJsonRpcMessage>, Vec<u8>> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            error_line(
                None,
                PARSE_ERROR,
                &format!(
                    "Parse error: the line is not valid UTF-8 (invalid byte at offset {}). Send UTF-8 JSON, one message per line.",
                    e.valid_up_to()
                ),
            )
        })?;
        if text.trim().is_empty() {
            return Ok(None);
        }
        // A usable message is read straight into its type; only one that is not is read
        // again, as plain JSON, to say why.
        let message = match super::call_line::read_call(text) {
            Some(call) => call,
            None => match serde_json::from_str::<ClientJsonRpcMessage>(text) {
                Ok(message) => message,
                Err(_) => return Err(self.why_unusable(text)),
            },
        };
        self.admit(message).await
    }

    /// The error line for a line that is not a usable message, naming the reason.
    fn why_unusable(&self, text: &str) -> Vec<u8> {
        match self.unusable_reason(text) {
            Err(line) => line,
            Ok(()) => error_line(
                None,
                INVALID_REQUEST,
                "Invalid request: the message cannot be read. See the MCP specification for the message's shape.",
            ),
        }
    }

    fn unusable_reason(&self, text: &str) -> Result<(), Vec<u8>> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            let reason = if e.to_string().starts_with("recursion limit exceeded") {
                format!("it nests deeper than 128 levels ({e})")
            } else {
                e.to_string()
            };
            error_line(
                None,
                PARSE_ERROR,
                &format!("Parse error: the line is not JSON: {reason}. Send one JSON-RPC message per line."),
            )
        })?;
        let Value::Object(object) = &value else {
            let what = if value.is_array() {
                "a batch (JSON array); send each message on its own line"
            } else {
                "not a JSON object; send a JSON-RPC request object"
            };
            return Err(error_line(
                None,
                INVALID_REQUEST,
                &format!("Invalid request: the message is {what}."),
            ));
        };
        let id = match object.get("id") {
            None => None,
            Some(Value::String(s)) => Some(NumberOrString::String(s.as_str().into())),
            Some(Value::Number(n)) if n.is_i64() => n.as_i64().map(NumberOrString::Number),
            Some(other) => {
                return Err(error_line(
                    None,
                    INVALID_REQUEST,
                    &format!(
                        "Invalid request: the id {other} is neither a string nor an integer. Use a string or integer id."
                    ),
                ));
            }
        };
        let invalid = |reason: String| {
            error_line(
                id.as_ref(),
                INVALID_REQUEST,
                &format!("Invalid request: {reason}"),
            )
        };
        if object.get("jsonrpc") != Some(&Value::String("2.0".to_owned())) {
            return Err(invalid(
                "`jsonrpc` must be \"2.0\". Send JSON-RPC 2.0 messages.".to_owned(),
            ));
        }
        let method = object
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        serde_json::from_value::<ClientJsonRpcMessage>(value).map_err(|e| {
            let what = method.as_deref().map_or_else(
                || "the message is neither a request, a notification nor a response".to_owned(),
                |m| format!("`{m}` cannot be read"),
            );
            invalid(format!(
                "{what} ({e}). See the MCP specification for the message's shape."
            ))
        })?;
        Ok(())
    }

    /// Checks a readable message against the session (a request before `initialize`, an
    /// id still in flight) and takes a slot for a request, waiting for one while all are
    /// taken (backpressure).
    async fn admit(
        &mut self,
        message: ClientJsonRpcMessage,
    ) -> Result<Option<ClientJsonRpcMessage>, Vec<u8>> {
        let invalid = |id: &RequestId, reason: String| {
            error_line(
                Some(id),
                INVALID_REQUEST,
                &format!("Invalid request: {reason}"),
            )
        };
        match &message {
            ClientJsonRpcMessage::Request(request) => {
                let is_initialize = matches!(request.request, ClientRequest::InitializeRequest(_));
                let is_ping = matches!(request.request, ClientRequest::PingRequest(_));
                if !self.initialized && !is_initialize && !is_ping {
                    let method = request.request.method();
                    return Err(invalid(
                        &request.id,
                        format!(
                            "`{method}` came before `initialize`. Open the session with an `initialize` request, then send `notifications/initialized`."
                        ),
                    ));
                }
                if self.in_flight.lock().contains_key(&request.id) {
                    return Err(invalid(
                        &request.id,
                        format!(
                            "a request with id {} is still in flight. Give every request its own id.",
                            request.id
                        ),
                    ));
                }
                // Backpressure: wait here, reading nothing more, until a slot is free.
                let Ok(permit) = self.slots.clone().acquire_owned().await else {
                    return Ok(None);
                };
                self.in_flight.lock().insert(request.id.clone(), permit);
                self.initialized |= is_initialize;
            }
            ClientJsonRpcMessage::Notification(notification) => {
                // A cancelled request may get no answer: its slot is free now.
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.lock().remove(id);
                }
            }
            _ => {}
        }
        Ok(Some(message))
    }
}

/// Writes lines as they come, flushing when none is waiting; drops them once `ended`.
async fn write_lines<W: AsyncWrite + Unpin>(
    writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    queue: Arc<Queued>,
    ended: CancellationToken,
) {
    let mut out = BufWriter::new(writer);
    while let Some(line) = lines.recv().await {
        queue.written(line.len());
        // Closing the server's input is how an MCP client ends a stdio session; answers to
        // calls cancelled by it have no reader left, and some clients (the Python SDK
        // before 2.0) fail while shutting down if one arrives anyway.
        if ended.is_cancelled() {
            continue;
        }
        if out.write_all(&line).await.is_err() {
            return;
        }
        if lines.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}
