//! A place kept for a session being opened. The gate lets an `initialize` in only when the
//! sessions kept and those being opened are fewer than the bound, and counts it among those
//! being opened until its session is in the table (or its request ends without one).
//! Without the count, `initialize`s arriving together would all see room for one more and
//! all be kept, past the bound that the descriptor limit set.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::sessions::Sessions;

tokio::task_local! {
    /// The place kept for the session the request in this task opens.
    static OPENING: Arc<Opening>;
}

/// One session's place, counted in [`Sessions::opening`] until settled or dropped.
pub(crate) struct Opening {
    sessions: Arc<Sessions>,
    counted: AtomicBool,
}

impl Opening {
    /// Counts a new opening. Called with the sessions' table locked, after the check that
    /// there is room, so that no other request takes the same place.
    pub(super) fn counted(sessions: &Arc<Sessions>) -> Arc<Opening> {
        sessions.opening.fetch_add(1, Ordering::Relaxed);
        Arc::new(Opening {
            sessions: Arc::clone(sessions),
            counted: AtomicBool::new(true),
        })
    }

    /// Runs `request` (the `initialize` whose place this is) so that the session it makes
    /// takes the place.
    pub(crate) async fn scope<F: std::future::Future>(self: Arc<Self>, request: F) -> F::Output {
        OPENING.scope(self, request).await
    }

    /// The session of this task's request is in the table: its place is no longer counted
    /// as opening. Called with the table locked, as the session goes in.
    pub(super) fn settle_current(sessions: &Sessions) {
        let _ = OPENING.try_with(|opening| {
            if std::ptr::eq(Arc::as_ptr(&opening.sessions), sessions) {
                opening.uncount();
            }
        });
    }

    fn uncount(&self) {
        if self.counted.swap(false, Ordering::Relaxed) {
            self.sessions.opening.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Opening {
    /// A request that ended without a session (a bad `initialize`, a client gone) frees its
    /// place.
    fn drop(&mut self) {
        let _table = self.sessions.table();
        self.uncount();
    }
}
