//! A `tools/call` of a 2025-11-25 session: the tool asks the client by request (see
//! `asker`), runs within the roots the client lists, and sends its progress and log lines on
//! the session. A client that declared the tasks extension at `initialize` (or in the
//! request's `_meta`) gets a task for a long call as a 2026-07-28 client does (see
//! `task_call`); the session stays busy while the task runs. A client of 2025-11-25 that
//! did not declare it asks for a task itself with `params.task` (see `tasks_2025`).

use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CreateTaskResult};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asker::McpAsker;
use super::logging::forwarding_logs;
use super::progress::ProgressSink;
use super::result::call_tool_result;
use super::server::ToolServer;
use super::task_support::{TaskSupport, task_required};
use crate::core::{ToolCall, ToolResultMessage};

impl ToolServer {
    /// Whether `context` is an HTTP request outside any session (the server is stateless),
    /// which cannot send its 2025-11-25 client a request.
    pub(crate) fn is_sessionless_http(&self, context: &RequestContext<RoleServer>) -> bool {
        self.sessions.is_none()
            && context
                .extensions
                .get::<axum::http::request::Parts>()
                .is_some()
    }

    /// Runs a session's call: as a task when the client declared the extension and the tool
    /// supports tasks and the call runs long (or the tool runs only as one).
    pub(crate) async fn call_in_session(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let mode = self.task_mode(&request.name);
        if mode.support == TaskSupport::Required && !declared {
            if self.serves_2025_tasks(&context) {
                return Err(super::tasks_2025::task_required_2025(&request.name));
            }
            return Err(task_required(&request.name));
        }
        let as_task = declared && mode.support != TaskSupport::Forbidden;
        let execute = self.session_execution(request, &context).await?;
        // Boxed: the protocol library moves each request's future into a task of its own,
        // and a call's future is several kilobytes, copied at every move.
        let message = match as_task {
            true => {
                let running = self.call_or_task(execute, &context.ct, None, mode);
                match Box::pin(running).await? {
                    Ok(message) => message,
                    Err(task) => return Ok(task.into()),
                }
            }
            false => execute(context.ct.clone()).await,
        };
        let Some(message) = message else {
            return Err(ErrorData::internal_error(
                "The runner returned no result for the call; this is a bug in pi-tools.",
                None,
            ));
        };
        let result = call_tool_result(message);
        if as_task && mode.support == TaskSupport::Required {
            // Its result is given as a task all the same, already completed.
            let task = self.tasks().done(Ok(result))?;
            return Ok(CreateTaskResult::new(task).into());
        }
        Ok(result.into())
    }

    /// A session's call of `request` as a future of its own, given its cancellation (it may
    /// outlive the request, as a task): its tool asks the client by request, runs within
    /// the roots the client lists now, and sends its progress and log lines on the session,
    /// which stays busy until it ends.
    pub(crate) async fn session_execution(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Execution, ErrorData> {
        let busy = self.keep_session_busy(context);
        self.announce_notices(&context.peer);
        let stateless = self.is_sessionless_http(context);
        if let Some(approver) = &self.approver {
            approver.bind(&context.peer, stateless);
        }
        let asker = McpAsker::of_session(&context.peer, stateless);
        // Every call runs within the roots its client lists now, when it offers them.
        let followed = self
            .roots
            .config(&self.config, &context.peer)
            .await
            .map_err(|message| ErrorData::invalid_request(message, None))?;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(context.id.to_string(), request.name, arguments);
        tracing::debug!(id = %call.id, tool = %call.name, "tools/call");
        let sink = ProgressSink::new(context.peer.clone(), context.meta.get_progress_token());
        let (peer, level, answering) = (
            context.peer.clone(),
            self.level.clone(),
            context.id.to_string(),
        );
        let server = self.clone();
        Ok(Box::new(move |cancel: CancellationToken| {
            let tracker = server.clone();
            let work = async move {
                let config = followed.as_deref().unwrap_or(server.config());
                // The progress pump runs beside the call and sends what is left before the
                // result.
                let running = async {
                    let call = async {
                        let message = server.run(config, call, &cancel, &sink, asker).await;
                        sink.end();
                        message
                    };
                    tokio::join!(call, sink.pump()).0
                };
                let call = forwarding_logs(level, peer, running);
                // The session is busy until the call ends, a task's too.
                match &busy {
                    Some(busy) => busy.answering(answering, call).await,
                    None => call.await,
                }
            };
            Box::pin(tracker.track(work))
        }))
    }
}

/// A session's call, ready to run given its cancellation (see
/// [`ToolServer::session_execution`]).
pub(crate) type Execution =
    Box<dyn FnOnce(CancellationToken) -> BoxFuture<'static, Option<ToolResultMessage>> + Send>;
