//! A tool from data and a function: its spec, and what a call does. How tools that are not
//! written as `#[tool]` functions (a mounted server's, one declared in the configuration)
//! become definitions without a type and an impl of their own each.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::definition::ToolDefinition;
use super::spec::ToolSpec;
use crate::core::{BoxFuture, ToolContext, ToolError, ToolResult};

/// The definition whose spec is `spec` and whose calls run `run` (on validated arguments).
///
/// ```
/// use pi_tools::tool::from_fn;
/// use pi_tools::{ToolResult, ToolSpec};
/// use serde_json::json;
///
/// let spec = ToolSpec::new(
///     "shout",
///     "Shout a text.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
/// );
/// let shout = from_fn(spec, |args, _ctx| async move {
///     let text = args["text"].as_str().unwrap_or_default().to_uppercase();
///     Ok(ToolResult::text(text))
/// });
/// assert_eq!(shout.spec().name, "shout");
/// ```
pub fn from_fn<F, Fut>(spec: ToolSpec, run: F) -> Arc<dyn ToolDefinition>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
{
    Arc::new(FnDefinition { spec, run })
}

/// A spec and a function.
struct FnDefinition<F> {
    spec: ToolSpec,
    run: F,
}

impl<F, Fut> ToolDefinition for FnDefinition<F>
where
    F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin((self.run)(args, ctx))
    }
}
