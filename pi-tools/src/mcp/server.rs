//! The MCP request handler: initialize, ping, tools/list and tools/call over the runner.

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::{RwLock, Semaphore};
use tokio_util::sync::CancellationToken;

use super::error::McpError;
use super::progress::ProgressSink;
use super::result::call_tool_result;
use super::tools::McpTools;
use crate::core::{ExecutionMode, RunnerConfig, ToolCall, ToolSet, execute_tool_calls};

/// The server's name in the `initialize` answer.
pub(crate) const SERVER_NAME: &str = "pi-tools";

/// Serves a fixed set of tools. Every `tools/call` is a one-call batch of the runner, so
/// lookup, argument preparation, validation, hooks, timeout and cancellation behave exactly
/// as they do for a model's batch.
pub(crate) struct ToolServer {
    /// Built once, so each tool's validator is compiled once for the whole session.
    tools: ToolSet,
    listing: Vec<Tool>,
    config: RunnerConfig,
    /// Parallel-mode calls share it; a sequential-mode call holds it alone, so it never
    /// overlaps another call of the session.
    exclusive: RwLock<()>,
    /// At most `max_concurrency` calls execute at once across the session (the runner's
    /// bound is per batch, and every call here is a batch of its own); more wait their turn.
    in_flight: Option<Semaphore>,
    /// Cancelled when the session's input ends: every call in flight is then cancelled.
    shutdown: CancellationToken,
}

impl ToolServer {
    pub(crate) fn new(
        tools: McpTools,
        config: RunnerConfig,
        shutdown: CancellationToken,
    ) -> Result<Self, McpError> {
        let listing = tools.listing()?;
        let in_flight = config.max_concurrency.map(|n| Semaphore::new(n.max(1)));
        Ok(ToolServer {
            tools: ToolSet::new(tools.agent_tools()),
            listing,
            config,
            exclusive: RwLock::new(()),
            in_flight,
            shutdown,
        })
    }

    /// Whether a call of `name` must run alone (unknown tools share: they never execute).
    fn runs_alone(&self, name: &str) -> bool {
        self.config.execution == ExecutionMode::Sequential
            || self
                .tools
                .get(name)
                .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
    }

    /// Runs one call under the session's shared/exclusive lock. `request_cancel` is the
    /// request's own token (cancelled by `notifications/cancelled`); the end of the session
    /// cancels the call too.
    async fn run(
        &self,
        call: ToolCall,
        request_cancel: &CancellationToken,
        sink: &ProgressSink,
    ) -> Option<crate::core::ToolResultMessage> {
        let cancel = self.shutdown.child_token();
        let work = async {
            // A call cancelled while it waits for its turn stops waiting and still goes
            // through the runner, which answers it "Operation aborted" without executing it.
            let turn = async {
                let permit = match &self.in_flight {
                    Some(slots) => Some(slots.acquire().await),
                    None => None,
                };
                let guard = if self.runs_alone(&call.name) {
                    Guard::Exclusive(self.exclusive.write().await)
                } else {
                    Guard::Shared(self.exclusive.read().await)
                };
                (permit, guard)
            };
            let _turn = tokio::select! {
                turn = turn => Some(turn),
                _ = cancel.cancelled() => None,
            };
            execute_tool_calls(
                &self.tools,
                std::slice::from_ref(&call),
                &self.config,
                &cancel,
                sink,
            )
            .await
        };
        tokio::pin!(work);
        let outcome = tokio::select! {
            biased;
            outcome = &mut work => outcome,
            _ = request_cancel.cancelled() => {
                cancel.cancel();
                work.await
            }
        };
        outcome.messages.into_iter().next()
    }
}

/// Either side of the session lock, held (never read) until the call ends.
#[allow(dead_code)]
enum Guard<'a> {
    Shared(tokio::sync::RwLockReadGuard<'a, ()>),
    Exclusive(tokio::sync::RwLockWriteGuard<'a, ()>),
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!(
                    "tools/list has a single page and gives no cursor; `{cursor}` is not one. Ask again without a cursor."
                ),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(self.listing.clone()))
    }

    /// Requests the protocol layer could not read as one of the methods it knows: a known
    /// method with unusable parameters, or an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        let error = match method {
            "tools/call" => {
                let problem = match request.params_as::<CallToolRequestParams>() {
                    Err(err) => err.to_string(),
                    Ok(None) => "there are none".to_owned(),
                    Ok(Some(_)) => "they do not fit this method".to_owned(),
                };
                ErrorData::invalid_params(
                    format!(
                        "Invalid params for tools/call: {problem}. Send {{\"name\": \"<tool>\", \"arguments\": {{...}}}}, with the arguments as an object."
                    ),
                    None,
                )
            }
            "initialize" | "ping" | "tools/list" => ErrorData::invalid_params(
                format!(
                    "Invalid params for {method}; see the MCP specification for its parameters."
                ),
                None,
            ),
            _ => ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {method}. This server offers initialize, ping, tools/list and tools/call."
                ),
                None,
            ),
        };
        Err(error)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(context.id.to_string(), request.name, arguments);
        tracing::debug!(id = %call.id, tool = %call.name, "tools/call");
        let sink = ProgressSink::new(context.peer.clone(), context.meta.get_progress_token());
        match self.run(call, &context.ct, &sink).await {
            Some(message) => Ok(call_tool_result(message).into()),
            None => Err(ErrorData::internal_error(
                "The runner returned no result for the call; this is a bug in pi-tools.",
                None,
            )),
        }
    }
}
