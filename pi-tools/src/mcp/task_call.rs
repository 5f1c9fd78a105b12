//! A call that may become a task (the `io.modelcontextprotocol/tasks` extension): it runs
//! until it ends or until it has run for its tool's time (see `task_support`), and then goes
//! on as a task that `tasks/get` follows. A call whose time is zero is a task from the start.
//!
//! A question its tool asks before it became a task is put as the call's input-required
//! result (the call ends there, and its retry runs the tool again with the answer); once it
//! is a task, its questions are the task's, answered with `tasks/update` while the tool waits.
//! How the call ended is settled alike either way: a tool's error is a completed result with
//! `isError`, and a protocol error (the tool needed a capability the client did not declare,
//! an answer given to another question) fails the task with that error.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, CreateTaskResult, InputRequiredResult};
use tokio_util::sync::CancellationToken;

use super::mrtr::Round;
use super::result::call_tool_result;
use super::server::ToolServer;
use super::task_support::TaskMode;
use super::tasks::TaskLink;
use crate::core::ToolResultMessage;

/// How a call that ran to its end is answered.
#[expect(
    clippy::large_enum_variant,
    reason = "one per call, moved once at its end; boxing would allocate for every result"
)]
pub(crate) enum Settled {
    /// With a question (the policy's, or the tool's own) as an input-required result.
    Question(InputRequiredResult),
    /// With its result.
    Done(ToolResultMessage),
}

/// How the call of `round` that gave `message` is answered, or the protocol error it ends
/// with.
pub(crate) fn settle(
    round: &Round,
    message: Option<ToolResultMessage>,
) -> Result<Settled, ErrorData> {
    if let Some(refusal) = round.refusal() {
        // An answer was given to another question than the tool asks.
        return Err(ErrorData::invalid_params(refusal, None));
    }
    if let Some(question) = round.question() {
        // The call was stopped before it started (a policy question), or the tool
        // stopped at its own question: the question is the call's result.
        return question
            .map(Settled::Question)
            .map_err(|message| ErrorData::internal_error(message, None));
    }
    let Some(message) = message else {
        return Err(no_result());
    };
    if message.is_error
        && let Some(capability) = round.missing_capability()
    {
        // The tool needed what the client did not declare, and failed without it.
        return Err(missing_capability(capability, &message.result));
    }
    Ok(Settled::Done(message))
}

/// How a task's call ended, for `tasks/get`: its result, or the protocol error that fails
/// the task.
fn task_outcome(
    round: Option<&Round>,
    message: Option<ToolResultMessage>,
) -> Result<CallToolResult, ErrorData> {
    let Some(round) = round else {
        return message.map(call_tool_result).ok_or_else(no_result);
    };
    match settle(round, message)? {
        Settled::Done(message) => Ok(call_tool_result(message)),
        // A task takes its questions itself; one put as a result is a bug.
        Settled::Question(_) => Err(ErrorData::internal_error(
            "The task's call ended with a question put as a result, which a task cannot give; this is a bug in pi-tools.",
            None,
        )),
    }
}

fn no_result() -> ErrorData {
    ErrorData::internal_error(
        "The runner returned no result for the call; this is a bug in pi-tools.",
        None,
    )
}

impl ToolServer {
    /// Runs the call made by `execute` (given its cancellation) until it ends, or until it
    /// has run for `mode.after`: then it goes on as a task, answered with `Err` (the task),
    /// and `tasks/get` gives its result. `request` is the request's own token, which
    /// cancels the call until it becomes a task. `round` is the call's round of a stateless
    /// request, whose questions become the task's; a session's call asks its client itself.
    pub(crate) async fn call_or_task<F>(
        &self,
        execute: impl FnOnce(CancellationToken) -> F,
        request: &CancellationToken,
        round: Option<&Arc<Round>>,
        mode: TaskMode,
    ) -> Result<Result<Option<ToolResultMessage>, CreateTaskResult>, ErrorData>
    where
        F: std::future::Future<Output = Option<ToolResultMessage>> + Send + 'static,
    {
        let cancel = CancellationToken::new();
        let tasks = Arc::clone(self.tasks());
        let joined = |done: Result<_, tokio::task::JoinError>| {
            done.map_err(|e| {
                ErrorData::internal_error(
                    format!("The call's task ended abnormally ({e}); this is a bug in pi-tools."),
                    None,
                )
            })
        };
        // A task from the start: made before the tool runs, so each of its questions is the
        // task's.
        let early = match mode.after.is_zero() {
            true => {
                let task = tasks.start(cancel.clone())?;
                if let Some(round) = round {
                    let link = TaskLink {
                        tasks: Arc::clone(&tasks),
                        id: task.task_id.clone(),
                    };
                    round.attach_task(link);
                }
                Some(task)
            }
            false => None,
        };
        let mut running = tokio::spawn(execute(cancel.clone()));
        let task = match early {
            Some(task) => task,
            None => {
                tokio::select! {
                    biased;
                    done = &mut running => return joined(done).map(Ok),
                    () = request.cancelled() => {
                        cancel.cancel();
                        return joined(running.await).map(Ok);
                    }
                    () = tokio::time::sleep(mode.after) => {}
                }
                let task = match tasks.start(cancel.clone()) {
                    Ok(task) => task,
                    Err(error) => {
                        cancel.cancel();
                        let _ = running.await;
                        return Err(error);
                    }
                };
                let link = TaskLink {
                    tasks: Arc::clone(&tasks),
                    id: task.task_id.clone(),
                };
                if let Some(round) = round
                    && !round.attach_task(link)
                {
                    // It already put a question as its result and is ending with it.
                    tasks.discard(&task.task_id);
                    return joined(running.await).map(Ok);
                }
                task
            }
        };
        let id = task.task_id.clone();
        let round = round.cloned();
        tokio::spawn(async move {
            let outcome = match running.await {
                Ok(message) => task_outcome(round.as_deref(), message),
                Err(e) => Err(ErrorData::internal_error(
                    format!("The call's task ended abnormally ({e}); this is a bug in pi-tools."),
                    None,
                )),
            };
            tasks.finish(&id, outcome);
        });
        Ok(Err(CreateTaskResult::new(task)))
    }
}

/// The `-32021` error of a call whose tool needed `capability` (`elicitation`, `sampling` or
/// `roots`), which the request did not declare, and failed without it; the tool's own error
/// text follows the reason.
fn missing_capability(capability: &str, result: &crate::core::ToolResult) -> ErrorData {
    let said = result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join(" ");
    ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "The tool needs the client's `{capability}` capability, which this request did not declare in `_meta` (`io.modelcontextprotocol/clientCapabilities`), so it could not finish. Declare it and call again. The tool said: {said}"
        ),
        Some(serde_json::json!({ "requiredCapabilities": { capability: {} } })),
    )
}
