//! Which calls of a tool may be answered with a task (the `io.modelcontextprotocol/tasks`
//! extension, and the tasks of MCP 2025-11-25, see `tasks_2025`): a tool declares it with
//! [`McpTool::task_support`](super::McpTool::task_support), `tools/list` names it, and the
//! server decides each call by it.

use std::time::Duration;

use serde_json::{Value, json};

/// Whether a tool's calls may become tasks, for a client that declared the tasks extension
/// (at `initialize`, or in the request's `_meta`), or that asks for a task with `params.task`
/// in a 2025-11-25 session (where `tools/list` names it as `execution.taskSupport`). Any
/// other client never gets a task.
///
/// ```
/// use std::time::Duration;
///
/// use pi_tools::mcp::{McpTool, TaskSupport};
/// # fn build(tool: std::sync::Arc<dyn pi_tools::AgentTool>) -> McpTool {
/// // A build that takes minutes: always a task, polled with `tasks/get`.
/// McpTool::new(tool).task_support(TaskSupport::Required)
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task: a call is answered with its result, however long it runs (a tool whose
    /// caller must have the result in the answer); a 2025-11-25 `params.task` is refused
    /// with `-32601`.
    Forbidden,
    /// The server decides: a call that runs past its time (see
    /// [`McpTool::task_after`](super::McpTool::task_after)) becomes a task; a quicker one is
    /// answered with its result. A tool that declares nothing is served so.
    #[default]
    Optional,
    /// Always a task: a call is answered with a task even when it ends at once (a question
    /// the tool asks before it becomes one is still put as an input-required result). A
    /// request without the extension is refused with `-32021` before the tool runs; in a
    /// 2025-11-25 session served that version's tasks, a call without `params.task` is
    /// refused with `-32601`, as that specification says.
    Required,
}

impl TaskSupport {
    /// Its name in `tools/list`: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// How the server treats the calls of one tool: its task support and how long a call runs
/// before it becomes a task.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskMode {
    pub(crate) support: TaskSupport,
    pub(crate) after: Duration,
}

/// The `_meta` of a `tools/list` entry that names the tool's task support, under the
/// extension's id (the extension is not part of the core `Tool`).
pub(crate) fn listing_meta(support: TaskSupport) -> Value {
    json!({ rmcp::model::TASKS_EXTENSION_ID: { "taskSupport": support.as_str() } })
}

/// The `-32021` error of a call of `tool`, which only runs as a task, from a request that did
/// not declare the tasks extension.
pub(crate) fn task_required(tool: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "The tool `{tool}` runs only as a task, and this request did not declare the tasks extension (`{}`), so it did not run. Declare the extension (at `initialize`, or in the request's `_meta` under `io.modelcontextprotocol/clientCapabilities`) and poll the task with `tasks/get`.",
            rmcp::model::TASKS_EXTENSION_ID
        ),
        Some(json!({
            "requiredCapabilities": { "extensions": { rmcp::model::TASKS_EXTENSION_ID: {} } }
        })),
    )
}
