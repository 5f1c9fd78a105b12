//! What a running tool gets besides its arguments.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::event::{LogLevel, ToolEvent};
use super::message::ToolCall;
use super::nested::NestedSlot;
use super::result::ToolResult;

/// A type map of shared values handed to every tool of a batch (the execution environment,
/// application state). Cloning is cheap; inserting copies the map.
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Inserts (or replaces) the value of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        let mut map = self.map.as_deref().cloned().unwrap_or_default();
        map.insert(TypeId::of::<T>(), Arc::new(value));
        self.map = Some(Arc::new(map));
    }

    /// Builder form of [`Extensions::insert`].
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// The value of type `T`, if present.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())?
            .downcast_ref::<T>()
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = self.map.as_ref().map_or(0, |m| m.len());
        f.debug_struct("Extensions").field("len", &len).finish()
    }
}

/// Sends partial results of a running call to the runner, which turns each into a
/// `tool_execution_update` event, and log lines, which become `tool_execution_log` events
/// when the batch's sink wants them. Updates sent after the tool returned are dropped.
#[derive(Clone)]
pub struct ProgressUpdater {
    to: To,
}

/// Where a call's updates go.
#[derive(Clone)]
enum To {
    /// Nowhere (a tool called outside the runner).
    Nowhere,
    /// The runner of the call's batch, through the batch's channel.
    Batch {
        channel: Arc<UpdateChannel>,
        index: usize,
    },
    /// The calling call's updater, as events of the nested call (see `runner::one`).
    Caller(Arc<ToCaller>),
}

/// A nested call's way to its caller: each update becomes the nested call's event, sent on
/// as one of the caller's; none once the nested call has returned.
struct ToCaller {
    caller: ProgressUpdater,
    call: Arc<ToolCall>,
    accepting: AtomicBool,
}

/// One per batch: where every call's updates go, and which calls still accept them (one
/// allocation per batch rather than one per call).
pub(crate) struct UpdateChannel {
    accepting: Box<[AtomicBool]>,
    tx: UnboundedSender<(usize, Update)>,
    wants_logs: bool,
}

/// What a running call sends the runner.
#[allow(
    clippy::large_enum_variant,
    reason = "partial results are most of what is sent, and boxing them would allocate for each"
)]
pub(crate) enum Update {
    /// A partial result.
    Partial(ToolResult),
    /// A log line.
    Log {
        level: LogLevel,
        logger: String,
        message: String,
    },
    /// An event of a nested call the running call made.
    Nested(Box<ToolEvent>),
}

impl Update {
    /// The event of `call` this update becomes.
    pub(crate) fn into_event(self, call: &ToolCall) -> ToolEvent {
        match self {
            Update::Partial(partial) => ToolEvent::ToolExecutionUpdate {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.arguments.clone(),
                partial_result: Box::new(partial),
            },
            Update::Log {
                level,
                logger,
                message,
            } => ToolEvent::ToolExecutionLog {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                level,
                logger,
                message,
            },
            Update::Nested(event) => ToolEvent::ToolExecutionNested {
                parent_tool_call_id: call.id.clone(),
                event,
            },
        }
    }
}

impl UpdateChannel {
    /// A channel for a batch of `calls` calls, all accepting updates; log lines are kept
    /// only when `wants_logs`.
    pub(crate) fn new(
        calls: usize,
        tx: UnboundedSender<(usize, Update)>,
        wants_logs: bool,
    ) -> Arc<Self> {
        Arc::new(UpdateChannel {
            accepting: (0..calls).map(|_| AtomicBool::new(true)).collect(),
            tx,
            wants_logs,
        })
    }
}

/// The key of a partial result's `details` that says where its text ends in the whole
/// output, in bytes of text (see [`ProgressUpdater::update`]).
pub const OUTPUT_END_DETAIL: &str = "outputEnd";

impl ProgressUpdater {
    /// An updater that drops everything (for calling a tool outside the runner).
    pub fn disabled() -> Self {
        ProgressUpdater { to: To::Nowhere }
    }

    pub(crate) fn new(channel: &Arc<UpdateChannel>, index: usize) -> Self {
        ProgressUpdater {
            to: To::Batch {
                channel: channel.clone(),
                index,
            },
        }
    }

    /// The updater of the nested call `call` made by the call `caller` updates: each update
    /// goes to `caller` as an event of `call`.
    pub(crate) fn to_caller(caller: &ProgressUpdater, call: &Arc<ToolCall>) -> Self {
        ProgressUpdater {
            to: To::Caller(Arc::new(ToCaller {
                caller: caller.clone(),
                call: Arc::clone(call),
                accepting: AtomicBool::new(true),
            })),
        }
    }

    /// Sends a partial result; a no-op once the call has returned.
    ///
    /// A tool whose partial results show a window of a growing output (bash shows its
    /// tail) may put in `details`, under [`OUTPUT_END_DETAIL`], how many bytes of text the
    /// output has had in all where the window ends: a front end that shows only what is new
    /// (MCP progress) then knows exactly what is.
    pub fn update(&self, partial: ToolResult) {
        self.send(Update::Partial(partial));
    }

    /// Whether log lines reach anyone: the batch's sink [wants them](super::EventSink::wants_logs).
    /// A tool may skip the work of producing them otherwise.
    pub fn wants_logs(&self) -> bool {
        match &self.to {
            To::Nowhere => false,
            To::Batch { channel, .. } => channel.wants_logs,
            To::Caller(to) => to.caller.wants_logs(),
        }
    }

    /// Sends a log line (without its end) from `logger`, e.g. a command's stderr line from
    /// `bash`; a no-op unless [`wants_logs`](Self::wants_logs), or once the call has returned.
    pub fn log(&self, level: LogLevel, logger: &str, message: impl Into<String>) {
        if self.wants_logs() {
            self.send(Update::Log {
                level,
                logger: logger.to_owned(),
                message: message.into(),
            });
        }
    }

    fn send(&self, update: Update) {
        match &self.to {
            To::Nowhere => {}
            To::Batch { channel, index } => {
                if channel.accepting[*index].load(Ordering::Acquire) {
                    let _ = channel.tx.send((*index, update));
                }
            }
            To::Caller(to) => {
                if to.accepting.load(Ordering::Acquire) {
                    to.caller.nested(update.into_event(&to.call));
                }
            }
        }
    }

    /// Sends an event of a nested call this call made; a no-op once the call has returned.
    pub(crate) fn nested(&self, event: ToolEvent) {
        self.send(Update::Nested(Box::new(event)));
    }

    /// Stops accepting updates; later ones are dropped.
    pub(crate) fn close(&self) {
        match &self.to {
            To::Nowhere => {}
            To::Batch { channel, index } => {
                channel.accepting[*index].store(false, Ordering::Release);
            }
            To::Caller(to) => to.accepting.store(false, Ordering::Release),
        }
    }
}

/// Everything a tool gets besides its arguments: the call id, a cancellation token, a
/// progress updater, the batch's shared [`Extensions`] (the execution environment lives
/// there) and the tool's own typed configuration.
#[derive(Clone)]
pub struct ToolContext {
    call_id: Arc<str>,
    cancel: CallCancel,
    updater: ProgressUpdater,
    extensions: Extensions,
    tool_config: Option<Arc<dyn Any + Send + Sync>>,
    time_limit: Option<Duration>,
    nested: Option<NestedSlot>,
}

impl ToolContext {
    /// A context for running a tool directly (tests, custom drivers).
    pub fn new(call_id: impl Into<Arc<str>>, cancel: CancellationToken) -> Self {
        ToolContext::with_cancel(
            call_id.into(),
            CallCancel {
                own: OnceLock::from(cancel),
                batch: None,
            },
        )
    }

    /// A context for a call of a batch without a timeout: the call's token is made from the
    /// batch's only if the tool asks for it (most calls never do, and making one takes the
    /// batch token's lock twice).
    pub(crate) fn in_batch(call_id: impl Into<Arc<str>>, batch: &CancellationToken) -> Self {
        ToolContext::with_cancel(
            call_id.into(),
            CallCancel {
                own: OnceLock::new(),
                batch: Some(batch.clone()),
            },
        )
    }

    fn with_cancel(call_id: Arc<str>, cancel: CallCancel) -> Self {
        ToolContext {
            call_id,
            cancel,
            updater: ProgressUpdater::disabled(),
            extensions: Extensions::default(),
            tool_config: None,
            time_limit: None,
            nested: None,
        }
    }

    /// Replaces the progress updater.
    pub fn with_updater(mut self, updater: ProgressUpdater) -> Self {
        self.updater = updater;
        self
    }

    /// Replaces the shared extensions.
    pub fn with_extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Sets the tool's typed configuration.
    pub fn with_tool_config(mut self, config: Arc<dyn Any + Send + Sync>) -> Self {
        self.tool_config = Some(config);
        self
    }

    /// Lets the call make nested calls through its batch's runner.
    pub(crate) fn with_nested(mut self, slot: NestedSlot) -> Self {
        self.nested = Some(slot);
        self
    }

    /// The call's way to make nested calls, when it runs in a batch.
    pub(crate) fn nested_slot(&self) -> Option<&NestedSlot> {
        self.nested.as_ref()
    }

    /// Sets the time the runner gives the call before it cancels it.
    pub fn with_time_limit(mut self, limit: Option<Duration>) -> Self {
        self.time_limit = limit;
        self
    }

    /// How long the runner lets the call run before it cancels it (its
    /// [`RunnerConfig::timeout`](super::RunnerConfig::timeout)), if it limits it: a tool
    /// that takes a timeout of its own can refuse a longer one at once.
    pub fn time_limit(&self) -> Option<Duration> {
        self.time_limit
    }

    /// The id of the call being executed.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Cancelled when the batch is aborted or the call times out. Cancelling it stops this
    /// call only, never its siblings.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.own.get_or_init(|| {
            self.cancel
                .batch
                .as_ref()
                .map_or_else(CancellationToken::new, CancellationToken::child_token)
        })
    }

    /// The token that cancels this call as it stands: its own when it has one, else the
    /// batch's, which is the only thing that can cancel the call then. A nested call runs
    /// under it without making the call a token of its own (a child token takes the
    /// parent's lock to be made and again to be dropped).
    pub(crate) fn current_cancellation(&self) -> &CancellationToken {
        match (self.cancel.own.get(), &self.cancel.batch) {
            (Some(own), _) => own,
            (None, Some(batch)) => batch,
            (None, None) => self.cancellation(),
        }
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        match (self.cancel.own.get(), &self.cancel.batch) {
            (Some(own), _) => own.is_cancelled(),
            (None, Some(batch)) => batch.is_cancelled(),
            (None, None) => false,
        }
    }

    /// Reports a partial result (becomes a `tool_execution_update` event).
    pub fn update(&self, partial: ToolResult) {
        self.updater.update(partial);
    }

    /// Logs a line (see [`ProgressUpdater::log`]).
    pub fn log(&self, level: LogLevel, logger: &str, message: impl Into<String>) {
        self.updater.log(level, logger, message);
    }

    /// The progress updater, to hand to helper tasks.
    pub fn updater(&self) -> &ProgressUpdater {
        &self.updater
    }

    /// The batch's shared values.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The tool's typed configuration, if it has one of type `T`.
    pub fn tool_config<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.tool_config.as_deref()?.downcast_ref::<T>()
    }
}

/// A call's cancellation token: its own, or made on first use as a child of the batch's.
#[derive(Clone)]
struct CallCancel {
    own: OnceLock<CancellationToken>,
    /// The batch's token, while the call has no token of its own yet.
    batch: Option<CancellationToken>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
