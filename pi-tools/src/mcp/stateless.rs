//! A `tools/call` of the stateless era (MCP 2026-07-28): no session to ask the client
//! through, so the client's roots and the person's answer to a policy question arrive as
//! `inputResponses` of a retried request (see `mrtr`), and log lines go to the request
//! only at the level its `_meta` asks for.
//!
//! With the tasks extension declared, a call of a tool that supports tasks may become one
//! (see `task_call`). Over HTTP such a call runs in the server's stateless house (see
//! `house`), whose jobs outlive the request: a job bash hands back to a request that
//! declares the tasks extension is also a task, named in the result's `_meta` (see `tasks`).

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, CreateTaskResult, Task,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::asker::McpAsker;
use super::elicit::with_round;
use super::era;
use super::logging::forwarding_logs;
use super::mrtr::{Offers, Round, Subject};
use super::progress::ProgressSink;
use super::result::call_tool_result;
use super::roots::FollowedRoots;
use super::server::ToolServer;
use super::task_call::{Settled, settle};
use super::task_support::{TaskSupport, task_required};
use crate::core::{RunnerConfig, ToolCall, ToolResultMessage};
use crate::env::EnvOf;

impl ToolServer {
    /// Runs a stateless-era call: asks for the client's roots first (when the server
    /// follows roots and the request declares them), runs the call within them (the
    /// working directory's configuration until they are known), and turns a policy
    /// question into an input-required result whose retry runs the call once.
    pub(crate) async fn call_stateless(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let capabilities = context.client_capabilities().unwrap_or_default();
        let mode = self.task_mode(&request.name);
        if mode.support == TaskSupport::Required && !capabilities.supports_tasks() {
            return Err(task_required(&request.name));
        }
        let as_task = capabilities.supports_tasks() && mode.support != TaskSupport::Forbidden;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let round = Round::open(
            Subject::Tool,
            &request.name,
            &arguments,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
            offers(&capabilities),
        )
        .map_err(|message| ErrorData::invalid_params(message, None))?;
        let followed = match (&round.roots, FollowedRoots::followed(self.config())) {
            (None, true) if capabilities.roots.is_some() => {
                return round
                    .ask_roots()
                    .map(Into::into)
                    .map_err(|message| ErrorData::internal_error(message, None));
            }
            (Some(uris), true) => self
                .followed_roots()
                .config_for(self.config(), uris)
                .map_err(|message| ErrorData::invalid_request(message, None))?,
            _ => None,
        };
        let call = ToolCall::new(context.id.to_string(), request.name, arguments);
        tracing::debug!(id = %call.id, tool = %call.name, "tools/call (2026-07-28)");
        let sink = ProgressSink::new(context.peer.clone(), context.meta.get_progress_token());
        let level = era::request_level(&context);
        let peer = context.peer.clone();
        // The configuration the call runs with, to find a job it hands back.
        let confined = followed.clone();
        // The call as a future of its own (it may outlive the request, as a task).
        let server = self.clone();
        let asking = round.clone();
        let execute = move |cancel: CancellationToken| {
            let tracker = server.clone();
            let work = async move {
                let config = followed.as_deref().unwrap_or(server.config());
                let asker = McpAsker::Round(asking.clone());
                let running = async {
                    let call = async {
                        let message = server.run(config, call, &cancel, &sink, asker).await;
                        sink.end();
                        message
                    };
                    tokio::join!(call, sink.pump()).0
                };
                forwarding_logs(level, peer, with_round(asking, running)).await
            };
            tracker.track(work)
        };
        let message = match as_task {
            true => {
                let running = self.call_or_task(execute, &context.ct, Some(&round), mode);
                match Box::pin(running).await? {
                    Ok(message) => message,
                    Err(task) => return Ok(task.into()),
                }
            }
            // Boxed, as a session's call is (see `call_tool`).
            false => Box::pin(execute(context.ct.clone())).await,
        };
        // A tool that runs only as a task gives its end as one all the same: completed, or
        // failed with the protocol error.
        let as_one = as_task && mode.support == TaskSupport::Required;
        let message = match settle(&round, message) {
            Ok(Settled::Question(question)) => return Ok(question.into()),
            Ok(Settled::Done(message)) if as_one => {
                let task = self.tasks().done(Ok(call_tool_result(message)))?;
                return Ok(CreateTaskResult::new(task).into());
            }
            Err(error) if as_one => {
                let task = self.tasks().done(Err(error))?;
                return Ok(CreateTaskResult::new(task).into());
            }
            Ok(Settled::Done(message)) => message,
            Err(error) => return Err(error),
        };
        let config = confined.as_deref().unwrap_or(self.config());
        let task = match capabilities.supports_tasks() {
            true => self.job_task(config, &message),
            false => None,
        };
        let mut result = call_tool_result(message);
        if let Some(task) = task {
            let related = serde_json::json!({ "taskId": task.task_id });
            result
                .meta
                .get_or_insert_with(Default::default)
                .0
                .insert(RELATED_TASK.to_owned(), related);
        }
        Ok(result.into())
    }

    /// The task made for the job a call handed back (bash names it in its result's details
    /// as `job`), when the call did and the job still runs; `None` otherwise, or when the
    /// server holds too many tasks (the job then goes on without one).
    fn job_task(&self, config: &RunnerConfig, message: &ToolResultMessage) -> Option<Task> {
        let id = message.result.details.get("job")?.as_u64()?;
        let job = config.env()?.jobs()?.get(id)?;
        match self.tasks().start_job(job) {
            Ok(task) => Some(task),
            Err(error) => {
                tracing::info!(job = id, %error.message, "a job goes on without a task");
                None
            }
        }
    }
}

/// The `_meta` key of a result that names the task following what it started (the key the
/// tasks of MCP 2025-11-25 named a message's task with).
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// What a request's capabilities declare of what a call may ask: form elicitation (an
/// elicitation capability that names no mode means form, as in 2025-11-25), sampling, roots.
pub(super) fn offers(capabilities: &ClientCapabilities) -> Offers {
    Offers {
        elicit: capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        sample: capabilities.sampling.is_some(),
        roots: capabilities.roots.is_some(),
    }
}
