//! How many 2026-07-28 `subscriptions/listen` requests a server keeps open at once. A listen
//! stays open for as long as its client wants notifications, so a flood of them would hold
//! the server's connections (HTTP) or its requests in flight (stdio) for good: past the
//! bound one is refused at once, with a sentence, before the protocol library sees it.
//!
//! Over HTTP the bound is the session bound (see `session_bound`): a listen is what a
//! 2025-11-25 session's stream was, one connection held open. Over stdio it is the number of
//! requests read and unanswered (see `lines`); a listen does not take one of those places,
//! so open listens never stop the reader from reading the next call.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// JSON-RPC's code for a listen refused past the bound (implementation-defined server error).
pub(crate) const TOO_MANY_LISTENS: i64 = -32000;

/// The open listens of one server, at most `max`.
pub(crate) struct ListenBound {
    open: Arc<Semaphore>,
    max: usize,
    /// Which setting the bound follows, for the sentence of a refusal.
    follows: &'static str,
    /// Ends every listen open (over stdio: at the end of the input, see `lines`).
    ended: CancellationToken,
}

impl ListenBound {
    /// At most `max` listens open at once (at least one); `follows` names what sets it.
    pub(crate) fn new(max: usize, follows: &'static str) -> Self {
        let max = max.clamp(1, u32::MAX as usize);
        ListenBound {
            open: Arc::new(Semaphore::new(max)),
            max,
            follows,
            ended: CancellationToken::new(),
        }
    }

    /// The same, ending every listen open when [`end_all`](Self::end_all) is called: the
    /// server's listens watch `ended` (see `listen`).
    pub(crate) fn ending_with(self, ended: CancellationToken) -> Self {
        ListenBound { ended, ..self }
    }

    /// Ends every listen open: no client is left to listen.
    pub(crate) fn end_all(&self) {
        self.ended.cancel();
    }

    /// Waits until every listen has ended and given its place back (at most `within`): a
    /// listen ending (over stdio at the end of the input, over HTTP when the server stops)
    /// needs the protocol library, which stops once told to, to send its acknowledgment or
    /// completion result first.
    pub(crate) async fn all_ended(&self, within: std::time::Duration) {
        let all = u32::try_from(self.max).unwrap_or(u32::MAX);
        if tokio::time::timeout(within, self.open.acquire_many(all))
            .await
            .is_err()
        {
            tracing::warn!("listens still open {within:?} after they were told to end");
        }
    }

    /// A place for one more listen, held until the listen ends; or the sentence that
    /// refuses it.
    pub(crate) fn open(&self) -> Result<OwnedSemaphorePermit, String> {
        Arc::clone(&self.open).try_acquire_owned().map_err(|_| {
            format!(
                "Too many subscriptions/listen requests are open: the server keeps at most {} open at once ({}). Cancel a listen you no longer need (close its stream, or send notifications/cancelled for it), or retry later.",
                self.max, self.follows
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_bound_a_listen_is_refused_until_one_ends() {
        let bound = ListenBound::new(2, "the test's");
        let first = bound.open().expect("a place");
        let _second = bound.open().expect("a place");
        let refused = bound.open().expect_err("past the bound");
        assert_eq!(
            refused,
            "Too many subscriptions/listen requests are open: the server keeps at most 2 open at once (the test's). Cancel a listen you no longer need (close its stream, or send notifications/cancelled for it), or retry later."
        );
        drop(first);
        assert!(bound.open().is_ok());
    }
}
