//! A call that closes its own answer stream (the server's side of the Streamable HTTP
//! transport's polling, SEP-1699): the client reconnects with `Last-Event-ID` and gets the
//! rest, the answer included.

use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::sessions::{Busy, Life};

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
pub(super) struct Answering {
    pub(super) life: Arc<Life>,
    pub(super) token: Arc<CancellationToken>,
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
