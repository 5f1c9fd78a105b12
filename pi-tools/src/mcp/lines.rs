//! The stdio transport: one JSON-RPC message per line, read with bounds and answered when
//! unusable.
//!
//! The protocol library reads lines itself and drops what it cannot parse; this transport
//! reads them instead, so every line gets a usable answer: a line that is not JSON (invalid
//! UTF-8, a lone surrogate, nesting deeper than 128, an oversized line) gets `-32700` with
//! the reason; JSON that is not a usable request gets `-32600` with the reason and the id
//! when it could be read; a request before `initialize` (unless it is of MCP 2026-07-28,
//! which has none) and a request reusing the id of one still in flight are refused. It also applies backpressure: while `slots` requests are
//! unanswered, no further line is read, so a client that pipelines any number of requests
//! costs bounded memory (the operating system's pipe buffer holds the rest).
//!
//! Once the session is started, it runs `tools/call` requests itself and writes their
//! answers (see [`DirectCall`]); everything else goes through the protocol library.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::BoxFuture;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcRequest,
    NumberOrString, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use super::line_write::{INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, error_line, serialize};
use super::listen_bound::{ListenBound, TOO_MANY_LISTENS};
use super::outbox::{Outbox, write_lines};
use super::tasks_2025_edge::PendingInitialize as Initialize;

/// How long the end of input waits for the listens it ended to answer.
const LISTENS_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Requests read ahead of the ones executing, beyond `max_concurrency`.
pub(crate) const QUEUED_REQUESTS: usize = 64;
/// The in-flight bound when no `max_concurrency` is configured.
pub(crate) const UNBOUNDED_IN_FLIGHT: usize = 256;

/// Requests read and not yet answered, by id; each holds one slot.
#[derive(Default)]
struct InFlight {
    ids: Mutex<HashMap<RequestId, Slot>>,
}

/// A request's place among those in flight.
struct Slot {
    _permit: OwnedSemaphorePermit,
    /// For a call this transport runs itself: its number (ids may be reused once a request
    /// is answered or cancelled) and its cancellation.
    direct: Option<(u64, CancellationToken)>,
}

impl InFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Slot>> {
        self.ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Frees a request's slot, cancelling it when this transport runs it.
    fn cancel(&self, id: &RequestId) {
        let slot = self.lock().remove(id);
        if let Some((_, cancel)) = slot.and_then(|slot| slot.direct) {
            cancel.cancel();
        }
    }
}

/// Runs one `tools/call` request to its answer, as the protocol library would, given the
/// request's cancellation (`notifications/cancelled` for it, read by this transport).
pub(crate) type DirectCall = Arc<
    dyn Fn(
            JsonRpcRequest<ClientRequest>,
            CancellationToken,
        ) -> BoxFuture<'static, ServerJsonRpcMessage>
        + Send
        + Sync,
>;

/// Where the session puts its [`DirectCall`] once the protocol library has started it;
/// until then every request goes the library's way.
pub(crate) type DirectCalls = Arc<OnceLock<DirectCall>>;

/// The transport handed to the protocol library.
pub(crate) struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: Outbox,
    in_flight: Arc<InFlight>,
    read_task: tokio::task::JoinHandle<()>,
    /// The `initialize` awaiting its answer, which offers 2025-11-25's tasks.
    initialize: Initialize,
}

impl LineTransport {
    /// Starts reading `reader` and writing `writer`; the second value is the writer's task,
    /// which ends once every answer queued is written and the transport and its calls are
    /// gone. At end of input, reading stops and waits until every request read is answered;
    /// only then does the protocol library see the input end. `discard` is cancelled on a
    /// read error (and by the session on a signal); from then on nothing more is written,
    /// since the client is gone or going. At most `slots` requests are read and unanswered
    /// at once; a line longer than `max_line` bytes is skipped and answered with an error.
    /// Once `direct` is set, `tools/call` requests are run with it and answered here.
    pub(crate) fn new<R, W>(
        reader: R,
        writer: W,
        slots: usize,
        max_line: usize,
        discard: CancellationToken,
        direct: DirectCalls,
        listens: ListenBound,
    ) -> (Self, tokio::task::JoinHandle<()>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (incoming_tx, incoming) = mpsc::channel(16);
        let (outgoing, outgoing_rx) = Outbox::new();
        let in_flight = Arc::new(InFlight::default());
        let initialize = Initialize::default();
        let slots = slots.clamp(1, Semaphore::MAX_PERMITS);
        let reading = Reader {
            input: BufReader::new(reader),
            forward: incoming_tx,
            answer: outgoing.clone(),
            in_flight: in_flight.clone(),
            slots: Arc::new(Semaphore::new(slots)),
            all_slots: u32::try_from(slots).unwrap_or(u32::MAX),
            max_line,
            initialized: false,
            initialize: Arc::clone(&initialize),
            direct,
            calls: 0,
            listens,
        };
        let read_task = tokio::spawn({
            let discard = discard.clone();
            async move {
                if let Ended::ReadFailed = reading.run().await {
                    discard.cancel();
                }
            }
        });
        let write_task = tokio::spawn(write_lines(
            writer,
            outgoing_rx,
            Arc::clone(&outgoing.queue),
            discard,
        ));
        let transport = LineTransport {
            incoming,
            outgoing,
            in_flight,
            read_task,
            initialize,
        };
        (transport, write_task)
    }
}

impl Drop for LineTransport {
    fn drop(&mut self) {
        // The session is over: nothing more is read. The writer finishes what is queued.
        self.read_task.abort();
    }
}

/// How reading ended.
enum Ended {
    /// End of input, every request read answered; or the session ended first.
    Drained,
    /// The input could not be read.
    ReadFailed,
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
        if let Some(id) = &answered {
            self.in_flight.lock().remove(id);
        }
        let line = super::tasks_2025_edge::answer_line(&self.initialize, &item, answered);
        // Queued now, in the order of the calls; the writer is gone only when the session is
        // over, and nothing is lost then.
        let queued = line.map(|line| self.outgoing.push(line));
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
    /// How many slots there are: when all are free, every request read is answered.
    all_slots: u32,
    /// The longest line read; a longer one is skipped and answered with an error.
    max_line: usize,
    initialized: bool,
    initialize: Initialize,
    direct: DirectCalls,
    /// Calls run directly so far (each one's number in its slot).
    calls: u64,
    /// The open `subscriptions/listen` requests: each holds a place of its own, not a
    /// slot, so that listens open for good never stop the reading; they end with the input.
    listens: ListenBound,
}

impl<R: AsyncRead + Unpin> Reader<R> {
    /// Reads until end of input, a read error or the session's end. At end of input it
    /// waits until every request read is answered (calls run to completion), as a client
    /// that pipes its requests and closes its side expects every answer.
    async fn run(mut self) -> Ended {
        loop {
            let line = match self.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => {
                    // No client is left to listen: every listen ends, with its result.
                    self.listens.end_all();
                    let _all_answered = self.slots.acquire_many(self.all_slots).await;
                    self.listens.all_ended(LISTENS_GRACE).await;
                    return Ended::Drained;
                }
                Err(err) => {
                    tracing::warn!(%err, "reading the session's input failed; ending the session");
                    return Ended::ReadFailed;
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
                Ok(Some(message)) => match self.run_directly(message) {
                    None => true,
                    Some(message) => self.forward.send(message).await.is_ok(),
                },
                Ok(None) => true,
                Err(answer) => {
                    let queued = self.answer.push(answer);
                    self.answer.room().await;
                    queued
                }
            };
            if !sent {
                return Ended::Drained;
            }
        }
    }

    /// Runs a `tools/call` request in a task of its own and answers it from there, when the
    /// session has given a [`DirectCall`]: the protocol library would hand it to its own
    /// task, then pass the answer back through its own, two more hand-offs between
    /// threads for every call. Any other message is given back, to forward.
    fn run_directly(&mut self, message: ClientJsonRpcMessage) -> Option<ClientJsonRpcMessage> {
        let Some(run) = self.direct.get() else {
            return Some(message);
        };
        let ClientJsonRpcMessage::Request(request) = message else {
            return Some(message);
        };
        if !matches!(request.request, ClientRequest::CallToolRequest(_)) {
            return Some(ClientJsonRpcMessage::Request(request));
        }
        self.calls += 1;
        let number = self.calls;
        let cancel = CancellationToken::new();
        let id = request.id.clone();
        // The slot was taken by `admit` a moment ago, in this task.
        if let Some(slot) = self.in_flight.lock().get_mut(&id) {
            slot.direct = Some((number, cancel.clone()));
        }
        let answer = run(request, cancel);
        let in_flight = Arc::clone(&self.in_flight);
        let outbox = self.answer.clone();
        tokio::spawn(async move {
            // Serialized before the slot is looked at, so that a large answer does not hold
            // the lock the reader takes for every request.
            let line = serialize(&answer.await).unwrap_or_else(|err| {
                error_line(
                    Some(&id),
                    INTERNAL_ERROR,
                    &format!(
                        "The answer could not be serialized ({err}); this is a bug in pi-tools."
                    ),
                )
            });
            // Queued while the slot is held, so an id the client reuses after this answer
            // cannot meet an answer to the old request; a request cancelled meanwhile gets
            // none (its slot is gone), as the protocol library does.
            let queued = {
                let mut slots = in_flight.lock();
                let ours = slots
                    .get(&id)
                    .is_some_and(|slot| slot.direct.as_ref().is_some_and(|(n, _)| *n == number));
                if !ours {
                    return;
                }
                slots.remove(&id);
                outbox.push(line)
            };
            if queued {
                outbox.room().await;
            }
        });
        None
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
        let (message, usual) = match super::call_line::read_call(text) {
            Some(call) => (call, true),
            None => match serde_json::from_str::<ClientJsonRpcMessage>(text) {
                Ok(message) => (message, false),
                Err(_) => return Err(self.why_unusable(text)),
            },
        };
        if super::answer_ids::answers_no_question(&message) {
            // The library would take `"3"` for the question numbered 3.
            tracing::debug!(
                "an answer whose id is a string answers no question of the server's; it is dropped"
            );
            return Ok(None);
        }
        let admitted = self.admit(message).await?;
        // A call in the usual shape has no `params.task`: only another may be renamed.
        Ok(match admitted {
            Some(message) if self.initialized && !usual => {
                Some(super::tasks_2025_edge::divert_message(text, message))
            }
            other => other,
        })
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
                // A request of the stateless era (MCP 2026-07-28: `server/discover`, or one
                // naming its protocol version in `_meta`) needs no `initialize`; the protocol
                // library checks its metadata and version.
                let stateless_era = matches!(request.request, ClientRequest::DiscoverRequest(_))
                    || request.request.get_meta().protocol_version().is_some();
                if !self.initialized && !is_initialize && !is_ping && !stateless_era {
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
                let permit = if matches!(
                    request.request,
                    ClientRequest::SubscriptionsListenRequest(_)
                ) {
                    // A listen stays open: it takes a place among the listens, or is refused.
                    self.listens.open().map_err(|refusal| {
                        error_line(Some(&request.id), TOO_MANY_LISTENS, &refusal)
                    })?
                } else {
                    // Backpressure: wait here, reading nothing more, until a slot is free.
                    let Ok(permit) = self.slots.clone().acquire_owned().await else {
                        return Ok(None);
                    };
                    permit
                };
                self.in_flight.lock().insert(
                    request.id.clone(),
                    Slot {
                        _permit: permit,
                        direct: None,
                    },
                );
                if let ClientRequest::InitializeRequest(init) = &request.request {
                    super::tasks_2025_edge::remember(&self.initialize, &request.id, init);
                }
                self.initialized |= is_initialize;
            }
            ClientJsonRpcMessage::Notification(notification) => {
                // A cancelled request may get no answer: its slot is free now, and a call
                // run here is cancelled (the library cancels its own).
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.cancel(id);
                }
            }
            _ => {}
        }
        Ok(Some(message))
    }
}
