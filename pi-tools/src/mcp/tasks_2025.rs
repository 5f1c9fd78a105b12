//! MCP 2025-11-25's own (experimental) tasks, for a session of that version that did not
//! declare the 2026-07-28 tasks extension (a session that did is served the extension, and
//! is offered nothing of this, so a `params.task` it sends anyway is ignored, as the
//! specification asks of a server that did not offer it).
//!
//! Such a session is offered `capabilities.tasks` and each tool's `execution.taskSupport`
//! (see `tasks_2025_edge`); a `tools/call` with `params.task` is answered at once with
//! `{task}` and its call goes on as a task of the server's one store (see `tasks`): the
//! same call as without it, asking its client by request as any call of the session does.
//! `tasks/get` gives the task's fields at the top level (`input_required` while a request
//! the call sent the client waits for its answer), `tasks/result` waits for its end and
//! gives the call's result (or its error), `tasks/list` the session's tasks, and
//! `tasks/cancel` cancels it (its processes end) and gives it, cancelled.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    CustomRequest, CustomResult, ErrorCode, GetTaskParams, GetTaskResult, PaginatedRequestParams,
    ServerResult, Task, TaskPayload,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::result::call_tool_result;
use super::server::ToolServer;
use super::task_support::TaskSupport;
use super::tasks::TaskLink;
use super::tasks_2025_edge::{Diverted, serves_2025_tasks};

/// The `_meta` key naming the task a message belongs to.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

tokio::task_local! {
    /// The 2025-11-25 task whose call runs in this task of the runtime: its requests to the
    /// client make it `input_required` while they wait (see [`waiting_on_client`]).
    static IN_TASK: TaskLink;
}

/// Awaits `request`, a request the running call sent its session's client: when the call is
/// a 2025-11-25 task's, the task is `input_required` until it is answered (or dropped).
pub(crate) async fn waiting_on_client<F: std::future::Future>(request: F) -> F::Output {
    /// Counts the request out again, however the wait ends.
    struct Waiting(TaskLink);
    impl Drop for Waiting {
        fn drop(&mut self) {
            self.0.tasks.asking(&self.0.id, false);
        }
    }
    let Ok(link) = IN_TASK.try_with(TaskLink::clone) else {
        return request.await;
    };
    link.tasks.asking(&link.id, true);
    let _waiting = Waiting(link);
    request.await
}

/// The `_meta` of a request the running call sends its client: the 2025-11-25 task it
/// belongs to, as that specification asks; `None` outside such a task.
pub(crate) fn related_task_meta() -> Option<rmcp::model::RequestMetaObject> {
    let id = IN_TASK.try_with(|link| link.id.clone()).ok()?;
    let mut meta = rmcp::model::JsonObject::new();
    meta.insert(RELATED_TASK.to_owned(), json!({ "taskId": id }));
    Some(rmcp::model::RequestMetaObject(rmcp::model::MetaObject(
        meta,
    )))
}

impl ToolServer {
    /// Whether the request of `context` is served MCP 2025-11-25's own tasks: it is of a
    /// session of 2025-11-25 (or a sessionless HTTP request) that did not declare the tasks
    /// extension, at `initialize` or in the request's `_meta`.
    pub(crate) fn serves_2025_tasks(&self, context: &RequestContext<RoleServer>) -> bool {
        if super::era::is_stateless(context) {
            return false;
        }
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        let version = context
            .peer
            .peer_info()
            .map(|info| info.protocol_version.clone());
        serves_2025_tasks(version.as_ref().map(|v| v.as_str()), declared)
    }

    /// The answer to a request of a 2025-11-25 task method, `tasks/result` or `tasks/list`
    /// (which the protocol library does not know), or to one renamed by the transport (see
    /// `tasks_2025_edge`); `None` for any other request.
    pub(crate) async fn answer_2025(
        &self,
        request: &CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, ErrorData>> {
        let method = request.method.as_str();
        let diverted = Diverted::from_renamed(method);
        let own = matches!(method, "tasks/result" | "tasks/list");
        if super::era::is_stateless(&context) || (diverted.is_none() && !own) {
            return None;
        }
        let serves = self.serves_2025_tasks(&context);
        if own && !serves {
            return None;
        }
        let params = request.params.clone().unwrap_or_else(|| json!({}));
        let answer = match (diverted, method) {
            (Some(Diverted::ToolsList), _) => self.tools_list_2025(params, context, serves).await,
            (Some(Diverted::ToolsCall), _) => self.tools_call_2025(params, context, serves).await,
            (Some(Diverted::TasksGet), _) => self.tasks_get_2025(params, context, serves).await,
            (Some(Diverted::TasksCancel), _) => {
                self.tasks_cancel_2025(params, context, serves).await
            }
            (None, "tasks/result") => self.tasks_result_2025(params, &context).await,
            _ => self.tasks_list_2025(params),
        };
        Some(answer.map(CustomResult::new))
    }

    /// `tools/list`, each tool with its `execution.taskSupport` when `serves`.
    async fn tools_list_2025(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
        serves: bool,
    ) -> Result<Value, ErrorData> {
        use rmcp::handler::server::ServerHandler;
        let params: Option<PaginatedRequestParams> = parse(params, "tools/list")?;
        let listed = self.list_tools(params, context).await?;
        let mut answer = legacy(ServerResult::ListToolsResult(listed))?;
        if serves && let Some(tools) = answer.get_mut("tools").and_then(Value::as_array_mut) {
            for tool in tools {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let support = self.task_mode(name).support.as_str();
                tool["execution"] = json!({ "taskSupport": support });
            }
        }
        Ok(answer)
    }

    /// `tools/call` with `params.task`: a task at once when `serves`, else the call as
    /// without it (a server that offered no tasks ignores the field).
    async fn tools_call_2025(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
        serves: bool,
    ) -> Result<Value, ErrorData> {
        use rmcp::handler::server::ServerHandler;
        let task_is_object = params["task"].is_object();
        let request: CallToolRequestParams = parse(params, "tools/call")?;
        if !serves {
            let declared = context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks());
            let response = self.call_tool(request, context).await?;
            if matches!(response, CallToolResponse::Task(_)) && !declared {
                return Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
            return legacy(ServerResult::from(response));
        }
        if self.served().listed().tools.get(&request.name).is_none() {
            return Err(self.unknown_tool(&request.name));
        }
        if !task_is_object {
            return Err(ErrorData::invalid_params(
                "`params.task` of tools/call must be an object, such as {\"ttl\": 60000} or {}. Send it so, or leave it out for the result in the answer.",
                None,
            ));
        }
        let name = request.name.to_string();
        if self.task_mode(&name).support == TaskSupport::Forbidden {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "The tool `{name}` does not run as a task (its `execution.taskSupport` is `forbidden`), so it did not run. Call it without `params.task`; its result comes in the answer."
                ),
                None,
            ));
        }
        let execute = self.session_execution(request, &context).await?;
        let cancel = CancellationToken::new();
        let task = self.tasks().start_owned(cancel.clone(), self.key)?;
        let link = TaskLink {
            tasks: Arc::clone(self.tasks()),
            id: task.task_id.clone(),
        };
        let running = tokio::spawn(IN_TASK.scope(link, execute(cancel)));
        let (tasks, id) = (Arc::clone(self.tasks()), task.task_id.clone());
        tokio::spawn(async move {
            let outcome = match running.await {
                Ok(Some(message)) => Ok(call_tool_result(message)),
                Ok(None) => Err(ErrorData::internal_error(
                    "The runner returned no result for the call; this is a bug in pi-tools.",
                    None,
                )),
                Err(e) => Err(ErrorData::internal_error(
                    format!("The call's task ended abnormally ({e}); this is a bug in pi-tools."),
                    None,
                )),
            };
            tasks.finish(&id, outcome);
        });
        Ok(json!({ "task": wire(&task, "working", None) }))
    }

    /// `tasks/get`: the task's fields at the top level; when not `serves`, the extension's
    /// answer, as the protocol library gives it.
    async fn tasks_get_2025(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
        serves: bool,
    ) -> Result<Value, ErrorData> {
        use rmcp::handler::server::ServerHandler;
        let request: GetTaskParams = parse(params, "tasks/get")?;
        if !serves {
            extension_declared(&context)?;
            let got = self.get_task(request, context).await?;
            return legacy(ServerResult::GetTaskResult(got));
        }
        Ok(task_2025(&self.tasks().get(&request.task_id)?))
    }

    /// `tasks/cancel`: cancels a working task and gives it; a task that ended is refused
    /// with `-32602`. When not `serves`, the extension's answer, as the library gives it.
    async fn tasks_cancel_2025(
        &self,
        params: Value,
        context: RequestContext<RoleServer>,
        serves: bool,
    ) -> Result<Value, ErrorData> {
        use rmcp::handler::server::ServerHandler;
        let request: CancelTaskParams = parse(params, "tasks/cancel")?;
        if !serves {
            extension_declared(&context)?;
            self.cancel_task(request, context).await?;
            return legacy(ServerResult::task_ack(()));
        }
        let id = &request.task_id;
        if !self.tasks().cancel(id)? {
            let got = task_2025(&self.tasks().get(id)?);
            return Err(ErrorData::invalid_params(
                format!(
                    "The task `{id}` already ended ({}), so it cannot be cancelled. Get how it ended with tasks/result.",
                    got["status"].as_str().unwrap_or("ended")
                ),
                None,
            ));
        }
        Ok(task_2025(&self.tasks().get(id)?))
    }

    /// `tasks/result`: waits for the task's end, then gives the call's result (with the
    /// task named in its `_meta`) or the error it failed with.
    async fn tasks_result_2025(
        &self,
        params: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let request: GetTaskParams = parse(params, "tasks/result")?;
        let id = &request.task_id;
        let ended = tokio::select! {
            ended = self.tasks().wait_end(id) => ended?,
            () = context.ct.cancelled() => {
                return Err(ErrorData::invalid_request(
                    "The tasks/result request was cancelled before the task ended.",
                    None,
                ));
            }
        };
        match ended.task.payload {
            TaskPayload::Completed { result } => {
                let result: CallToolResult = serde_json::from_value(Value::Object(result))
                    .map_err(|e| {
                        ErrorData::internal_error(
                            format!("The task's result could not be read again ({e}); this is a bug in pi-tools."),
                            None,
                        )
                    })?;
                let mut answer = legacy(ServerResult::CallToolResult(result))?;
                answer["_meta"][RELATED_TASK] = json!({ "taskId": id });
                Ok(answer)
            }
            TaskPayload::Failed { error } => Err(serde_json::from_value(Value::Object(error))
                .unwrap_or_else(|_| ErrorData::internal_error("The task's call failed.", None))),
            _ => Err(ErrorData::invalid_params(
                format!(
                    "The task `{id}` was cancelled (tasks/cancel) before it ended, so it has no result. Call the tool again for one."
                ),
                None,
            )),
        }
    }

    /// `tasks/list`: the tasks this session made that are still kept, in one page.
    fn tasks_list_2025(&self, params: Value) -> Result<Value, ErrorData> {
        if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
            return Err(ErrorData::invalid_params(
                format!(
                    "tasks/list has a single page and gives no cursor; {cursor} is not one. Ask again without a cursor."
                ),
                None,
            ));
        }
        let tasks: Vec<Value> = self.tasks().list(self.key).iter().map(task_2025).collect();
        Ok(json!({ "tasks": tasks }))
    }
}

/// The `-32601` error of a call of `tool`, which runs only as a task, without `params.task`.
pub(crate) fn task_required_2025(tool: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "The tool `{tool}` runs only as a task (its `execution.taskSupport` is `required`), so it did not run. Call it with `params.task` (for example {{\"ttl\": 60000}}), poll it with tasks/get and get its result with tasks/result."
        ),
        None,
    )
}

/// The extension's refusal of a task method from a request that did not declare it, as
/// the protocol library gives it.
fn extension_declared(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    match context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
    {
        true => Ok(()),
        false => Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        )),
    }
}

/// `params` read as the parameters of `method`, or the error saying why not.
fn parse<T: serde::de::DeserializeOwned>(params: Value, method: &str) -> Result<T, ErrorData> {
    serde_json::from_value(params).map_err(|e| {
        ErrorData::invalid_params(
            format!(
                "Invalid params for {method}: {e}. See the MCP specification for its parameters."
            ),
            None,
        )
    })
}

/// `result` as the protocol library answers a session of 2025-11-25 with it: without the
/// 2026-07-28 `resultType` and non-object output.
fn legacy(mut result: ServerResult) -> Result<Value, ErrorData> {
    if matches!(result, ServerResult::InputRequiredResult(_)) {
        return Err(ErrorData::invalid_request(
            "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
            None,
        ));
    }
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    serde_json::to_value(result).map_err(|e| {
        ErrorData::internal_error(
            format!("The answer could not be serialized ({e}); this is a bug in pi-tools."),
            None,
        )
    })
}

/// A task of the store as MCP 2025-11-25 gives it: its status in that protocol's terms (a
/// call whose tool reported an error is `failed` there), with a sentence saying why when
/// it did not complete.
fn task_2025(got: &GetTaskResult) -> Value {
    let (status, message) = match &got.task.payload {
        TaskPayload::Working => ("working", None),
        TaskPayload::InputRequired { .. } => (
            "input_required",
            Some("The call waits for the client's answer to a request it sent.".to_owned()),
        ),
        TaskPayload::Completed { result } if result.get("isError") == Some(&Value::Bool(true)) => (
            "failed",
            Some("The tool reported an error; tasks/result gives it.".to_owned()),
        ),
        TaskPayload::Completed { .. } => ("completed", None),
        TaskPayload::Failed { error } => (
            "failed",
            Some(
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("The call failed; tasks/result gives its error.")
                    .to_owned(),
            ),
        ),
        _ => (
            "cancelled",
            Some("The task was cancelled (tasks/cancel); its processes were ended.".to_owned()),
        ),
    };
    wire(&got.task.task, status, message)
}

/// `task` in the wire shape of MCP 2025-11-25 (`ttl` and `pollInterval` in milliseconds).
fn wire(task: &Task, status: &str, message: Option<String>) -> Value {
    let mut wire = json!({
        "taskId": task.task_id,
        "status": status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(message) = message {
        wire["statusMessage"] = Value::from(message);
    }
    if let Some(interval) = task.poll_interval_ms {
        wire["pollInterval"] = Value::from(interval);
    }
    wire
}
