//! The runner: executes one batch of a model's tool calls through prepare → execute →
//! finalize, sequentially or in parallel, emitting events as it goes. How one executing call
//! is watched for its timeout and cancellation is in `supervise.rs`, the events in
//! `emit.rs`.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use super::context::{Extensions, ProgressUpdater, ToolContext, UpdateChannel};
use super::error::ToolError;
use super::event::EventSink;
use super::hooks::{
    AfterToolCall, AfterToolCallContext, BeforeToolCall, BeforeToolCallContext,
    BeforeToolCallOutcome,
};
use super::message::{ToolCall, ToolResultMessage};
use super::nested::{Nested, NestedSlot, counts};
use super::result::ToolResult;
use super::text::seconds_text;
use super::tool::ExecutionMode;
use super::toolset::{Entry, ToolSet};

mod emit;
mod notify;
mod one;
mod supervise;
use emit::{emit_end, emit_message, emit_start, emit_update, forward_pending_updates};
pub(crate) use one::run_one;
use supervise::{Supervised, supervise};

const ABORTED: &str = "Operation aborted";

/// How a batch runs.
#[derive(Clone)]
pub struct RunnerConfig {
    /// `Sequential` forces every batch to run one call at a time.
    pub execution: ExecutionMode,
    /// At most this many calls execute at once in a parallel batch (`None`: no bound).
    pub max_concurrency: Option<usize>,
    /// Per-call timeout (`None`: none). On expiry the call's token is cancelled.
    pub timeout: Option<Duration>,
    /// How long a cancelled (or timed-out) tool may take to wind down before the runner stops
    /// waiting for it.
    pub cancel_grace: Duration,
    /// Runs before each validated call.
    pub before_tool_call: Option<Arc<dyn BeforeToolCall>>,
    /// Runs after each executed call.
    pub after_tool_call: Option<Arc<dyn AfterToolCall>>,
    /// Shared values every tool's context carries (the execution environment, for one).
    pub extensions: Extensions,
    /// The error text for a call to a name the tool set does not hold; `None` from it (or
    /// no function) gives `Tool <name> not found`. A product layer that knows more (a tool
    /// that exists but is switched off) says so here.
    pub unknown_tool: Option<UnknownToolMessage>,
}

/// Gives the error text for a call to a tool the set does not hold, or `None` for the
/// default text.
pub type UnknownToolMessage = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            execution: ExecutionMode::Parallel,
            max_concurrency: None,
            timeout: None,
            cancel_grace: Duration::from_secs(5),
            before_tool_call: None,
            after_tool_call: None,
            extensions: Extensions::default(),
            unknown_tool: None,
        }
    }
}

impl std::fmt::Debug for RunnerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerConfig")
            .field("execution", &self.execution)
            .field("max_concurrency", &self.max_concurrency)
            .field("timeout", &self.timeout)
            .field("cancel_grace", &self.cancel_grace)
            .field("before_tool_call", &self.before_tool_call.is_some())
            .field("after_tool_call", &self.after_tool_call.is_some())
            .field("unknown_tool", &self.unknown_tool.is_some())
            .finish()
    }
}

/// What a batch produced.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOutcome {
    /// One result message per call, in the calls' (source) order.
    pub messages: Vec<ToolResultMessage>,
    /// True when there was at least one call and every final result asked to terminate.
    pub terminate: bool,
}

/// The final state of one call.
struct Finalized {
    result: ToolResult,
    is_error: bool,
}

impl Finalized {
    fn error(message: impl Into<String>) -> Self {
        Finalized {
            result: ToolResult::text(message),
            is_error: true,
        }
    }
}

#[allow(
    clippy::large_enum_variant,
    reason = "one per call of a batch, briefly; boxing would allocate for every call refused before it runs"
)]
enum Prepared<'a> {
    Immediate(Finalized),
    Ready { entry: &'a Entry, args: Value },
}

/// Executes one batch of tool calls.
///
/// Sequential when `config.execution` is sequential or any call names a sequential tool;
/// otherwise calls are prepared one by one in source order and then executed concurrently.
/// Events go to `sink` (ends in completion order); the returned messages are in source
/// order. Every call gets exactly one result message, whatever happens: a missing tool,
/// invalid arguments, a block, an error, a panic, a timeout or cancellation all become error
/// results, and nothing stops the rest of the batch.
pub async fn execute_tool_calls<S: EventSink>(
    tools: &ToolSet,
    calls: &[ToolCall],
    config: &RunnerConfig,
    cancel: &CancellationToken,
    sink: &S,
) -> BatchOutcome {
    let sequential = calls
        .iter()
        .any(|c| tools.must_run_alone(&c.name, config.execution));
    let batch = Batch {
        tools,
        calls,
        config,
        cancel,
        all_calls: OnceLock::new(),
        depth: 0,
        nested: OnceLock::new(),
        counts: OnceLock::new(),
    };
    let finalized = if sequential {
        batch.run_sequential(sink).await
    } else {
        batch.run_parallel(sink).await
    };
    let terminate = !finalized.is_empty() && finalized.iter().all(|f| f.result.terminate);
    let mut messages = Vec::with_capacity(finalized.len());
    for (call, fin) in calls.iter().zip(finalized) {
        let mut message = result_message(call, fin);
        if !sequential {
            message = emit_message(sink, message).await;
        }
        messages.push(message);
    }
    BatchOutcome {
        messages,
        terminate,
    }
}

struct Batch<'a> {
    tools: &'a ToolSet,
    calls: &'a [ToolCall],
    config: &'a RunnerConfig,
    cancel: &'a CancellationToken,
    all_calls: OnceLock<Arc<[ToolCall]>>,
    /// How many levels below the model's calls these are (0 for a model's batch, more for
    /// a nested call, see `one`).
    depth: usize,
    /// What the batch's calls make nested calls through, made when the first call runs (a
    /// nested call's is its caller's).
    nested: OnceLock<Arc<Nested>>,
    /// How many nested calls each call made, made when the first call runs.
    counts: OnceLock<Arc<[AtomicUsize]>>,
}

impl<'a> Batch<'a> {
    async fn run_parallel<S: EventSink>(&self, sink: &S) -> Vec<Finalized> {
        let mut slots = empty_slots(self.calls.len());
        let mut ready = Vec::new();
        for index in 0..self.calls.len() {
            if let Some((entry, args)) = self.open(index, sink, &mut slots).await {
                ready.push((index, entry, args));
            }
        }
        let limit = self.config.max_concurrency.unwrap_or(usize::MAX).max(1);
        self.drive(ready, limit, sink, &mut slots).await;
        settle(slots)
    }

    async fn run_sequential<S: EventSink>(&self, sink: &S) -> Vec<Finalized> {
        let mut slots = empty_slots(self.calls.len());
        for (index, call) in self.calls.iter().enumerate() {
            if let Some((entry, args)) = self.open(index, sink, &mut slots).await {
                self.drive(vec![(index, entry, args)], 1, sink, &mut slots)
                    .await;
            }
            if let Some(fin) = slots[index].as_ref() {
                let message = result_message(call, clone_finalized(fin));
                emit_message(sink, message).await;
            }
        }
        settle(slots)
    }

    /// How every call opens, in either mode: its start event, then phase one unless the batch
    /// is already cancelled (cancellation stops preflight: the rest are not prepared). A call
    /// that ends here gets its end event and its slot at once; one ready to run is returned.
    async fn open<S: EventSink>(
        &self,
        index: usize,
        sink: &S,
        slots: &mut [Option<Finalized>],
    ) -> Option<(&'a Entry, Value)> {
        let call = &self.calls[index];
        emit_start(sink, call).await;
        let prepared = if self.cancel.is_cancelled() {
            Prepared::Immediate(Finalized::error(ABORTED))
        } else {
            self.prepare(call).await
        };
        match prepared {
            Prepared::Immediate(mut fin) => {
                emit_end(sink, call, &mut fin).await;
                slots[index] = Some(fin);
                None
            }
            Prepared::Ready { entry, args } => Some((entry, args)),
        }
    }

    /// Executes prepared calls with at most `limit` in flight, forwarding progress updates
    /// as they arrive and emitting each end event when its call finishes.
    async fn drive<S: EventSink>(
        &self,
        ready: Vec<(usize, &'a Entry, Value)>,
        limit: usize,
        sink: &S,
        slots: &mut [Option<Finalized>],
    ) {
        if ready.is_empty() {
            return;
        }
        let (tx, mut rx) = unbounded_channel();
        let channel = UpdateChannel::new(self.calls.len(), tx, sink.wants_logs());
        let mut pending = ready.into_iter();
        let mut running = FuturesUnordered::new();
        for (index, entry, args) in pending.by_ref().take(limit) {
            running.push(self.execute(index, entry, args, ProgressUpdater::new(&channel, index)));
        }
        loop {
            tokio::select! {
                biased;
                Some((index, partial)) = rx.recv() => {
                    emit_update(sink, &self.calls[index], partial).await;
                }
                done = running.next() => {
                    let Some((index, mut fin)) = done else { break };
                    // Updates the call sent before it returned go out before its end event.
                    forward_pending_updates(&mut rx, sink, self.calls).await;
                    let call = &self.calls[index];
                    notify::attach(&self.config.extensions, call, &mut fin.result, sink).await;
                    emit_end(sink, &self.calls[index], &mut fin).await;
                    slots[index] = Some(fin);
                    if let Some((index, entry, args)) = pending.next() {
                        running.push(self.execute(index, entry, args, ProgressUpdater::new(&channel, index)));
                    }
                }
            }
        }
    }

    /// Phase one: lookup, argument preparation, validation, before-hook.
    async fn prepare(&self, call: &ToolCall) -> Prepared<'a> {
        if let Some(result) = &call.refusal {
            return Prepared::Immediate(Finalized {
                result: result.clone(),
                is_error: true,
            });
        }
        let Some(entry) = self.tools.entry(&call.name) else {
            let text = self
                .config
                .unknown_tool
                .as_ref()
                .and_then(|message| message(&call.name))
                .unwrap_or_else(|| format!("Tool {} not found", call.name));
            return Prepared::Immediate(Finalized::error(text));
        };
        let tool = &entry.tool;
        let raw = call.arguments.clone();
        let prepared =
            match std::panic::catch_unwind(AssertUnwindSafe(|| tool.prepare_arguments(raw))) {
                Ok(Ok(args)) => args,
                Ok(Err(err)) => return Prepared::Immediate(Finalized::error(err.message())),
                Err(panic) => {
                    return Prepared::Immediate(Finalized::error(format!(
                        "Tool {} panicked while preparing its arguments: {}",
                        call.name,
                        panic_message(&*panic)
                    )));
                }
            };
        let validator = match entry.validator() {
            Ok(v) => v,
            Err(e) => {
                return Prepared::Immediate(Finalized::error(format!(
                    "Tool {} cannot be called: {e}. This is a bug in the tool, not in the call.",
                    call.name
                )));
            }
        };
        let mut args = match validator.validate(&call.name, prepared) {
            Ok(args) => args,
            Err(text) => return Prepared::Immediate(Finalized::error(text)),
        };
        if let Some(hook) = &self.config.before_tool_call {
            let ctx = BeforeToolCallContext {
                call: call.clone(),
                args: args.clone(),
                batch: self
                    .all_calls
                    .get_or_init(|| self.calls.iter().cloned().collect())
                    .clone(),
                cancel: self.cancel.clone(),
                extensions: self.config.extensions.clone(),
            };
            let outcome = AssertUnwindSafe(hook.before_tool_call(ctx))
                .catch_unwind()
                .await;
            if self.cancel.is_cancelled() {
                return Prepared::Immediate(Finalized::error(ABORTED));
            }
            match outcome {
                Ok(Ok(BeforeToolCallOutcome::Continue)) => {}
                Ok(Ok(BeforeToolCallOutcome::Rewrite(new_args))) => args = new_args,
                Ok(Ok(BeforeToolCallOutcome::Block { reason })) => {
                    let reason = reason
                        .filter(|r| !r.trim().is_empty())
                        .unwrap_or_else(|| "Tool execution was blocked".to_owned());
                    return Prepared::Immediate(Finalized::error(reason));
                }
                Ok(Err(err)) => return Prepared::Immediate(Finalized::error(err.message())),
                Err(panic) => {
                    return Prepared::Immediate(Finalized::error(format!(
                        "The before_tool_call hook panicked: {}",
                        panic_message(&*panic)
                    )));
                }
            }
        }
        // Without a hook nothing here awaited since the caller's cancellation check, so there
        // is no second check (each one takes the token's lock).
        Prepared::Ready { entry, args }
    }

    /// Phases two and three: execute (with timeout and cancellation), then the after-hook.
    /// The call's updates go to `updater`.
    async fn execute(
        &self,
        index: usize,
        entry: &'a Entry,
        args: Value,
        updater: ProgressUpdater,
    ) -> (usize, Finalized) {
        let call = &self.calls[index];
        if self.cancel.is_cancelled() {
            return (index, Finalized::error(ABORTED));
        }
        // A call with a timeout has a token of its own, which the runner cancels when the
        // time is up; without one, the call's token is made from the batch's only if the
        // tool asks for it.
        let own = self.config.timeout.map(|_| self.cancel.child_token());
        let ctx = match &own {
            Some(token) => ToolContext::new(call.id.as_str(), token.clone()),
            None => ToolContext::in_batch(call.id.as_str(), self.cancel),
        }
        .with_updater(updater.clone())
        .with_extensions(self.config.extensions.clone())
        .with_time_limit(self.config.timeout)
        .with_nested(NestedSlot::new(
            Arc::clone(
                self.nested
                    .get_or_init(|| Nested::new(self.tools.clone(), self.config.clone())),
            ),
            Arc::clone(self.counts.get_or_init(|| counts(self.calls.len()))),
            index,
            self.depth,
        ));
        let hook_args = self.config.after_tool_call.as_ref().map(|_| args.clone());
        let run = AssertUnwindSafe(entry.tool.execute(args, ctx)).catch_unwind();
        let outcome = supervise(
            run,
            own.as_ref().unwrap_or(self.cancel),
            self.config.timeout,
            self.config.cancel_grace,
        )
        .await;
        updater.close();
        let executed = match outcome {
            Supervised::Done(Ok(Ok(result))) => Finalized {
                result,
                is_error: false,
            },
            Supervised::Done(Ok(Err(err))) => Finalized {
                result: err.into_result(),
                is_error: true,
            },
            Supervised::Done(Err(panic)) => Finalized::error(format!(
                "Tool {} panicked: {}",
                call.name,
                panic_message(&*panic)
            )),
            Supervised::TimedOut(after, partial) => {
                let mut fin = Finalized::error(timeout_text(&call.name, after));
                if let Some(Ok(partial)) = partial {
                    let partial = partial.unwrap_or_else(ToolError::into_result);
                    fin.result.content.extend(partial.content);
                    fin.result.details = partial.details;
                }
                fin
            }
            Supervised::Abandoned => Finalized::error(ABORTED),
        };
        let finalized = match (&self.config.after_tool_call, hook_args) {
            // Boxed: the hook's state would otherwise bloat every call's future.
            (Some(hook), Some(args)) => {
                Box::pin(finalize(hook.as_ref(), call, args, executed)).await
            }
            _ => executed,
        };
        (index, finalized)
    }
}

/// One empty result slot per call of the batch.
fn empty_slots(calls: usize) -> Vec<Option<Finalized>> {
    let mut slots = Vec::with_capacity(calls);
    slots.resize_with(calls, || None);
    slots
}

/// The batch's final results. `open` or `drive` fills every slot; one left empty would read
/// as aborted rather than panic.
fn settle(slots: Vec<Option<Finalized>>) -> Vec<Finalized> {
    slots
        .into_iter()
        .map(|s| s.unwrap_or_else(|| Finalized::error(ABORTED)))
        .collect()
}

async fn finalize(
    hook: &dyn AfterToolCall,
    call: &ToolCall,
    args: Value,
    executed: Finalized,
) -> Finalized {
    let ctx = AfterToolCallContext {
        call: call.clone(),
        args,
        result: executed.result.clone(),
        is_error: executed.is_error,
    };
    match AssertUnwindSafe(hook.after_tool_call(ctx))
        .catch_unwind()
        .await
    {
        Ok(Ok(None)) => executed,
        Ok(Ok(Some(over))) => {
            let mut result = executed.result;
            if let Some(content) = over.content {
                result.content = content;
            }
            if let Some(details) = over.details {
                result.details = details;
            }
            if let Some(usage) = over.usage {
                result.usage = Some(usage);
            }
            if let Some(terminate) = over.terminate {
                result.terminate = terminate;
            }
            Finalized {
                result,
                is_error: over.is_error.unwrap_or(executed.is_error),
            }
        }
        Ok(Err(err)) => Finalized::error(err.message()),
        Err(panic) => Finalized::error(format!(
            "The after_tool_call hook panicked: {}",
            panic_message(&*panic)
        )),
    }
}

fn timeout_text(tool: &str, after: Duration) -> String {
    format!(
        "Tool {tool} timed out after {}, the time every call is given (`[tools] timeout_secs` \
         in the configuration), and was cancelled. Split the work into smaller steps, or \
         raise `[tools] timeout_secs` (0 means no limit).",
        seconds_text(after.as_secs_f64())
    )
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

fn clone_finalized(fin: &Finalized) -> Finalized {
    Finalized {
        result: fin.result.clone(),
        is_error: fin.is_error,
    }
}

fn result_message(call: &ToolCall, fin: Finalized) -> ToolResultMessage {
    ToolResultMessage::new(call, fin.result, fin.is_error)
}
