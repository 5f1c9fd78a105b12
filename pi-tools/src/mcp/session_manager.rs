//! The protocol library's view of the sessions: each request's session looked up here
//! (404 once it ended, woken when it sleeps), its streams keeping it busy, and the events
//! of its answer streams kept for a client that reconnects.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use rmcp::ErrorData;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, GetExtensions, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{
    RestoreOutcome, SessionManager, SessionRestoreMarker,
};
use tokio_util::sync::CancellationToken;

use super::answering::Answering;
use super::opening::Opening;
use super::replay::{Found, KEPT_EVENTS, KEPT_FOR};
use super::sessions::{Busy, Life, Sessions};

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

/// How long a request waits for another's wake of its session before trying itself.
const WAKE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

fn not_found(id: &SessionId) -> LocalSessionManagerError {
    LocalSessionManagerError::SessionNotFound(id.clone())
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The gate kept a place for it (see `opening`), which it now takes.
        let (id, transport) = self.inner.create_session().await?;
        let life = Life::new(id.clone(), self.me.clone());
        *life.server.lock().unwrap_or_else(|e| e.into_inner()) = self.created();
        let mut table = self.table();
        Opening::settle_current(self);
        table.insert(id.clone(), Arc::new(life));
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        // A wake replays `initialize`; the request that woke the session is still to come.
        let replayed = match &message {
            ClientJsonRpcMessage::Request(r) => r
                .request
                .extensions()
                .get::<SessionRestoreMarker>()
                .is_some(),
            _ => false,
        };
        let busy = life.busy();
        let answer = self.inner.initialize_session(id, message).await;
        if replayed && answer.is_err() {
            life.wake_ended();
        }
        if !replayed && answer.is_ok() {
            // Kept awake for the client's `initialized`, which would wake it at once.
            life.activity().initialize_answered();
        }
        drop(busy);
        answer
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        let Some(life) = self.live(id) else {
            return Ok(false);
        };
        // Counted whatever follows: once woken, the session waits for this request too.
        life.activity().found();
        let deadline = tokio::time::Instant::now() + WAKE_WAIT;
        loop {
            // Made before looking, so a wake that ends meanwhile is not missed.
            let woke = life.woke.notified();
            {
                // A session falling asleep has done so once this is held.
                let _settled = life.waking.lock().await;
                let mut activity = life.activity();
                if !activity.asleep && !activity.waking_up {
                    return Ok(true);
                }
                if !activity.wake_claimed {
                    // Not held by the library: it wakes the session for this request
                    // (`restore_session`), which the others wait for.
                    activity.wake_claimed = true;
                    return Ok(false);
                }
            }
            // Another request wakes it. Sent on now, this one would reach a server not yet
            // initialised (which ends the session), or try a second wake and find nothing
            // to wake (404).
            if tokio::time::timeout_at(deadline, woke).await.is_err() {
                return Ok(false);
            }
        }
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        // DELETE ends a session in the gate; this is the library's word that a worker
        // ended, which for a sleeping session is no end of the session.
        if let Some(life) = self.life(id) {
            let mut activity = life.activity();
            if activity.workers_closing > 0 {
                activity.workers_closing -= 1;
                return Ok(());
            }
        }
        // The worker is closed by `end_at_once` once the cancelled calls have answered.
        self.end_at_once(id);
        Ok(())
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.wake(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy();
        life.activity().came();
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
        // The `initialized` replayed by a wake is not the request that woke the session.
        let replayed = match &message {
            ClientJsonRpcMessage::Notification(n) => n
                .notification
                .extensions()
                .get::<SessionRestoreMarker>()
                .is_some(),
            _ => false,
        };
        if !replayed
            && let ClientJsonRpcMessage::Notification(n) = &message
            && matches!(
                n.notification,
                ClientNotification::InitializedNotification(_)
            )
        {
            life.activity().initialized();
        }
        let accepted = self.inner.accept_message(id, message).await;
        if replayed {
            // The handshake is replayed: requests go to the woken server from now on.
            life.wake_ended();
        } else {
            life.arrived();
        }
        accepted
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // A client that holds its stream for server messages open is still there.
        let life = self.live(id).ok_or_else(|| not_found(id))?;
        let busy = life.busy_as(true);
        life.activity().came();
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
        life.activity().came();
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
