//! The runner's events: each built straight into the sink's future.

use std::future::Future;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;

use super::Finalized;
use crate::core::context::Update;
use crate::core::event::{EventSink, ToolEvent};
use crate::core::message::{ToolCall, ToolResultMessage};
use crate::core::result::ToolResult;

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
    sink.emit(update.into_event(call))
}

/// The call's end event. The result goes into the event shared, and comes back into `fin`
/// when the sink kept no handle to it (a copy only for a sink that keeps events).
pub(super) async fn emit_end<S: EventSink>(sink: &S, call: &ToolCall, fin: &mut Finalized) {
    let result = Arc::new(std::mem::take(&mut fin.result));
    sink.emit(ToolEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: Arc::clone(&result),
        is_error: fin.is_error,
    })
    .await;
    fin.result = Arc::unwrap_or_clone(result);
}

/// A nested call's end event, the result shared with its caller: the event waits in the
/// calling call's updates while the caller reads the result, so neither takes a copy.
/// (`emit_end` builds its event itself: going through this fn cost every call about 200
/// instructions, the awaited frame in between.)
pub(super) async fn emit_shared_end<S: EventSink>(
    sink: &S,
    call: &ToolCall,
    fin: Finalized,
) -> (Arc<ToolResult>, bool) {
    let result = Arc::new(fin.result);
    sink.emit(ToolEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: Arc::clone(&result),
        is_error: fin.is_error,
    })
    .await;
    (result, fin.is_error)
}

/// The message's start and end events, both holding the one message, which comes back when
/// the sink kept no handle to it.
pub(super) async fn emit_message<S: EventSink>(
    sink: &S,
    message: ToolResultMessage,
) -> ToolResultMessage {
    let message = Arc::new(message);
    sink.emit(ToolEvent::MessageStart {
        message: Arc::clone(&message),
    })
    .await;
    sink.emit(ToolEvent::MessageEnd {
        message: Arc::clone(&message),
    })
    .await;
    Arc::unwrap_or_clone(message)
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
