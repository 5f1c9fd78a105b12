//! Idle sessions sleep. Most of an awake session's memory (about 60 KB) is the protocol
//! library's worker and service task: their channels each allocate room for 32 messages
//! of about 500 bytes at once. Past [`awake_idle`] idle sessions, a session that goes idle
//! (no call running, no stream open, no request on its way) gives them up and keeps only
//! what waking needs: its server (execution environment, background jobs, logging level,
//! client roots) and its client's `initialize` parameters, a few KB in all.
//!
//! A request for a sleeping session wakes it through the library's session restore, as if
//! from an external store: a new worker, the `initialize` handshake replayed to the same
//! server, then the request, which sees nothing of it. The server is handed from the
//! restore to the library's service factory within the request's task (the library calls
//! one right after the other), so the woken session is the same session.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use rmcp::transport::streamable_http_server::RestoreOutcome;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManagerError;
use rmcp::transport::streamable_http_server::session::{
    SessionId, SessionState, SessionStore, SessionStoreError,
};

use super::server::ToolServer;
use super::sessions::{Life, Sessions};

/// Idle sessions kept awake (so a few clients that pause between calls do not wake their
/// session at each call); past this many, a session that goes idle sleeps at once. At
/// about 60 KB and a descriptor or three each, 2 MB and about a hundred descriptors at
/// most: 128 took 7.5 MB of the 100.8 MB 10,000 idle sessions took in a workspace of
/// 30,000 folders, and held two thirds of the server's descriptors. An awake session that ran a command holds about three
/// descriptors (its root, its Landlock ruleset, a watch), so with a soft limit on open
/// files below 1,024 it is an eighth of that limit: the descriptors held by idle sessions
/// never reach the half [`super::http_conn`] leaves beside the connections.
pub(crate) fn awake_idle() -> usize {
    static AWAKE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AWAKE.get_or_init(|| {
        let soft = crate::env::descriptor_limit().unwrap_or(usize::MAX);
        (soft / 8).clamp(4, 32)
    })
}

/// The sessions' `initialize` parameters, as the library's "external store", which is how
/// it wakes a session it does not hold.
pub(crate) struct Remembered(pub(crate) Weak<Sessions>);

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, SessionStoreError>> + Send + 'a>>;

impl SessionStore for Remembered {
    fn load<'a, 'b, 'c>(&'a self, session_id: &'b str) -> Boxed<'c, Option<SessionState>>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        let state = self.0.upgrade().and_then(|sessions| {
            let life = sessions.life(&SessionId::from(session_id))?;
            // Only a sleeping session is woken; any other is live (or ended) already.
            if !life.activity().asleep {
                return None;
            }
            let params = life
                .init
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()?;
            Some(SessionState::new(*params))
        });
        Box::pin(std::future::ready(Ok(state)))
    }

    fn store<'a, 'b, 'c, 'd>(
        &'a self,
        session_id: &'b str,
        state: &'c SessionState,
    ) -> Boxed<'d, ()>
    where
        'a: 'd,
        'b: 'd,
        'c: 'd,
        Self: 'd,
    {
        if let Some(life) = self
            .0
            .upgrade()
            .and_then(|sessions| sessions.life(&SessionId::from(session_id)))
        {
            *life.init.lock().unwrap_or_else(|e| e.into_inner()) =
                Some(Box::new(state.initialize_params.clone()));
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn delete<'a, 'b, 'c>(&'a self, _session_id: &'b str) -> Boxed<'c, ()>
    where
        'a: 'c,
        'b: 'c,
        Self: 'c,
    {
        // A session's parameters go with the session itself.
        Box::pin(std::future::ready(Ok(())))
    }
}

impl Sessions {
    /// The server for the session the library is about to serve in this task: the one of
    /// the session being woken, or `fresh()` for a new session (then kept for
    /// [`Sessions::created`], which the library calls next in the same task).
    pub(crate) fn server_for_request(&self, fresh: impl FnOnce() -> ToolServer) -> ToolServer {
        let Some(task) = tokio::task::try_id() else {
            return fresh();
        };
        if let Some(server) = self.handoff().remove(&task) {
            return server;
        }
        let server = fresh();
        self.handoff().insert(task, server.clone());
        server
    }

    /// The server made for the session created in this task, if any.
    pub(super) fn created(&self) -> Option<ToolServer> {
        let task = tokio::task::try_id()?;
        self.handoff().remove(&task)
    }

    /// Puts the session to sleep if it is still idle, awake and not expecting a request.
    pub(super) async fn sleep(self: Arc<Self>, id: SessionId, life: Arc<Life>) {
        let _settling = life.waking.lock().await;
        // Only a live session with what waking needs (its parameters are stored just after
        // its `initialize` is answered) sleeps. The table is looked at before the activity
        // is locked, as everywhere.
        let has_server = life
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        let has_init = life
            .init
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if !has_server || !has_init || self.life(&id).is_none() {
            return;
        }
        {
            let mut activity = life.activity();
            if !activity.may_sleep() {
                return;
            }
            activity.asleep = true;
            activity.workers_closing += 1;
            self.not_idle(&mut activity);
        }
        tracing::debug!(session = %id, "an idle session sleeps");
        // Its environments give up their descriptors, watches and empty temporary
        // directories; its next command takes them up again. A session that never made a
        // call has them too (made when it started).
        let server = life
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(server) = server {
            server.hibernate();
        }
        if let Err(err) = self.inner.close_session(&id).await {
            tracing::debug!(%err, "a sleeping session's worker could not be closed");
        }
    }

    /// Wakes a sleeping session: a new worker from the library, and its server handed to
    /// the service factory the library calls next.
    pub(super) async fn wake(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<<Self as SessionManager>::Transport>, LocalSessionManagerError> {
        let Some(life) = self.life(&id) else {
            return Ok(RestoreOutcome::NotSupported);
        };
        let outcome = self.wake_life(&id, &life).await;
        if !matches!(outcome, Ok(RestoreOutcome::Restored(_))) {
            // Nothing woke: the requests waiting for this wake go on (to their 404).
            life.wake_ended();
        }
        outcome
    }

    async fn wake_life(
        &self,
        id: &SessionId,
        life: &Arc<Life>,
    ) -> Result<RestoreOutcome<<Self as SessionManager>::Transport>, LocalSessionManagerError> {
        let id = id.clone();
        let _waking = life.waking.lock().await;
        let server = life
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let (Some(server), Some(task)) = (server, tokio::task::try_id()) else {
            return Ok(RestoreOutcome::NotSupported);
        };
        if !life.activity().asleep {
            return Ok(RestoreOutcome::NotSupported);
        }
        let outcome = self.inner.restore_session(id.clone()).await?;
        if let RestoreOutcome::Restored(_) = &outcome {
            self.handoff().insert(task, server);
            let mut activity = life.activity();
            activity.asleep = false;
            // Until the library has replayed `initialize` to it, requests wait for the wake
            // (see `has_session`); the request that woke it was counted on its way there.
            activity.waking_up = true;
            tracing::debug!(session = %id, "a sleeping session wakes");
        }
        Ok(outcome)
    }
}
