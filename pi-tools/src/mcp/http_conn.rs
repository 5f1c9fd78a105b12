//! The HTTP server's connections: accepted here rather than by axum's `serve`, which bounds
//! neither their number nor the time a client may take to send a request. A client that
//! opens connections and sends requests a byte at a time (slowloris), or never, would
//! otherwise hold every file descriptor, and the health probe and every other client would
//! wait.
//!
//! - At most `max_connections` connections are open at once, and `max_per_client` from one
//!   address; one over either bound is closed on arrival, so one client cannot take the
//!   room of the others.
//! - A request's head must arrive within `request_timeout` of the connection being ready
//!   for it, which is also how long a kept-alive connection may sit idle between requests;
//!   its body likewise (the gate reads it within the same time).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long the end of the server waits for open connections to finish their answers.
const CLOSING_GRACE: Duration = Duration::from_secs(5);

/// Bounds on the HTTP server's connections.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// The most connections open at once; one more is closed on arrival. The default is
    /// 1024, or half the process's file-descriptor limit when that is lower.
    pub max_connections: usize,
    /// The most connections open at once from one client address (default 64).
    pub max_per_client: usize,
    /// How long a client may take to send a request's head, and its body; also how long a
    /// kept-alive connection may sit idle before its next request (default 10 s). An
    /// answer being sent (a call's event stream) is not bounded by it.
    pub request_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: default_max_connections(),
            max_per_client: 64,
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// 1024, or half the soft limit on open files when that is lower: the rest stays for the
/// sessions' files, processes and mounted servers.
fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(usize::MAX);
    (soft / 2).clamp(16, 1024)
}

/// The connections open, in all and by client address.
#[derive(Default)]
struct Open {
    counts: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

impl Open {
    fn counts(&self) -> MutexGuard<'_, (usize, HashMap<IpAddr, usize>)> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for one more connection from `client`, if the bounds leave one.
    fn take(self: &Arc<Self>, client: IpAddr, limits: &ConnectionLimits) -> Option<Place> {
        let mut counts = self.counts();
        let (all, by_client) = &mut *counts;
        let mine = by_client.entry(client).or_default();
        if *all >= limits.max_connections || *mine >= limits.max_per_client {
            if *mine == 0 {
                by_client.remove(&client);
            }
            return None;
        }
        *mine += 1;
        *all += 1;
        Some(Place {
            open: Arc::clone(self),
            client,
        })
    }
}

/// One connection's place among those open; given back when dropped.
struct Place {
    open: Arc<Open>,
    client: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = self.open.counts();
        let (all, by_client) = &mut *counts;
        *all -= 1;
        if let Some(mine) = by_client.get_mut(&self.client) {
            *mine -= 1;
            if *mine == 0 {
                by_client.remove(&self.client);
            }
        }
    }
}

/// Serves `app` on the connections of `listener`, within `limits`, until `stop`; then
/// stops accepting, lets open connections finish their answers (at most 5 s) and returns.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let open = Arc::new(Open::default());
    let connections = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of descriptors, or a connection gone before it was taken: wait a
                // moment rather than spin.
                tracing::debug!(%err, "a connection could not be accepted");
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Some(place) = open.take(peer.ip(), &limits) else {
            tracing::debug!(%peer, "a connection over the server's bounds is closed");
            continue;
        };
        // Answers are small writes of an event stream: without TCP_NODELAY, Nagle's
        // algorithm holds each one back until the client's delayed ACK (40 ms per call).
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!(%err, "TCP_NODELAY could not be set on a connection");
        }
        let service = TowerToHyperService::new(app.clone());
        let timeout = limits.request_timeout;
        let stop = stop.clone();
        connections.spawn(async move {
            let _place = place;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(timeout);
            let connection = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = ended {
                tracing::debug!(%err, "an HTTP connection ended early");
            }
        });
    }
    connections.close();
    if tokio::time::timeout(CLOSING_GRACE, connections.wait())
        .await
        .is_err()
    {
        tracing::debug!("connections still open {CLOSING_GRACE:?} after the server stopped");
    }
}
