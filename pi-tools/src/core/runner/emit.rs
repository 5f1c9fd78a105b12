//! The runner's events: each built straight into the sink's future.

use std::future::Future;

use tokio::sync::mpsc::UnboundedReceiver;

use super::Finalized;
use crate::core::context::Update;
use crate::core::event::{EventSink, ToolEvent};
use crate::core::message::{ToolCall, ToolResultMessage};

// The emit helpers build each event straight into the sink's future: no extra async frame
// holding a second copy of the event.
pub(super) fn emit_start<'s, S: EventSink>(
    sink: &'s S,
    call: &ToolCall,
) -> impl Future<Output = ()> + 's {
    sink.emit(ToolEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    })
}

pub(super) fn emit_update<'s, S: EventSink>(
    sink: &'s S,
    call: &ToolCall,
    update: Update,
) -> impl Future<Output = ()> + 's {
    sink.emit(match update {
        Update::Partial(partial) => ToolEvent::ToolExecutionUpdate {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
            partial_result: partial,
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
    })
}

pub(super) fn emit_end<'s, S: EventSink>(
    sink: &'s S,
    call: &ToolCall,
    fin: &Finalized,
) -> impl Future<Output = ()> + 's {
    sink.emit(ToolEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: fin.result.clone(),
        is_error: fin.is_error,
    })
}

pub(super) async fn emit_message<S: EventSink>(sink: &S, message: &ToolResultMessage) {
    sink.emit(ToolEvent::MessageStart {
        message: message.clone(),
    })
    .await;
    sink.emit(ToolEvent::MessageEnd {
        message: message.clone(),
    })
    .await;
}

pub(super) async fn forward_pending_updates<S: EventSink>(
    rx: &mut UnboundedReceiver<(usize, Update)>,
    sink: &S,
    calls: &[ToolCall],
) {
    while let Ok((index, partial)) = rx.try_recv() {
        emit_update(sink, &calls[index], partial).await;
    }
}
