//! The Streamable HTTP sessions: rmcp's in-memory session manager, with the session's life
//! decided here.
//!
//! - A session lives while its client uses it: it ends when the client deletes it, when the
//!   server stops, or when the server must make room for a new one (past `max_sessions`,
//!   the least recently used session that is not busy goes). Expiry by idle time is opt-in.
//! - A session is busy while one of its calls runs or one of its streams is open (an answer
//!   stream, or the client's `GET` stream for server messages); a busy session is never
//!   evicted and never expires. Its idle clock starts when the last of those ends.
//! - An ended session is gone at once: the next request gets 404 (the protocol library
//!   would answer 500 for the seconds its worker takes to wind down).
//! - Ending a session (DELETE, expiry, eviction, the server's end) cancels its calls and
//!   ends its execution environment's processes at once; the library's worker is closed once
//!   the cancelled calls have sent their answers, so nothing is left to send to a closed
//!   session.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{Stream, StreamExt};
use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::replay::{Found, KEPT_EVENTS, KEPT_FOR, Replay};
use crate::env::ExecutionEnv;

/// The most sessions kept when none is configured: an idle session costs about 60 KB
/// (docs/mcp.md has the measurement), so these fit in about 64 MB.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// How long an ended session's worker waits for its cancelled calls to send their answers.
const WIND_DOWN: Duration = Duration::from_secs(5);

/// How long an ended session's worker stays after its last call's handler returned, for
/// the answer to pass from the protocol library's service to the worker (closing it sooner
/// makes the library log the answer's loss as an error). A timing, not a handshake: the
/// library offers none; on a machine loaded enough to take longer, the loss is logged.
const ANSWER_PASSAGE: Duration = Duration::from_millis(500);

/// The header that names a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The sessions of one server.
pub(crate) struct Sessions {
    inner: Arc<LocalSessionManager>,
    /// Opt-in expiry: a session idle this long ends.
    idle: Option<Duration>,
    /// Past this many sessions, the least recently used idle one makes room.
    max: usize,
    table: Mutex<HashMap<SessionId, Arc<Life>>>,
}

/// One session's activity, how to end what runs for it, and its answer streams' events.
#[derive(Default)]
struct Life {
    activity: Mutex<Activity>,
    replay: Arc<Replay>,
    ender: OnceLock<SessionEnder>,
    /// Told when the session stops being busy.
    quiet: Notify,
    /// The answer streams open, by the id of the request they answer, so a call can close
    /// its own (see [`close_answer_stream`]).
    answering: Mutex<Vec<(String, Arc<CancellationToken>)>>,
}

struct Activity {
    busy: usize,
    /// Of `busy`, the client's streams for server messages (`GET`), which carry no answer.
    listening: usize,
    /// When the session was last asked anything, or last stopped being busy.
    last_used: Instant,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            busy: 0,
            listening: 0,
            last_used: Instant::now(),
        }
    }
}

impl Life {
    fn activity(&self) -> MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn expired(&self, idle: Option<Duration>, now: Instant) -> bool {
        let Some(idle) = idle else {
            return false;
        };
        let activity = self.activity();
        activity.busy == 0 && now.duration_since(activity.last_used) >= idle
    }

    /// When it was last used, if it is idle (and so may make room).
    fn idle_since(&self) -> Option<Instant> {
        let activity = self.activity();
        (activity.busy == 0).then_some(activity.last_used)
    }

    fn touch(&self) {
        self.activity().last_used = Instant::now();
    }

    fn busy(self: &Arc<Self>) -> Busy {
        self.busy_as(false)
    }

    fn busy_as(self: &Arc<Self>, listening: bool) -> Busy {
        let mut activity = self.activity();
        activity.busy += 1;
        activity.listening += usize::from(listening);
        activity.last_used = Instant::now();
        Busy {
            life: Arc::clone(self),
            listening,
        }
    }

    fn end(&self) {
        if let Some(ender) = self.ender.get() {
            ender.end();
        }
    }

    /// Waits until no call runs and no answer is being sent, at most `within`.
    async fn quieted(&self, within: Duration) {
        let _ = tokio::time::timeout(within, async {
            loop {
                let quiet = self.quiet.notified();
                let answering = {
                    let activity = self.activity();
                    activity.busy - activity.listening
                };
                if answering == 0 {
                    return;
                }
                quiet.await;
            }
        })
        .await;
    }
}

/// Keeps a session busy until dropped; the idle clock starts when the last one goes.
pub(crate) struct Busy {
    life: Arc<Life>,
    listening: bool,
}

impl Busy {
    /// Runs `call`, the answer to `request`, so that [`close_answer_stream`] closes the
    /// stream that carries its answer.
    pub(crate) async fn answering<F: Future>(&self, request: String, call: F) -> F::Output {
        let life = Arc::clone(&self.life);
        ANSWERING.scope((life, request), call).await
    }
}

tokio::task_local! {
    /// The session and request id of the call this task answers, over HTTP.
    static ANSWERING: (Arc<Life>, String);
}

/// Closes the event stream that carries the answer to the MCP call this runs in, before
/// the answer: the server's side of the Streamable HTTP transport's polling (SEP-1699).
/// The call goes on; the client reconnects with `GET` and `Last-Event-ID` and gets the
/// events it missed, then the answer. For a tool that tests a client's resumption (the
/// conformance suite's `test_reconnection`); `false` when the call is not one of a
/// Streamable HTTP session (stdio, stateless HTTP, no MCP) or its stream is closed already.
pub fn close_answer_stream() -> bool {
    ANSWERING
        .try_with(|(life, request)| {
            let mut answering = life.answering.lock().unwrap_or_else(|e| e.into_inner());
            let found = answering.iter().position(|(id, _)| id == request);
            found.map(|i| answering.swap_remove(i).1.cancel()).is_some()
        })
        .unwrap_or(false)
}

/// Takes a closed answer stream out of its session's list when the stream goes.
struct Answering {
    life: Arc<Life>,
    token: Arc<CancellationToken>,
}

impl Drop for Answering {
    fn drop(&mut self) {
        let mut answering = self
            .life
            .answering
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        answering.retain(|(_, token)| !Arc::ptr_eq(token, &self.token));
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut activity = self.life.activity();
        activity.busy -= 1;
        activity.listening -= usize::from(self.listening);
        activity.last_used = Instant::now();
        if activity.busy == activity.listening {
            self.life.quiet.notify_waiters();
        }
    }
}

/// What ending a session stops at once: its server's calls (their token) and its execution
/// environment's processes.
#[derive(Clone)]
pub(crate) struct SessionEnder {
    pub(crate) calls: CancellationToken,
    pub(crate) env: Option<Arc<dyn ExecutionEnv>>,
}

impl SessionEnder {
    fn end(&self) {
        self.calls.cancel();
        if let Some(env) = &self.env {
            env.end_session();
        }
    }
}

impl Sessions {
    /// Sessions that end when deleted, when the server stops, when `max` others need the
    /// room (the least recently used idle one goes), or, if `idle` is given, after that
    /// long without a call or an open stream.
    pub(crate) fn new(idle: Option<Duration>, max: usize) -> Self {
        let mut inner = LocalSessionManager::default();
        // The library's own keep-alive counts only messages, so it would end a session in
        // the middle of a long call; a session's life is decided here instead.
        inner.session_config.keep_alive = None;
        // A stream cut while its call runs is resumed from the library's buffer, as large
        // as what `Replay` keeps once the call has ended.
        inner.session_config.channel_capacity = KEPT_EVENTS;
        Sessions {
            inner: Arc::new(inner),
            idle,
            max: max.max(1),
            table: Mutex::new(HashMap::new()),
        }
    }

    fn table(&self) -> MutexGuard<'_, HashMap<SessionId, Arc<Life>>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session's life, if it is live; an expired one is ended here and is not.
    fn live(&self, id: &SessionId) -> Option<Arc<Life>> {
        let life = self.table().get(id).cloned()?;
        if life.expired(self.idle, Instant::now()) {
            self.end_at_once(id);
            return None;
        }
        Some(life)
    }

    /// Whether `id` names a live session.
    pub(crate) fn is_live(&self, id: &str) -> bool {
        self.live(&SessionId::from(id)).is_some()
    }

    /// Makes room for one more session: below the bound there is room; at it, the least
    /// recently used session that is not busy ends. `false` when every session is busy.
    pub(crate) fn make_room(&self) -> bool {
        let victim = {
            let table = self.table();
            if table.len() < self.max {
                return true;
            }
            table
                .iter()
                .filter_map(|(id, life)| life.idle_since().map(|since| (since, id)))
                .min()
                .map(|(_, id)| id.clone())
        };
        match victim {
            Some(id) => {
                tracing::debug!(session = %id, "the least recently used idle session makes room");
                self.end_at_once(&id);
                true
            }
            None => false,
        }
    }

    /// Removes the session and stops what runs for it; the library's worker is closed in
    /// the background once the cancelled calls have answered (or after a short wait).
    fn end_at_once(&self, id: &SessionId) -> bool {
        let Some(life) = self.table().remove(id) else {
            return false;
        };
        tracing::debug!(session = %id, "MCP session ended");
        life.end();
        let inner = Arc::clone(&self.inner);
        let id = id.clone();
        tokio::spawn(async move {
            // Closing the worker while a cancelled call's answer is on its way would leave
            // the answer with nowhere to go (the library logs that as an error).
            life.quieted(WIND_DOWN).await;
            // A call's handler has returned, but the library still passes its answer on to
            // the worker; give that a moment before the worker goes.
            tokio::time::sleep(ANSWER_PASSAGE).await;
            if let Err(err) = inner.close_session(&id).await {
                tracing::debug!(%err, "an ended session's worker could not be closed");
            }
        });
        true
    }

    /// Marks the session named by a request's headers busy while a call runs, and
    /// remembers how to end what runs for it. `None` when the request has no live session.
    pub(crate) fn call_started(
        &self,
        headers: &axum::http::HeaderMap,
        ender: impl FnOnce() -> SessionEnder,
    ) -> Option<Busy> {
        let id = headers.get(SESSION_HEADER)?.to_str().ok()?;
        let life = self.live(&SessionId::from(id))?;
        if life.ender.get().is_none() {
            let _ = life.ender.set(ender());
        }
        Some(life.busy())
    }

    /// Ends every session whose idle time has passed (when expiry is on), until `stop`;
    /// then ends every session. Each is also ended when a request names it, so this only
    /// frees what nobody asks for any more.
    pub(crate) async fn expire_idle(self: Arc<Self>, stop: CancellationToken) {
        if let Some(idle) = self.idle {
            let period = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
            let mut ticks = tokio::time::interval(period);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    () = stop.cancelled() => break,
                }
                let now = Instant::now();
                let expired: Vec<SessionId> = self
                    .table()
                    .iter()
                    .filter(|(_, life)| life.expired(self.idle, now))
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in expired {
                    self.end_at_once(&id);
                }
            }
        } else {
            stop.cancelled().await;
        }
        // The server is stopping: every session ends.
        let all: Vec<SessionId> = self.table().keys().cloned().collect();
        for id in all {
            self.end_at_once(&id);
        }
    }
}

/// A stream that keeps its session busy while it is open.
struct BusyStream<S> {
    inner: Pin<Box<S>>,
    _busy: Busy,
    _answering: Option<Answering>,
}

impl<S: Stream> Stream for BusyStream<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// The one event of a resumed stream whose events are no longer kept: a JSON-RPC error.
fn lost_events(last_event_id: &str) -> ServerSseMessage {
    let error = ErrorData::invalid_request(
        format!(
            "Invalid Request: the events after `Last-Event-ID: {last_event_id}` are no longer kept (a stream keeps its last {KEPT_EVENTS} events, for {} s after its answer), or the id names no stream of this session. Send the request again if it is safe to repeat.",
            KEPT_FOR.as_secs()
        ),
        None,
    );
    ServerSseMessage::from_message(ServerJsonRpcMessage::error(error, None))
}

fn not_found(id: &SessionId) -> LocalSessionManagerError {
    LocalSessionManagerError::SessionNotFound(id.clone())
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The gate has made room already; a race past the bound by a few is harmless.
        let (id, transport) = self.inner.create_session().await?;
        self.table().insert(id.clone(), Arc::default());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let _busy = life.busy();
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.live(id).is_some())
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // The worker is closed by `end_at_once` once the cancelled calls have answered.
        self.end_at_once(id);
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy();
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.to_string()),
            _ => None,
        };
        let stream = self.inner.create_stream(id, message).await?;
        // The client's side of the stream ends when its call closes it; the events are
        // still read and kept, for the client's reconnection.
        let token = Arc::new(CancellationToken::new());
        let answering = request.map(|request| {
            life.answering
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((request, Arc::clone(&token)));
            Answering {
                life: Arc::clone(&life),
                token: Arc::clone(&token),
            }
        });
        let closed = CancellationToken::clone(&token).cancelled_owned();
        let stream = life.replay.keep(stream).take_until(closed);
        Ok(BusyStream {
            inner: Box::pin(stream),
            _busy: busy,
            _answering: answering,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        life.touch();
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A client that holds its stream for server messages open is still there.
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy_as(true);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(BusyStream {
            inner: Box::pin(stream),
            _busy: busy,
            _answering: None,
        })
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy();
        let stream: Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>> =
            match self.inner.resume(id, last_event_id.clone()).await {
                // The call still runs: the library replays its buffer, then the rest.
                Ok(stream) => Box::pin(life.replay.keep(stream)),
                // The library has let go of the stream (its call ended): what is kept here.
                Err(err) => match life.replay.after(&last_event_id) {
                    Found::Events(events) => Box::pin(futures::stream::iter(events)),
                    // An empty stream would leave the client waiting for an answer that
                    // never comes: say what was lost instead.
                    Found::Lost | Found::Unknown => {
                        tracing::debug!(%err, %last_event_id, "a stream could not be resumed");
                        Box::pin(futures::stream::once(std::future::ready(lost_events(
                            &last_event_id,
                        ))))
                    }
                },
            };
        Ok(BusyStream {
            inner: Box::pin(stream),
            _busy: busy,
            _answering: None,
        })
    }
}
