//! The notes that arrived since the last result ([`Notices`] in the batch's extensions) go
//! onto the next result the runner finishes, each also announced as an event.

use super::super::context::Extensions;
use super::super::event::{EventSink, ToolEvent};
use super::super::message::ToolCall;
use super::super::notices::Notices;
use super::super::result::ToolResult;
use crate::core::ContentBlock;

/// Appends every waiting notice to `result` as a text block of its own, and emits a
/// `notice` event for each. Nothing happens (one lock, no allocation) when none waits.
pub(super) async fn attach<S: EventSink>(
    extensions: &Extensions,
    call: &ToolCall,
    result: &mut ToolResult,
    sink: &S,
) {
    let Some(notices) = extensions.get::<Notices>() else {
        return;
    };
    for notice in notices.take() {
        result.content.push(ContentBlock::text(notice.text.clone()));
        sink.emit(ToolEvent::Notice {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            subject: notice.subject,
            text: notice.text,
        })
        .await;
    }
}
