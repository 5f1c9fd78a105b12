//! Tools calling tools: [`ToolContext::call_tool`] runs a call through the same pipeline as
//! the model's (lookup, argument preparation, validation and coercion, the before-hook with
//! the policy and its approver, execution with the per-file mutation queue of the shared
//! environment, the after-hook), under the calling call (see `runner::one`). Its
//! cancellation is the caller's, its events reach the caller's sink as
//! [`ToolEvent::ToolExecutionNested`], and how deep and how many such calls go is bounded.
//!
//! [`ToolEvent::ToolExecutionNested`]: super::event::ToolEvent::ToolExecutionNested

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::context::ToolContext;
use super::error::ToolError;
use super::message::ToolCall;
use super::result::ToolResult;
use super::runner::{RunnerConfig, run_one};
use super::toolset::ToolSet;

/// How many levels of tools calling tools there may be below a model's call: a call of the
/// model's may call tools, theirs may too, and so on this many levels down.
pub const MAX_NESTING_DEPTH: usize = 4;

/// How many nested calls one call may make.
pub const MAX_NESTED_CALLS: usize = 64;

/// What the calls of a model's batch, and the calls they make in turn, make nested calls
/// through: the batch's tools and configuration. Made once per batch, when its first call
/// runs, and shared by every level below it.
pub(crate) struct Nested {
    tools: ToolSet,
    config: RunnerConfig,
}

impl Nested {
    pub(crate) fn new(tools: ToolSet, config: RunnerConfig) -> Arc<Self> {
        Arc::new(Nested { tools, config })
    }

    /// The tools nested calls may call.
    pub(crate) fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// How nested calls run.
    pub(crate) fn config(&self) -> &RunnerConfig {
        &self.config
    }
}

/// One call's way to make nested calls: the runner, how many levels below the model's call
/// the call is, and its count of the nested calls it made (a slot of its batch's counts, one
/// allocation per batch).
#[derive(Clone)]
pub(crate) struct NestedSlot {
    runner: Arc<Nested>,
    counts: Arc<[AtomicUsize]>,
    index: usize,
    depth: usize,
}

impl NestedSlot {
    /// The slot of the call at `index` of a batch `depth` levels below the model's, whose
    /// calls count their nested calls in `counts`.
    pub(crate) fn new(
        runner: Arc<Nested>,
        counts: Arc<[AtomicUsize]>,
        index: usize,
        depth: usize,
    ) -> Self {
        NestedSlot {
            runner,
            counts,
            index,
            depth,
        }
    }

    /// Counts one more nested call of the call, or says why there may be none.
    fn admit(&self, name: &str) -> Result<usize, ToolError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(ToolError::new(format!(
                "Tool {name} was not called: tools may call tools only {MAX_NESTING_DEPTH} levels below the model's call, and this call is that deep. Do this part of the work in the calling tool, or call {name} from a tool nearer the model."
            )));
        }
        let made = self.counts[self.index]
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |made| {
                (made < MAX_NESTED_CALLS).then_some(made + 1)
            })
            .map_err(|_| {
                ToolError::new(format!(
                    "Tool {name} was not called: one call may make at most {MAX_NESTED_CALLS} nested calls, and this one has made them all. Split the work over several calls."
                ))
            })?;
        Ok(made + 1)
    }
}

// A nested call's number has at most two digits (`push_count`).
const _: () = assert!(MAX_NESTED_CALLS < 100);

/// Appends `.n` for the `n`th nested call (at most [`MAX_NESTED_CALLS`]) to a call id,
/// without the formatting machinery (about 250 instructions of each nested call).
fn push_count(id: &mut String, n: usize) {
    id.push('.');
    if n >= 10 {
        id.push(char::from(b'0' + (n / 10 % 10) as u8));
    }
    id.push(char::from(b'0' + (n % 10) as u8));
}

/// One count of nested calls for each of `calls` calls.
pub(crate) fn counts(calls: usize) -> Arc<[AtomicUsize]> {
    (0..calls).map(|_| AtomicUsize::new(0)).collect()
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
    /// The result is shared with the nested call's end event (which the runner sends on
    /// after this call's next turn), so reading it takes no copy;
    /// `Arc::unwrap_or_clone(result)` gives one to own.
    ///
    /// Do not call a tool while holding a file's mutation slot: a nested edit of the same
    /// file waits for the slot, which is held until it finishes.
    ///
    /// [`ToolEvent::ToolExecutionNested`]: super::event::ToolEvent::ToolExecutionNested
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Arc<ToolResult>, ToolError> {
        let Some(slot) = self.nested_slot() else {
            return Err(ToolError::new(format!(
                "Tool {name} was not called: this tool runs outside a batch, so it has no tools to call. Run it through the runner (execute_tool_calls)."
            )));
        };
        let n = slot.admit(name)?;
        let mut id = String::with_capacity(self.call_id().len() + 3);
        id.push_str(self.call_id());
        push_count(&mut id, n);
        let call = ToolCall::new(id, name, arguments);
        // Not boxed: the calling tool's future is boxed already, and holds this one.
        let (result, is_error) = run_one(
            &slot.runner,
            call,
            self.current_cancellation(),
            self.updater(),
            slot.depth + 1,
        )
        .await;
        if is_error {
            let text = result.text_content();
            return Err(ToolError::new(format!("The call of {name} failed: {text}"))
                .with_details(result.details.clone()));
        }
        Ok(result)
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
        let Some(value) = &result.structured_content else {
            return Err(ToolError::new(format!(
                "Tool {name} gave no structured result to read: it returns content only. Use call_tool and read its text."
            )));
        };
        T::deserialize(value).map_err(|e| {
            ToolError::new(format!(
                "The structured result of {name} could not be read as {}: {e}. Read it with the type of the tool's output schema.",
                std::any::type_name::<T>()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_call_numbers_are_written_in_decimal() {
        for (n, expected) in [
            (1, "c.1"),
            (9, "c.9"),
            (10, "c.10"),
            (42, "c.42"),
            (64, "c.64"),
        ] {
            let mut id = "c".to_owned();
            push_count(&mut id, n);
            assert_eq!(id, expected);
        }
    }
}
