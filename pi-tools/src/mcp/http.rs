//! Streamable HTTP: many clients at once, each session with its own calls, limits, logging
//! level and execution environment, behind a bearer token and a Host/Origin allow-list.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::error::McpError;
use super::hibernation::Remembered;
use super::house::House;
use super::http_conn::{ConnectionLimits, serve_connections};
use super::http_gate::{Gate, gate, health};
use super::listen_bound::ListenBound;
use super::server::{Served, ToolServer};
use super::session_bound::{WhenFull, max_sessions};
use super::sessions::Sessions;
use super::tools::McpTools;
use crate::core::RunnerConfig;

/// The path the server answers on.
pub const MCP_PATH: &str = "/mcp";

/// The path of the health probe: `GET` answers 200 without a token and tells nothing about
/// the tools.
pub const HEALTH_PATH: &str = "/healthz";

/// How long the end of the server waits for the listens open to send their completion
/// result before the transport closes their streams.
const LISTENS_GRACE: Duration = Duration::from_secs(1);

/// How long the end of the server waits for cancelled calls and ending sessions.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Whom the Streamable HTTP server lets in, and how it keeps sessions.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// The bearer token every request must carry (`Authorization: Bearer <token>`). Required
    /// when the listener is not on a loopback address.
    pub token: Option<String>,
    /// `Host` values accepted besides the loopback names (`localhost`, `127.0.0.1`, `::1`)
    /// and the listener's own address; anything else is refused (DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted besides the loopback ones (`localhost`, `127.0.0.1` and
    /// `[::1]`, over `http` or `https`, any port), e.g. `https://app.example.com:443`. A request without an
    /// `Origin` (not from a browser) passes.
    pub allowed_origins: Vec<String>,
    /// Serve every request without a session (`Mcp-Session-Id`): every request is then
    /// served by the server's one stateless house, whose execution environment (and its
    /// background jobs) lasts until the server stops, shared by all its clients.
    pub stateless: bool,
    /// A session idle this long (no call running, no stream open) is closed and its
    /// background jobs ended; `None` (the default): sessions do not expire by time. A
    /// session with a call in flight or an open stream never expires.
    pub session_idle: Option<Duration>,
    /// The most sessions kept at once; `None` keeps the default of 4096. Either is lowered
    /// to what the soft limit on open files holds with every session awake beside the
    /// connections (six descriptors a session; 74 under a limit of 1,024), with a log
    /// line when a configured one is. A new session past it is refused with 503 and the
    /// reason (see `when_full`). Past 32 idle sessions awake, a session that goes idle
    /// sleeps (a few KB) until its next request.
    pub max_sessions: Option<usize>,
    /// What a new session past `max_sessions` meets: refused (the default), or the least
    /// recently used idle session ends to make room.
    pub when_full: WhenFull,
    /// Bounds on connections and on the time to send a request (see [`ConnectionLimits`]).
    pub connections: ConnectionLimits,
}

impl HttpOptions {
    /// Refuses to serve on `local` when it is not a loopback address and there is no token.
    ///
    /// # Errors
    ///
    /// [`McpError::Insecure`], saying why and what to do.
    pub fn check(&self, local: SocketAddr) -> Result<(), McpError> {
        if !local.ip().is_loopback() && self.token.is_none() {
            return Err(McpError::Insecure { address: local });
        }
        Ok(())
    }
}

/// Serves `tools` over MCP's Streamable HTTP transport on `listener` (path `/mcp`, and the
/// health probe on `/healthz`) until `stop` is cancelled; then stops accepting, cancels
/// every call, ends every session (its background jobs killed) and returns once they are
/// done or after a 5 s grace.
///
/// `session_config` makes each session's runner configuration; give each its own execution
/// environment in `extensions` (a fresh `LocalEnv`), so ending one session ends only its
/// own background jobs. The stateless house (which serves every request of the 2026-07-28
/// era without a session, and every request of a stateless server) is one more such
/// configuration, made at its first request and ended, with its jobs, when the server stops.
///
/// A POST body larger than the tools' [`max_message_bytes`](McpTools::with_max_message_bytes)
/// gets 413; one that is not JSON gets 400 with a JSON-RPC `-32700` error, and JSON that is
/// not one message (a batch among them) 400 with `-32600`. DELETE of a live session answers
/// 200 and cancels its calls at once; of any other, 404.
///
/// # Errors
///
/// [`McpError::Insecure`] when the listener is on a non-loopback address without a token;
/// [`McpError::SchemaNotAnObject`] when a tool's schema cannot be an MCP input schema;
/// [`McpError::Io`] when the listener fails.
pub async fn serve_http<F>(
    tools: McpTools,
    session_config: F,
    listener: TcpListener,
    options: HttpOptions,
    stop: CancellationToken,
) -> Result<(), McpError>
where
    F: Fn() -> RunnerConfig + Send + Sync + 'static,
{
    let local = listener.local_addr().map_err(McpError::Io)?;
    options.check(local)?;
    let served = Served::new(&tools)?;
    let calls = TaskTracker::new();
    let max_message_bytes = tools.max_message_bytes();
    // The transport's own end, which closes every stream: after `stop`, once the listens
    // open have sent their completion result (see below).
    let serving = CancellationToken::new();
    let mut config = http_config(&options, local, serving.child_token())
        .with_max_request_body_bytes(max_message_bytes);
    let sessions = Sessions::new(
        options.session_idle,
        max_sessions(options.max_sessions, options.connections.max_connections),
        options.when_full,
    );
    if !options.stateless {
        // How the library wakes a sleeping session (see `hibernation`).
        config.session_store = Some(Arc::new(Remembered(Arc::downgrade(&sessions))));
    }
    if !options.stateless {
        tokio::spawn(Arc::clone(&sessions).expire_idle(stop.clone()));
    }
    // The one server of every stateless-era request (see `house`).
    let house = Arc::new(House::default());
    let service = {
        let calls = calls.clone();
        let stop = stop.clone();
        let manager = Arc::clone(&sessions);
        let sessions = (!options.stateless).then(|| Arc::clone(&sessions));
        let house = Arc::clone(&house);
        StreamableHttpService::new(
            move || {
                let fresh = |kept: Option<Arc<Sessions>>| {
                    let shared = kept.is_none();
                    ToolServer::for_session(
                        served.clone(),
                        session_config(),
                        stop.child_token(),
                        &calls,
                        kept,
                        shared,
                    )
                };
                Ok(match &sessions {
                    // A request of the stateless era (every request of a stateless server)
                    // is served by the house.
                    Some(_) if super::era::in_stateless_request() => house.server(|| fresh(None)),
                    None => house.server(|| fresh(None)),
                    // A woken session keeps its own server.
                    Some(kept) => kept.server_for_request(|| fresh(Some(Arc::clone(kept)))),
                })
            },
            manager,
            config,
        )
    };
    let gate_state = Arc::new(Gate {
        token: options.token.clone(),
        sessions: (!options.stateless).then(|| Arc::clone(&sessions)),
        max_message_bytes,
        body_timeout: options.connections.request_timeout,
        // As many listens open as sessions kept: each holds a connection, as a session's
        // stream does.
        listens: ListenBound::new(
            max_sessions(options.max_sessions, options.connections.max_connections),
            "as many as the sessions it keeps, `[mcp] max_sessions` lowered to what the limit on open files holds",
        ),
    });
    let app = axum::Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&gate_state),
            gate,
        ))
        .route(HEALTH_PATH, get(health));
    tracing::info!(%local, stateless = options.stateless, "serving MCP over Streamable HTTP");
    // At `stop` every listen ends (its server's token is a child of `stop`) and answers its
    // request with the completion result, the specification's graceful end; the transport
    // closes the streams once they have (or after a grace), not at once, which cut them.
    let transport_ends = {
        let (stop, serving, gate) = (stop.clone(), serving.clone(), Arc::clone(&gate_state));
        tokio::spawn(async move {
            stop.cancelled().await;
            gate.listens.all_ended(LISTENS_GRACE).await;
            serving.cancel();
        })
    };
    serve_connections(listener, app, options.connections.clone(), stop.clone()).await;
    // Sessions are ended by `stop`; wait for their calls' cleanup and their environments.
    stop.cancel();
    serving.cancel();
    transport_ends.abort();
    house.end();
    calls.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, calls.wait())
        .await
        .is_err()
    {
        tracing::warn!("sessions still ending {SHUTDOWN_GRACE:?} after the server stopped");
    }
    Ok(())
}

fn http_config(
    options: &HttpOptions,
    local: SocketAddr,
    cancel: CancellationToken,
) -> StreamableHttpServerConfig {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.push(local.ip().to_string());
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
        "https://localhost:*".into(),
        "https://127.0.0.1:*".into(),
        "https://[::1]:*".into(),
    ];
    origins.extend(options.allowed_origins.iter().cloned());
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_legacy_session_mode(!options.stateless)
        // A stateless-era answer that is the request's only message (no progress or log
        // line before it) is sent as a JSON body, without the event stream around it.
        .with_json_response(true)
        .with_cancellation_token(cancel)
}
