//! The stateless house: the one server (with its session, execution environment and
//! background jobs) that serves every request of the stateless era over HTTP, a 2026-07-28
//! request without an `Mcp-Session-Id` and every request of a `--stateless` server. It is
//! made at the first such request and ended when the HTTP server stops, its jobs with it.
//!
//! The stateless era has no client identity, so what the house holds is shared by every
//! client of the server (behind its token): the working directory's environment, its jobs
//! (and their notices, which go into whichever result comes next), its tasks. What belongs
//! to one request stays with it: the log level of its `_meta`, its round of questions (a
//! person's answer holds for that call only), its cancellation, and its client's roots,
//! whose confined configurations are kept per list of roots ([`ROOTS_KEPT`] at most, the
//! least recently used given up first and ended once nothing uses it).

use std::sync::Mutex;

use super::server::ToolServer;

/// How many lists of client roots the house keeps a confined environment for.
pub(crate) const ROOTS_KEPT: usize = 32;

/// The house of one HTTP server: none until the first stateless request.
#[derive(Default)]
pub(crate) struct House {
    server: Mutex<Option<ToolServer>>,
    ended: std::sync::atomic::AtomicBool,
}

impl House {
    /// The house's server, made by `make` at the first request. After [`end`](Self::end),
    /// each request gets one of its own again (ended with it), as the server is stopping.
    pub(crate) fn server(&self, make: impl FnOnce() -> ToolServer) -> ToolServer {
        let mut kept = self.server.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(server) = &*kept {
            return server.clone();
        }
        let server = make();
        if !self.ended.load(std::sync::atomic::Ordering::Acquire) {
            *kept = Some(server.clone());
        }
        server
    }

    /// Ends the house now: its calls are cancelled and its processes, background jobs
    /// included, end.
    pub(crate) fn end(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::Release);
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(server) = server {
            server.end();
        }
    }
}
