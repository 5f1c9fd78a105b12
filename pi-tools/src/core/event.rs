//! Events the runner emits while a batch runs, and the sink they go to.

use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::ToolResultMessage;
use super::result::ToolResult;

/// One event of a batch, in the original's wire shape (`{"type":"tool_execution_start",
/// "toolCallId":…}`). Result messages are announced as `message_start` / `message_end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ToolEvent {
    /// A call entered preparation (source order).
    ToolExecutionStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The raw arguments of the call.
        args: Value,
    },
    /// A running call reported progress.
    ToolExecutionUpdate {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The raw arguments of the call.
        args: Value,
        /// The partial result the tool reported (boxed: the other events are small).
        partial_result: Box<ToolResult>,
    },
    /// A running call logged a line (a command's stderr line, say); sent only to sinks
    /// that [want logs](EventSink::wants_logs).
    ToolExecutionLog {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// How severe the line is.
        level: LogLevel,
        /// Where the line comes from, e.g. `bash` for a command's stderr.
        logger: String,
        /// The line, without its end.
        message: String,
    },
    /// A call finished (completion order in a parallel batch).
    ToolExecutionEnd {
        /// The call's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The final result, shared: the runner takes it back for the call's message when
        /// the sink keeps no handle (so a result is not copied for every event); a nested
        /// call's is shared with the tool that made it.
        result: Arc<ToolResult>,
        /// Whether the call failed.
        is_error: bool,
    },
    /// A note that arrived since the last result (a background job ended) was appended to
    /// this call's result (see [`Notices`](super::Notices)); sent just before the call's end.
    Notice {
        /// The call whose result carries the note.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// What the note is about, such as `job 3`.
        subject: String,
        /// The note's text, as the model reads it.
        text: String,
    },
    /// An event of a call that a running call made itself
    /// ([`ToolContext::call_tool`](super::ToolContext::call_tool)): its start, updates and
    /// end, under the id of the call that made it (nested again for a call deeper down).
    /// Its result is the calling tool's to use, so it has no transcript message.
    ToolExecutionNested {
        /// The id of the call that made the nested call.
        parent_tool_call_id: String,
        /// The nested call's event.
        event: Box<ToolEvent>,
    },
    /// A result message is about to be appended to the transcript (source order).
    MessageStart {
        /// The message (the same one `MessageEnd` carries).
        message: Arc<ToolResultMessage>,
    },
    /// A result message was appended to the transcript (source order).
    MessageEnd {
        /// The message.
        message: Arc<ToolResultMessage>,
    },
}

impl ToolEvent {
    /// The `type` tag of the event, e.g. `"tool_execution_end"`.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolEvent::ToolExecutionStart { .. } => "tool_execution_start",
            ToolEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            ToolEvent::ToolExecutionLog { .. } => "tool_execution_log",
            ToolEvent::ToolExecutionEnd { .. } => "tool_execution_end",
            ToolEvent::Notice { .. } => "notice",
            ToolEvent::ToolExecutionNested { .. } => "tool_execution_nested",
            ToolEvent::MessageStart { .. } => "message_start",
            ToolEvent::MessageEnd { .. } => "message_end",
        }
    }

    /// The call the event is about.
    pub fn tool_call_id(&self) -> &str {
        match self {
            ToolEvent::ToolExecutionStart { tool_call_id, .. }
            | ToolEvent::ToolExecutionUpdate { tool_call_id, .. }
            | ToolEvent::ToolExecutionLog { tool_call_id, .. }
            | ToolEvent::ToolExecutionEnd { tool_call_id, .. }
            | ToolEvent::Notice { tool_call_id, .. } => tool_call_id,
            ToolEvent::ToolExecutionNested {
                parent_tool_call_id,
                ..
            } => parent_tool_call_id,
            ToolEvent::MessageStart { message } | ToolEvent::MessageEnd { message } => {
                &message.tool_call_id
            }
        }
    }
}

/// Where the runner delivers events. The runner awaits each delivery, so a slow sink slows
/// the batch (back-pressure) but never reorders events.
pub trait EventSink: Send + Sync {
    /// Delivers one event.
    fn emit(&self, event: ToolEvent) -> impl Future<Output = ()> + Send;

    /// Whether this sink wants `tool_execution_log` events. Tools may do extra work to
    /// produce log lines (bash reads stderr through a pipe of its own, so between stdout and
    /// stderr its output keeps the order of arrival, not of writing), so they produce them
    /// only when a sink asks: `false` unless overridden.
    fn wants_logs(&self) -> bool {
        false
    }
}

/// How severe a tool's log line is, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Something worth knowing.
    Info,
    /// Something that may be wrong (a command's stderr line).
    Warning,
    /// Something that went wrong.
    Error,
}

/// Discards every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopSink;

impl EventSink for NoopSink {
    async fn emit(&self, _event: ToolEvent) {}
}

/// Keeps every event in memory, in delivery order.
#[derive(Debug, Default)]
pub struct CollectingSink {
    events: Mutex<Vec<ToolEvent>>,
}

impl CollectingSink {
    /// An empty sink.
    pub fn new() -> Self {
        CollectingSink::default()
    }

    /// The events delivered so far.
    pub fn events(&self) -> Vec<ToolEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Takes the events delivered so far.
    pub fn take(&self) -> Vec<ToolEvent> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl EventSink for CollectingSink {
    async fn emit(&self, event: ToolEvent) {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }
}

impl EventSink for tokio::sync::mpsc::UnboundedSender<ToolEvent> {
    async fn emit(&self, event: ToolEvent) {
        // A receiver that went away just stops listening; the batch still runs.
        let _ = self.send(event);
    }
}

impl EventSink for tokio::sync::mpsc::Sender<ToolEvent> {
    async fn emit(&self, event: ToolEvent) {
        let _ = self.send(event).await;
    }
}

impl<S: EventSink> EventSink for &S {
    fn emit(&self, event: ToolEvent) -> impl Future<Output = ()> + Send {
        (**self).emit(event)
    }

    fn wants_logs(&self) -> bool {
        (**self).wants_logs()
    }
}
