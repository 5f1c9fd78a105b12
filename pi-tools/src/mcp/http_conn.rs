//! The HTTP server's connections: accepted here rather than by axum's `serve`, which bounds
//! neither their number nor the time a client may take to send a request. A client that
//! opens connections and sends requests a byte at a time (slowloris), or never, would
//! otherwise hold every file descriptor, and the health probe and every other client would
//! wait.
//!
//! - At most `max_per_client` connections are open from one address; one more is closed on
//!   arrival, so one client cannot take the room of the others. A trusted proxy's
//!   connections are not bounded so: the clients it names are, each on its own (see
//!   `http_proxy`).
//! - At most `max_connections` are open in all. When they are, a new connection takes the
//!   place of one that is not sending an answer (waiting for a request, reading one, or
//!   idle between requests): the oldest of the client holding the most connections, which
//!   is closed. So clients that together hold every place with partial requests (many
//!   addresses, each under its own bound) cannot keep the health probe or anyone else out,
//!   and an answer being sent (a call's event stream) is never cut for room. Only when
//!   every connection is sending an answer is a new one closed on arrival.
//! - A request's head must arrive within `request_timeout` of the connection being ready
//!   for it, which is also how long a kept-alive connection may sit idle between requests;
//!   its body likewise (the gate reads it within the same time).

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::http_proxy::Proxies;

/// How long the end of the server waits for open connections to finish their answers.
const CLOSING_GRACE: Duration = Duration::from_secs(5);

/// Bounds on the HTTP server's connections.
#[derive(Clone, Debug)]
pub struct ConnectionLimits {
    /// The most connections open at once; one more is closed on arrival. The default is
    /// 1024, or half the process's file-descriptor limit when that is lower.
    pub max_connections: usize,
    /// The most connections open at once from one client address (default 64). Behind a
    /// trusted proxy, the most requests open at once for one client it names.
    pub max_per_client: usize,
    /// How long a client may take to send a request's head, and its body; also how long a
    /// kept-alive connection may sit idle before its next request (default 10 s). An
    /// answer being sent (a call's event stream) is not bounded by it.
    pub request_timeout: Duration,
    /// The addresses of the reverse proxies, load balancers or sidecars in front of the
    /// server (`[mcp] trusted_proxies`; default none). Their connections are not bounded
    /// per address; the client named by each request's `Forwarded` (`for=`) or
    /// `X-Forwarded-For` header is, to `max_per_client` requests open at once. The header
    /// is ignored from any other address.
    pub trusted_proxies: Vec<IpAddr>,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: default_max_connections(),
            max_per_client: 64,
            request_timeout: Duration::from_secs(10),
            trusted_proxies: Vec::new(),
        }
    }
}

/// 1024, or half the soft limit on open files when that is lower: the rest stays for the
/// sessions' files, processes and mounted servers.
fn default_max_connections() -> usize {
    let soft = crate::env::descriptor_limit().unwrap_or(usize::MAX);
    (soft / 2).clamp(16, 1024)
}

/// The connections open, by client address and in the order they came.
#[derive(Default)]
struct Open {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// Each open connection by its number (numbers grow, so the first is the oldest).
    entries: BTreeMap<u64, Entry>,
    by_client: HashMap<IpAddr, usize>,
    next: u64,
}

/// What the table knows of one open connection.
struct Entry {
    client: IpAddr,
    /// How many answers it is sending now.
    answering: Arc<AtomicUsize>,
    /// Cancelled to close it, its place given to a new connection.
    evict: CancellationToken,
}

impl Table {
    /// Forgets connection `id`, if it is still here.
    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.entries.remove(&id)?;
        if let Some(mine) = self.by_client.get_mut(&entry.client) {
            *mine -= 1;
            if *mine == 0 {
                self.by_client.remove(&entry.client);
            }
        }
        Some(entry)
    }

    /// The connection to close for room: not sending an answer, of the client holding the
    /// most connections, the oldest of its.
    fn victim(&self) -> Option<u64> {
        self.entries
            .iter()
            .filter(|(_, entry)| entry.answering.load(Ordering::SeqCst) == 0)
            .max_by_key(|(id, entry)| {
                let held = self.by_client.get(&entry.client).copied().unwrap_or(0);
                (held, Reverse(**id))
            })
            .map(|(id, _)| *id)
    }
}

impl Open {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for one more connection from `client`, if the bounds leave one or one can
    /// be taken from a connection that is not sending an answer (which is then closed).
    /// A trusted proxy's connection (`per_client` false) is not bounded per address.
    fn take(
        self: &Arc<Self>,
        client: IpAddr,
        limits: &ConnectionLimits,
        per_client: bool,
    ) -> Option<Place> {
        let mut table = self.table();
        if per_client && table.by_client.get(&client).copied().unwrap_or(0) >= limits.max_per_client
        {
            return None;
        }
        if table.entries.len() >= limits.max_connections {
            let victim = table.victim()?;
            if let Some(entry) = table.remove(victim) {
                tracing::debug!(client = %entry.client, "a connection is closed to make room for a new one");
                entry.evict.cancel();
            }
        }
        let id = table.next;
        table.next += 1;
        *table.by_client.entry(client).or_default() += 1;
        let answering = Arc::new(AtomicUsize::new(0));
        let evict = CancellationToken::new();
        table.entries.insert(
            id,
            Entry {
                client,
                answering: Arc::clone(&answering),
                evict: evict.clone(),
            },
        );
        Some(Place {
            open: Arc::clone(self),
            id,
            answering,
            evict,
        })
    }
}

/// The client a connection comes from: its IPv4 address, or the /64 network of an IPv6
/// one (a host is commonly given a whole /64, so one address each would let one client
/// pass for millions).
pub(super) fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from_bits(
                v6.to_bits() & !((1u128 << 64) - 1),
            )),
        },
        v4 @ IpAddr::V4(_) => v4,
    }
}

/// One connection's place among those open; given back when dropped.
struct Place {
    open: Arc<Open>,
    id: u64,
    /// How many answers the connection is sending now.
    answering: Arc<AtomicUsize>,
    /// Cancelled when its place was given to a new connection.
    evict: CancellationToken,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.table().remove(self.id);
    }
}

/// Counts an answer being sent on its connection, until its body is dropped (sent whole,
/// or the connection closed).
struct Answering(Arc<AtomicUsize>);

impl Answering {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Answering(Arc::clone(count))
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
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
    let proxies = Proxies::new(&limits.trusted_proxies, limits.max_per_client);
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
        let proxied = proxies.trusts(peer.ip());
        let Some(place) = open.take(client_of(peer.ip()), &limits, !proxied) else {
            tracing::debug!(%peer, "a connection over the server's bounds is closed");
            continue;
        };
        // Answers are small writes of an event stream: without TCP_NODELAY, Nagle's
        // algorithm holds each one back until the client's delayed ACK (40 ms per call).
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!(%err, "TCP_NODELAY could not be set on a connection");
        }
        let forwarded = proxied.then(|| (Arc::clone(&proxies), peer.ip()));
        let service = marking_answers(&app, &place.answering, forwarded);
        let timeout = limits.request_timeout;
        let stop = stop.clone();
        connections.spawn(async move {
            let evicted = place.evict.clone();
            let _place = place;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(timeout);
            let connection = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                // Its place was given to a new connection: dropping it closes it.
                () = evicted.cancelled() => return,
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

/// `app` for one connection, counting each answer in `answering` while it is sent. On a
/// connection from a trusted proxy (`forwarded`: the proxies and its address), each
/// request first takes a place among its client's.
fn marking_answers(
    app: &axum::Router,
    answering: &Arc<AtomicUsize>,
    forwarded: Option<(Arc<Proxies>, IpAddr)>,
) -> impl Service<
    hyper::Request<hyper::body::Incoming>,
    Response = hyper::Response<Body>,
    Error = Infallible,
    Future = impl Future<Output = Result<hyper::Response<Body>, Infallible>> + Send,
> + Send
+ 'static {
    let inner = TowerToHyperService::new(app.clone());
    let answering = Arc::clone(answering);
    hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let admitted = match &forwarded {
            Some((proxies, peer)) => proxies.admit(*peer, request.uri().path(), request.headers()),
            None => Ok(None),
        };
        let answer = admitted.map(|held| (held, inner.call(request)));
        let answering = Arc::clone(&answering);
        async move {
            let (held, response) = match answer {
                Ok((held, answer)) => (held, answer.await?),
                Err(refused) => (None, axum::response::IntoResponse::into_response(refused)),
            };
            let mark = Answering::new(&answering);
            Ok(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    // The mark, and the client's place, live as long as the body.
                    let _ = (&mark, &held);
                    frame
                }))
            }))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_is_its_64_network_and_a_mapped_ipv4_its_address() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            client_of(ip("2001:db8:1:2:aa:bb:cc:dd")),
            ip("2001:db8:1:2::")
        );
        assert_eq!(
            client_of(ip("2001:db8:1:2::1")),
            client_of(ip("2001:db8:1:2:ffff::"))
        );
        assert_ne!(
            client_of(ip("2001:db8:1:2::1")),
            client_of(ip("2001:db8:1:3::1"))
        );
        assert_eq!(client_of(ip("::ffff:10.0.0.7")), ip("10.0.0.7"));
        assert_eq!(client_of(ip("10.0.0.7")), ip("10.0.0.7"));
        assert_eq!(client_of(ip("::1")), ip("::"));
    }

    /// Room is taken from the client holding the most connections, its oldest one not
    /// sending an answer; when every connection sends one, a new one is refused.
    #[test]
    fn room_is_taken_from_the_heaviest_client_and_never_from_an_answer() {
        let limits = ConnectionLimits {
            max_connections: 4,
            max_per_client: 3,
            request_timeout: Duration::from_secs(1),
            trusted_proxies: Vec::new(),
        };
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let open = Arc::new(Open::default());
        let light = open.take(ip("10.0.0.1"), &limits, true).unwrap();
        let heavy: Vec<Place> = (0..3)
            .map(|_| open.take(ip("10.0.0.2"), &limits, true).unwrap())
            .collect();
        let _mark = Answering::new(&heavy[0].answering);
        let newcomer = open.take(ip("10.0.0.3"), &limits, true).unwrap();
        assert!(!heavy[0].evict.is_cancelled(), "an answer is never cut");
        assert!(
            heavy[1].evict.is_cancelled(),
            "the oldest idle one of the heaviest"
        );
        assert!(!heavy[2].evict.is_cancelled() && !light.evict.is_cancelled());
        // The heaviest client (10.0.0.2) still has one idle connection left.
        let again = open.take(ip("10.0.0.3"), &limits, true).unwrap();
        assert!(heavy[2].evict.is_cancelled());
        // With every connection sending an answer there is no room to take.
        let _mark_light = Answering::new(&light.answering);
        let _mark_new = Answering::new(&newcomer.answering);
        let _mark_again = Answering::new(&again.answering);
        assert!(
            open.take(ip("10.0.0.4"), &limits, true).is_none(),
            "every connection answers"
        );
    }
}
