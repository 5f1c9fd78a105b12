//! Tools calling tools: [`ToolContext::call_tool`] runs a call through the same pipeline as
//! the model's (lookup, argument preparation, validation and coercion, the before-hook with
//! the policy and its approver, execution with the per-file mutation queue of the shared
//! environment, the after-hook), as a batch of one under the calling call. Its cancellation
//! is the caller's, its events reach the caller's sink as [`ToolEvent::ToolExecutionNested`],
//! and how deep and how many such calls go is bounded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::{ProgressUpdater, ToolContext};
use super::error::ToolError;
use super::event::{EventSink, ToolEvent};
use super::message::ToolCall;
use super::result::ToolResult;
use super::runner::{RunnerConfig, run_batch};
use super::toolset::ToolSet;

/// How many levels of tools calling tools there may be below a model's call: a call of the
/// model's may call tools, theirs may too, and so on this many levels down.
pub const MAX_NESTING_DEPTH: usize = 4;

/// How many nested calls one call may make.
pub const MAX_NESTED_CALLS: usize = 64;

/// What the calls of one batch make nested calls through: the batch's tools and
/// configuration, how deep the batch is, and how many nested calls each call has made.
pub(crate) struct Nested {
    tools: ToolSet,
    config: RunnerConfig,
    depth: usize,
    made: Mutex<HashMap<Arc<str>, usize>>,
}

impl Nested {
    pub(crate) fn new(tools: ToolSet, config: RunnerConfig, depth: usize) -> Arc<Self> {
        Arc::new(Nested {
            tools,
            config,
            depth,
            made: Mutex::new(HashMap::new()),
        })
    }

    /// Counts one more nested call of `caller`, or says why there may be none.
    fn admit(&self, caller: &str, name: &str) -> Result<usize, ToolError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(ToolError::new(format!(
                "Tool {name} was not called: tools may call tools only {MAX_NESTING_DEPTH} levels below the model's call, and this call is that deep. Do this part of the work in the calling tool, or call {name} from a tool nearer the model."
            )));
        }
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        let count = made.entry(Arc::from(caller)).or_insert(0);
        if *count >= MAX_NESTED_CALLS {
            return Err(ToolError::new(format!(
                "Tool {name} was not called: one call may make at most {MAX_NESTED_CALLS} nested calls, and this one has made them all. Split the work over several calls."
            )));
        }
        *count += 1;
        Ok(*count)
    }
}

/// Hands a nested call's events to the calling call's updater, for the runner of the
/// caller's batch to send on; its result messages are the caller's to use, not the
/// transcript's.
struct ToCaller<'a>(&'a ProgressUpdater);

impl EventSink for ToCaller<'_> {
    async fn emit(&self, event: ToolEvent) {
        if !matches!(
            event,
            ToolEvent::MessageStart { .. } | ToolEvent::MessageEnd { .. }
        ) {
            self.0.nested(event);
        }
    }
}

impl ToolContext {
    /// Calls another tool of the batch's tool set from inside this one, through the whole
    /// pipeline a model's call goes through: argument preparation, validation and
    /// coercion, the before-hook (the policy, whose `ask` goes to the same approver), the
    /// per-file mutation queue of the shared environment, the after-hook. Cancelling this
    /// call cancels the nested one; its events go out as
    /// [`ToolEvent::ToolExecutionNested`] under this call's id, which is also the start of
    /// its own id (`<this id>.<n>`).
    ///
    /// A failed nested call (refused by the policy, invalid arguments, an error of the
    /// tool) is an `Err` whose text names the tool and says why; this call goes on and
    /// decides what to make of it. Refused outright: a call outside a runner's batch, one
    /// more than [`MAX_NESTED_CALLS`] per call, or one more than [`MAX_NESTING_DEPTH`]
    /// levels below the model's call.
    ///
    /// Do not call a tool while holding a file's mutation slot: a nested edit of the same
    /// file waits for the slot, which is held until it finishes.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ToolError> {
        let Some(nested) = self.nested_runner() else {
            return Err(ToolError::new(format!(
                "Tool {name} was not called: this tool runs outside a batch, so it has no tools to call. Run it through the runner (execute_tool_calls)."
            )));
        };
        let n = nested.admit(self.call_id(), name)?;
        let call = ToolCall::new(format!("{}.{n}", self.call_id()), name, arguments);
        let outcome = Box::pin(run_batch(
            &nested.tools,
            std::slice::from_ref(&call),
            &nested.config,
            self.cancellation(),
            &ToCaller(self.updater()),
            nested.depth + 1,
        ))
        .await;
        let Some(message) = outcome.messages.into_iter().next() else {
            return Err(ToolError::new(format!(
                "Tool {name} gave no result; this is a bug in pi-tools."
            )));
        };
        if message.is_error {
            let text = message.result.text_content();
            return Err(ToolError::new(format!("The call of {name} failed: {text}"))
                .with_details(message.result.details));
        }
        Ok(message.result)
    }

    /// [`call_tool`](Self::call_tool), with the tool's structured result read as `T` (the
    /// tool's typed result: its output schema describes it).
    ///
    /// An error when the call fails, or when the tool gives no structured result or one that
    /// is not a `T`.
    pub async fn call_tool_as<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<T, ToolError> {
        let result = self.call_tool(name, arguments).await?;
        let Some(value) = result.structured_content else {
            return Err(ToolError::new(format!(
                "Tool {name} gave no structured result to read: it returns content only. Use call_tool and read its text."
            )));
        };
        serde_json::from_value(value).map_err(|e| {
            ToolError::new(format!(
                "The structured result of {name} could not be read as {}: {e}. Read it with the type of the tool's output schema.",
                std::any::type_name::<T>()
            ))
        })
    }
}
