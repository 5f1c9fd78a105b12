//! The MCP client side of one connection: rmcp's client with a handler that routes the
//! server's progress notifications to the running call they belong to, passes on its
//! `notifications/tools/list_changed`, and a call that forwards our cancellation as
//! `notifications/cancelled`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest, Implementation,
    JsonObject, ProgressNotificationParam, ProgressToken, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError,
};
use rmcp::{ClientHandler, ServiceExt};
use tokio_util::sync::CancellationToken;

use crate::core::{ProgressUpdater, ToolResult};

/// Where each running call's progress goes, by the progress token of its request.
type ProgressRoutes = Arc<Mutex<Routes>>;

/// The running calls' routes, and progress that came before its call's route was made.
#[derive(Default)]
pub(crate) struct Routes {
    by_token: HashMap<ProgressToken, ProgressUpdater>,
    /// Progress a server sent as soon as it read a request, before the request was
    /// registered here (the library gives the token once the request is on its way): kept
    /// for a token above every one registered so far (tokens count up), a few of each.
    early: HashMap<ProgressToken, Vec<ProgressNotificationParam>>,
    /// The highest token registered.
    last: Option<i64>,
}

/// How many tokens, and notifications of each, are kept while their call is registered.
const EARLY_TOKENS: usize = 8;
const EARLY_EACH: usize = 16;

/// Whether `token` is above every token registered so far (`last`): a call still to come.
fn is_future(token: &ProgressToken, last: Option<i64>) -> bool {
    match (&token.0, last) {
        (rmcp::model::NumberOrString::Number(n), Some(last)) => *n > last,
        (rmcp::model::NumberOrString::Number(_), None) => true,
        _ => false,
    }
}

/// What to do when the server says its tool list changed (list it again, see `server.rs`).
pub(crate) type ToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// Our side of a connection: answers the server's requests with rmcp's defaults, forwards
/// its progress notifications and tells of its tool list changing.
#[derive(Clone, Default)]
pub(crate) struct Handler {
    routes: ProgressRoutes,
    tools_changed: Option<ToolsChanged>,
}

impl ClientHandler for Handler {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        // rmcp has dropped its cached listing already; the listing is taken again apart
        // from this handler, which must not wait on a request of its own connection.
        if let Some(changed) = &self.tools_changed {
            changed();
        }
        std::future::ready(())
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let updater = {
            let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
            let found = routes.by_token.get(&params.progress_token).cloned();
            if found.is_none() && is_future(&params.progress_token, routes.last) {
                let room = routes.early.len() < EARLY_TOKENS
                    || routes.early.contains_key(&params.progress_token);
                if room {
                    let kept = routes
                        .early
                        .entry(params.progress_token.clone())
                        .or_default();
                    if kept.len() < EARLY_EACH {
                        kept.push(params.clone());
                    }
                }
            }
            found
        };
        if let Some(updater) = updater {
            updater.update(progress_update(&params));
        }
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("pi-tools", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A progress notification as a partial result: its message, or `progress n/total`.
fn progress_update(params: &ProgressNotificationParam) -> ToolResult {
    let text = match (&params.message, params.total) {
        (Some(message), _) => message.clone(),
        (None, Some(total)) => format!("progress {}/{}", params.progress, total),
        (None, None) => format!("progress {}", params.progress),
    };
    ToolResult::text(text).with_details(serde_json::json!({
        "progress": params.progress,
        "total": params.total,
    }))
}

/// A live connection to a server.
pub(crate) struct Connection {
    service: RunningService<RoleClient, Handler>,
    routes: ProgressRoutes,
}

/// How a call over a connection ended, when it did not return a result.
pub(crate) enum CallFailure {
    /// The connection closed (the server exited or the stream broke).
    Closed,
    /// The call was cancelled; `notifications/cancelled` was sent.
    Cancelled,
    /// The server answered with a JSON-RPC error, or something else went wrong.
    Other(String),
}

impl Connection {
    /// Runs the MCP handshake over `transport`; `tools_changed` runs each time the server
    /// says its tool list changed.
    pub(crate) async fn open<T, E, A>(
        transport: T,
        tools_changed: ToolsChanged,
    ) -> Result<Connection, String>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let handler = Handler {
            tools_changed: Some(tools_changed),
            ..Handler::default()
        };
        let routes = handler.routes.clone();
        let service = handler.serve(transport).await.map_err(|e| match e {
            // rmcp's text names its transport's type; what failed is the error inside.
            rmcp::service::ClientInitializeError::TransportError { error, context } => {
                format!(
                    "the MCP handshake failed ({}, when it was to {context})",
                    error.error
                )
            }
            e => format!("the MCP handshake failed ({e})"),
        })?;
        Ok(Connection { service, routes })
    }

    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    /// The server's `instructions`, if it gave any.
    pub(crate) fn instructions(&self) -> Option<String> {
        self.peer()
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .filter(|i| !i.trim().is_empty())
    }

    /// Whether the connection has closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed() || self.peer().is_transport_closed()
    }

    /// Every tool the server lists.
    pub(crate) async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, String> {
        self.peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed ({e})"))
    }

    /// Calls `tool`; its progress goes to `updater`; cancelling `cancel` sends
    /// `notifications/cancelled` and returns at once.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        updater: &ProgressUpdater,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallFailure> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer()
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(failure)?;
        let id = handle.id.clone();
        let token = handle.progress_token.clone();
        let early = {
            let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
            routes.by_token.insert(token.clone(), updater.clone());
            if let rmcp::model::NumberOrString::Number(n) = &token.0 {
                routes.last = Some(routes.last.map_or(*n, |last| last.max(*n)));
            }
            let early = routes.early.remove(&token).unwrap_or_default();
            // What was kept for tokens now behind the last registered never has a call.
            let last = routes.last;
            routes.early.retain(|t, _| is_future(t, last));
            early
        };
        for params in &early {
            updater.update(progress_update(params));
        }
        let _route = RouteGuard {
            routes: &self.routes,
            token,
        };
        let response = tokio::select! {
            response = handle.await_response() => response,
            _ = cancel.cancelled() => {
                let notification = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some("the call was cancelled".to_owned()),
                ));
                let _ = self.peer().send_notification(notification.into()).await;
                return Err(CallFailure::Cancelled);
            }
        };
        match response.map_err(failure)? {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(CallFailure::Other(format!(
                "the server answered with something other than a tool result ({})",
                serde_json::to_string(&other).unwrap_or_default()
            ))),
        }
    }

    /// Closes the connection.
    pub(crate) async fn close(mut self) {
        let _ = self
            .service
            .close_with_timeout(std::time::Duration::from_secs(1))
            .await;
    }
}

/// Removes a call's progress route when the call ends, however it ends.
struct RouteGuard<'a> {
    routes: &'a ProgressRoutes,
    token: ProgressToken,
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_token
            .remove(&self.token);
    }
}

fn failure(error: ServiceError) -> CallFailure {
    match error {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => CallFailure::Closed,
        ServiceError::McpError(e) if e.code.0 == super::bounded_http::REFUSED => {
            CallFailure::Other(e.message.into_owned())
        }
        ServiceError::McpError(e) => CallFailure::Other(format!(
            "the server refused the call: {} (JSON-RPC error {})",
            e.message, e.code.0
        )),
        other => CallFailure::Other(other.to_string()),
    }
}
