//! Interception points around each call: before (may block or rewrite arguments) and after
//! (may override the result field by field).

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::content::ContentBlock;
use super::context::Extensions;
use super::error::ToolError;
use super::message::ToolCall;
use super::result::{ToolResult, Usage};
use super::tool::BoxFuture;

/// What a before-hook sees.
#[derive(Debug, Clone)]
pub struct BeforeToolCallContext {
    /// The call as the model sent it.
    pub call: ToolCall,
    /// The validated (coerced) arguments.
    pub args: Value,
    /// Every call of the batch, in source order.
    pub batch: Arc<[ToolCall]>,
    /// The batch's cancellation token: cancelled when the caller gives up on the calls (an
    /// MCP client's `notifications/cancelled`, the end of its session). The runner does not
    /// cancel a hook; one that waits (for a person's answer, say) stops waiting on this.
    pub cancel: CancellationToken,
    /// The batch's extensions, as every tool's context carries them: a hook reaches the
    /// session of the call (`pi_tools::session::SessionOf`) and its environment here.
    pub extensions: Extensions,
}

/// A before-hook's decision.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolCallOutcome {
    /// Run the call with the validated arguments.
    Continue,
    /// Run the call with these arguments instead (they are not validated again).
    Rewrite(Value),
    /// Do not run the call; it ends as an error result with the reason (or "Tool execution
    /// was blocked").
    Block {
        /// Why, for the model.
        reason: Option<String>,
    },
}

/// Runs before every call that passed validation.
pub trait BeforeToolCall: Send + Sync {
    /// Decides whether (and with which arguments) the call runs. An `Err` ends the call as an
    /// error result with that message.
    fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext,
    ) -> BoxFuture<'_, Result<BeforeToolCallOutcome, ToolError>>;
}

impl<F, Fut> BeforeToolCall for F
where
    F: Fn(BeforeToolCallContext) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = Result<BeforeToolCallOutcome, ToolError>> + Send + 'static,
{
    fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext,
    ) -> BoxFuture<'_, Result<BeforeToolCallOutcome, ToolError>> {
        Box::pin(self(ctx))
    }
}

/// What an after-hook sees.
#[derive(Debug, Clone)]
pub struct AfterToolCallContext {
    /// The call as the model sent it.
    pub call: ToolCall,
    /// The arguments the tool ran with.
    pub args: Value,
    /// The tool's result (an error result when it failed).
    pub result: ToolResult,
    /// Whether the call failed.
    pub is_error: bool,
}

/// Field-wise overrides from an after-hook; `None` keeps the tool's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AfterToolCallOverride {
    /// Replaces the content.
    pub content: Option<Vec<ContentBlock>>,
    /// Replaces the details.
    pub details: Option<Value>,
    /// Replaces the usage.
    pub usage: Option<Usage>,
    /// Replaces the terminate hint.
    pub terminate: Option<bool>,
    /// Replaces the error flag.
    pub is_error: Option<bool>,
}

/// Runs after every executed call (not after immediate failures such as a missing tool).
pub trait AfterToolCall: Send + Sync {
    /// Returns overrides for the result, or `None` to keep it. An `Err` turns the call into
    /// an error result with that message.
    fn after_tool_call(
        &self,
        ctx: AfterToolCallContext,
    ) -> BoxFuture<'_, Result<Option<AfterToolCallOverride>, ToolError>>;
}

impl<F, Fut> AfterToolCall for F
where
    F: Fn(AfterToolCallContext) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = Result<Option<AfterToolCallOverride>, ToolError>>
        + Send
        + 'static,
{
    fn after_tool_call(
        &self,
        ctx: AfterToolCallContext,
    ) -> BoxFuture<'_, Result<Option<AfterToolCallOverride>, ToolError>> {
        Box::pin(self(ctx))
    }
}
