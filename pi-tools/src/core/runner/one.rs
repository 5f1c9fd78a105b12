//! A nested call (`ToolContext::call_tool`): one call through the same phases as a batch's
//! (start event, preparation with validation and the before-hook, execution under
//! supervision with the per-file queue, the after-hook, the notices, the end event), run
//! straight in the calling call's task. A batch's machinery for running calls side by side
//! (its update channel, its set of running futures, its result messages) has nothing to do
//! for one call, and a nested call's updates and events go straight to the caller's updater.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use super::emit::{emit_shared_end, emit_start};
use super::{ABORTED, Batch, Finalized, Prepared, notify};
use crate::core::context::ProgressUpdater;
use crate::core::event::{EventSink, ToolEvent};
use crate::core::message::ToolCall;
use crate::core::nested::Nested;
use crate::core::result::ToolResult;

/// Hands a nested call's events to the calling call's updater, for the runner of the
/// caller's batch to send on as the caller's.
struct ToCaller<'a>(&'a ProgressUpdater);

impl EventSink for ToCaller<'_> {
    async fn emit(&self, event: ToolEvent) {
        self.0.nested(event);
    }

    fn wants_logs(&self) -> bool {
        self.0.wants_logs()
    }
}

/// Runs `call`, made by a call whose updater is `caller`, `depth` levels below the model's
/// call, with the caller's cancellation: its result (shared with its end event), and
/// whether it failed.
pub(crate) async fn run_one(
    nested: &Arc<Nested>,
    call: ToolCall,
    cancel: &CancellationToken,
    caller: &ProgressUpdater,
    depth: usize,
) -> (Arc<ToolResult>, bool) {
    let call = Arc::new(call);
    let sink = ToCaller(caller);
    let batch = Batch {
        tools: nested.tools(),
        calls: std::slice::from_ref(&*call),
        config: nested.config(),
        cancel,
        all_calls: OnceLock::new(),
        depth,
        nested: OnceLock::from(Arc::clone(nested)),
        counts: OnceLock::new(),
    };
    emit_start(&sink, &call).await;
    let prepared = if cancel.is_cancelled() {
        Prepared::Immediate(Finalized::error(ABORTED))
    } else {
        batch.prepare(&call).await
    };
    let fin = match prepared {
        Prepared::Immediate(fin) => fin,
        Prepared::Ready { entry, args } => {
            let updater = ProgressUpdater::to_caller(caller, &call);
            let (_, mut fin) = batch.execute(0, entry, args, updater).await;
            notify::attach(&batch.config.extensions, &call, &mut fin.result, &sink).await;
            fin
        }
    };
    emit_shared_end(&sink, &call, fin).await
}
