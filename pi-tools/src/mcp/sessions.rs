//! The Streamable HTTP sessions: rmcp's in-memory session manager, with the session's life
//! decided here.
//!
//! - A session is busy while one of its calls runs or one of its answer streams is open;
//!   a busy session never expires. Its idle clock starts when the last of those ends.
//! - An idle session past its idle time is gone at once: the next request gets 404 (the
//!   protocol library would answer 500 for the seconds its worker takes to wind down).
//! - Ending a session (DELETE, expiry, the server's end) cancels its calls and ends its
//!   execution environment's processes at once, not after the library's drain time.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::env::ExecutionEnv;

/// The idle time when none is configured.
pub(crate) const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(300);

/// The header that names a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The sessions of one server.
pub(crate) struct Sessions {
    inner: Arc<LocalSessionManager>,
    idle: Duration,
    table: Mutex<HashMap<SessionId, Arc<Life>>>,
}

/// One session's activity, and how to end what runs for it.
#[derive(Default)]
struct Life {
    activity: Mutex<Activity>,
    ender: OnceLock<SessionEnder>,
}

struct Activity {
    busy: usize,
    idle_since: Instant,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            busy: 0,
            idle_since: Instant::now(),
        }
    }
}

impl Life {
    fn activity(&self) -> MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn expired(&self, idle: Duration, now: Instant) -> bool {
        let activity = self.activity();
        activity.busy == 0 && now.duration_since(activity.idle_since) >= idle
    }

    fn touch(&self) {
        let mut activity = self.activity();
        if activity.busy == 0 {
            activity.idle_since = Instant::now();
        }
    }

    fn busy(self: &Arc<Self>) -> Busy {
        self.activity().busy += 1;
        Busy {
            life: Arc::clone(self),
        }
    }

    fn end(&self) {
        if let Some(ender) = self.ender.get() {
            ender.end();
        }
    }
}

/// Keeps a session busy until dropped; the idle clock starts when the last one goes.
pub(crate) struct Busy {
    life: Arc<Life>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut activity = self.life.activity();
        activity.busy -= 1;
        if activity.busy == 0 {
            activity.idle_since = Instant::now();
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
    /// Sessions that expire after `idle` without a call or an open answer stream.
    pub(crate) fn new(idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        // The library's own keep-alive counts only messages, so it would end a session in
        // the middle of a long call; expiry is decided here instead.
        inner.session_config.keep_alive = None;
        Sessions {
            inner: Arc::new(inner),
            idle,
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

    /// Removes the session and stops what runs for it; the library's worker is told to end
    /// in the background (its calls are already cancelled, so it has nothing to wait for).
    fn end_at_once(&self, id: &SessionId) -> bool {
        let Some(life) = self.table().remove(id) else {
            return false;
        };
        tracing::debug!(session = %id, "MCP session ended");
        life.end();
        let inner = Arc::clone(&self.inner);
        let id = id.clone();
        tokio::spawn(async move {
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

    /// Ends every session whose idle time has passed, until `stop`; each is also ended when
    /// a request names it, so this only frees what nobody asks for any more.
    pub(crate) async fn expire_idle(self: Arc<Self>, stop: CancellationToken) {
        let period = (self.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
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
        // The server is stopping: every session ends.
        let all: Vec<SessionId> = self.table().keys().cloned().collect();
        for id in all {
            self.end_at_once(&id);
        }
    }
}

/// An answer stream that keeps its session busy while it is open.
struct BusyStream<S> {
    inner: Pin<Box<S>>,
    _busy: Busy,
}

impl<S: Stream> Stream for BusyStream<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

fn not_found(id: &SessionId) -> LocalSessionManagerError {
    LocalSessionManagerError::SessionNotFound(id.clone())
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
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
        self.end_at_once(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy();
        let stream = self.inner.create_stream(id, message).await?;
        Ok(BusyStream {
            inner: Box::pin(stream),
            _busy: busy,
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
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        life.touch();
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy();
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(BusyStream {
            inner: Box::pin(stream),
            _busy: busy,
        })
    }
}
