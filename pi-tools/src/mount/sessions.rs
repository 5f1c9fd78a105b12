//! Calls of different sessions take turns on a server.
//!
//! A server shared by the sessions of a gateway sees the progress token of every call it is
//! sent, and may name any of them in a progress notification: a call of one session could
//! then show progress made up by another's. Progress reaches only the running call whose
//! token it names (`client.rs`); so that this is always a call of the session the server is
//! working for, calls of one session run together, and a call of another session waits
//! until none of them runs. A session is known by its execution environment (the HTTP
//! gateway gives each session its own); calls without one are one session.

use std::sync::Mutex;

use tokio::sync::Notify;

use crate::core::ToolContext;
use crate::env::ExecutionEnv;

/// Which session's calls a server runs now.
#[derive(Default)]
pub(crate) struct Sessions {
    state: Mutex<Turn>,
    changed: Notify,
}

#[derive(Default)]
struct Turn {
    /// The session whose calls run, while `running` > 0.
    owner: usize,
    running: usize,
}

/// A call's turn on its server; the next session may go once every call of this one has
/// let go of its turn.
pub(crate) struct Running<'a> {
    sessions: &'a Sessions,
}

impl Sessions {
    /// Waits until calls of the session of `ctx` may run on the server, and counts this one.
    pub(crate) async fn enter(&self, ctx: &ToolContext) -> Running<'_> {
        let session = session_of(ctx);
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            // Registered before the check, so a release between the two is not missed.
            changed.as_mut().enable();
            {
                let mut turn = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if turn.running == 0 || turn.owner == session {
                    turn.owner = session;
                    turn.running += 1;
                    return Running { sessions: self };
                }
            }
            changed.await;
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut turn = self
            .sessions
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        turn.running -= 1;
        if turn.running == 0 {
            drop(turn);
            self.sessions.changed.notify_waiters();
        }
    }
}

/// The session of a call: its execution environment's address, 0 without one.
fn session_of(ctx: &ToolContext) -> usize {
    ctx.extensions()
        .get::<std::sync::Arc<dyn ExecutionEnv>>()
        .map_or(0, |env| std::sync::Arc::as_ptr(env).cast::<()>() as usize)
}
