//! The before-call hook that judges each call by the policy of the session it belongs to, so
//! a server of many sessions keeps one hook in its configuration and each session's person
//! is asked about that session's calls.

use std::sync::Arc;

use crate::core::{
    BeforeToolCall, BeforeToolCallContext, BeforeToolCallOutcome, BoxFuture, ToolError,
};
use crate::policy::PolicyHook;

use super::SessionOf;

/// Judges a call by its session's policy ([`Session::policy`](super::Session::policy)); a
/// call carrying no session, or a session without a policy of its own, is judged by the
/// policy the gate was made with, so no call goes unjudged.
#[derive(Debug)]
pub struct SessionPolicyGate {
    fallback: Arc<PolicyHook>,
}

impl SessionPolicyGate {
    /// A gate that judges calls without a session's policy by `fallback`.
    pub fn new(fallback: Arc<PolicyHook>) -> Self {
        SessionPolicyGate { fallback }
    }
}

impl BeforeToolCall for SessionPolicyGate {
    fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext,
    ) -> BoxFuture<'_, Result<BeforeToolCallOutcome, ToolError>> {
        let policy = ctx
            .session()
            .and_then(|session| session.policy())
            .cloned()
            .unwrap_or_else(|| Arc::clone(&self.fallback));
        Box::pin(async move { policy.before_tool_call(ctx).await })
    }
}
