//! Streamable HTTP: many clients at once, each session with its own calls, limits, logging
//! level and execution environment, behind a bearer token and a Host/Origin allow-list.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::error::McpError;
use super::server::{Served, ToolServer};
use super::tools::McpTools;
use crate::core::RunnerConfig;

/// The path the server answers on.
pub const MCP_PATH: &str = "/mcp";

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
    /// Browser origins accepted besides `http://localhost`, `http://127.0.0.1` and
    /// `http://[::1]` (any port), e.g. `https://app.example.com:443`. A request without an
    /// `Origin` (not from a browser) passes.
    pub allowed_origins: Vec<String>,
    /// Serve every request on its own, with no session (`Mcp-Session-Id`): each request
    /// then gets a fresh execution environment, ended with the request.
    pub stateless: bool,
    /// A session idle this long is closed, its calls cancelled and its background jobs
    /// ended; `None` keeps the default of 5 minutes.
    pub session_idle: Option<Duration>,
}

/// Serves `tools` over MCP's Streamable HTTP transport on `listener` (path `/mcp`) until
/// `stop` is cancelled; then stops accepting, cancels every call, ends every session (its
/// background jobs killed) and returns once they are done or after a 5 s grace.
///
/// `session_config` makes each session's runner configuration; give each its own execution
/// environment in `extensions` (a fresh `LocalEnv`), so ending one session ends only its
/// own background jobs.
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
    if !local.ip().is_loopback() && options.token.is_none() {
        return Err(McpError::Insecure { address: local });
    }
    let served = Served::new(&tools)?;
    let calls = TaskTracker::new();
    let config = http_config(&options, local, stop.child_token());
    let service = {
        let calls = calls.clone();
        let stop = stop.clone();
        StreamableHttpService::new(
            move || {
                Ok(ToolServer::for_session(
                    served.clone(),
                    session_config(),
                    stop.child_token(),
                    &calls,
                ))
            },
            Arc::new(session_manager(&options)),
            config,
        )
    };
    let token = Arc::new(options.token.clone());
    let app = axum::Router::new()
        .route_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn_with_state(token, require_token));
    tracing::info!(%local, stateless = options.stateless, "serving MCP over Streamable HTTP");
    // Answers are small writes of an event stream: without TCP_NODELAY, Nagle's algorithm
    // holds each one back until the client's delayed ACK (40 ms per call).
    let listener = listener.tap_io(|tcp| {
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::debug!(%err, "TCP_NODELAY could not be set on a connection");
        }
    });
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(stop.clone().cancelled_owned())
        .await;
    // Sessions are ended by `stop`; wait for their calls' cleanup and their environments.
    stop.cancel();
    calls.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, calls.wait())
        .await
        .is_err()
    {
        tracing::warn!("sessions still ending {SHUTDOWN_GRACE:?} after the server stopped");
    }
    served.map_err(McpError::Io)
}

fn session_manager(options: &HttpOptions) -> LocalSessionManager {
    let mut manager = LocalSessionManager::default();
    if let Some(idle) = options.session_idle {
        manager.session_config.keep_alive = Some(idle);
    }
    manager
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
    ];
    origins.extend(options.allowed_origins.iter().cloned());
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_legacy_session_mode(!options.stateless)
        .with_cancellation_token(cancel)
}

/// Refuses a request without the right bearer token (compared in constant time).
async fn require_token(
    State(token): State<Arc<Option<String>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = token.as_deref() else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(given) if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) => {
            next.run(request).await
        }
        _ => {
            let mut response = (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send the server's token as `Authorization: Bearer <token>`.\n",
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}
