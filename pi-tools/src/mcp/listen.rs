//! A 2026-07-28 `subscriptions/listen`: the one way a client of the stateless era hears of
//! changes. The protocol library acknowledges the request with what the server agreed to
//! send (`notifications/subscriptions/acknowledged`, the intersection of what was asked,
//! [`ToolServer::listen_filter`] and the capabilities), then runs [`ToolServer::listen_to`]
//! until it returns, and answers the request with the completion result.
//!
//! What pi-tools can send: `notifications/tools/list_changed`, when its tools may be replaced
//! while it runs (mounted servers, a configuration file's declared tools: see
//! `tool_updates`). Nothing else ever changes: the
//! resources served do not change once listed and the prompt list is fixed, so those
//! categories are left out of the acknowledgment, as the specification says of types a
//! server does not support. A listen left with nothing to send (no tools that can change,
//! or none of them asked for) ends at once after its acknowledgment, with the completion
//! result: the specification's graceful end, rather than a stream open forever in silence.
//!
//! A listen with something to send stays open until the client cancels it (closes the HTTP
//! response, or sends `notifications/cancelled` over stdio; no result then), the stdio input
//! ends, or the server stops (both: the completion result, when the stream still takes it).

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;

use super::server::ToolServer;

impl ToolServer {
    /// What of `asked` this server can send: tool list changes, when its tools may change.
    pub(super) fn listen_filter(&self, asked: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::new();
        if self.served().may_change() {
            accepted.tools_list_changed = asked.tools_list_changed.filter(|asked| *asked);
        }
        accepted
    }

    /// Sends `notifications/tools/list_changed` on the subscription at each replacement of
    /// the tools, until the subscription, the server or the stdio input ends; at once when
    /// it accepted nothing.
    pub(super) async fn listen_to(
        &self,
        subscription: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let replaced = match subscription.accepted().tools_list_changed {
            Some(true) => self.served().replacements(),
            _ => None,
        };
        let Some(mut replaced) = replaced else {
            return Ok(());
        };
        let sink = subscription.sink();
        loop {
            tokio::select! {
                changed = replaced.changed() => if changed.is_err() { return Ok(()) },
                _ = subscription.cancelled() => return Ok(()),
                _ = self.client_session().cancel().cancelled() => return Ok(()),
                _ = self.listening_ended().cancelled() => return Ok(()),
            }
            // The stream is gone (the client left): nothing more to say on it.
            if sink.notify_tool_list_changed().await.is_err() {
                return Ok(());
            }
        }
    }
}
