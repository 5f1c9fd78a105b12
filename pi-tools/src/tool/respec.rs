//! A definition that says something else about itself: the same behaviour under another
//! spec. How the product tells the model about the context a tool runs in (the shell's
//! sandbox limits, say), and how a configuration renames or re-describes a tool, whatever
//! the tool.

use std::sync::Arc;

use serde_json::Value;

use super::definition::ToolDefinition;
use super::render::Styled;
use super::spec::ToolSpec;
use crate::core::{BoxFuture, ToolContext, ToolError, ToolResult};

/// `definition`'s behaviour under `spec`: calls, argument preparation and rendering are the
/// definition's own; everything the tool says about itself is `spec`.
///
/// ```
/// use std::sync::Arc;
/// use pi_tools::{ToolDefinition, ToolError, tool};
/// use pi_tools::tool::with_spec;
///
/// /// Wave at someone.
/// #[tool]
/// async fn wave() -> Result<String, ToolError> {
///     Ok("o/".to_owned())
/// }
///
/// let mut spec = WaveTool.spec().clone();
/// spec.label = "Waver".into();
/// let relabelled = with_spec(Arc::new(WaveTool), spec);
/// assert_eq!(relabelled.spec().label, "Waver");
/// assert_eq!(relabelled.spec().name, "wave");
/// ```
pub fn with_spec(definition: Arc<dyn ToolDefinition>, spec: ToolSpec) -> Arc<dyn ToolDefinition> {
    Arc::new(Respecified {
        spec,
        inner: definition,
    })
}

/// `definition` with `addition` after its description (one space between); everything else
/// is the definition's own. A blank `addition` leaves the definition as it is.
///
/// ```
/// use std::sync::Arc;
/// use pi_tools::{ToolDefinition, ToolError, tool};
/// use pi_tools::tool::extend_description;
///
/// /// Say hello.
/// #[tool]
/// async fn greet() -> Result<String, ToolError> {
///     Ok("hello".to_owned())
/// }
///
/// let noted = extend_description(Arc::new(GreetTool), "Greets in English only.");
/// assert_eq!(noted.spec().description, "Say hello. Greets in English only.");
/// assert_eq!(noted.spec().name, "greet");
/// ```
pub fn extend_description(
    definition: Arc<dyn ToolDefinition>,
    addition: &str,
) -> Arc<dyn ToolDefinition> {
    let addition = addition.trim();
    if addition.is_empty() {
        return definition;
    }
    let mut spec = definition.spec().clone();
    spec.description = format!("{} {addition}", spec.description);
    with_spec(definition, spec)
}

struct Respecified {
    spec: ToolSpec,
    inner: Arc<dyn ToolDefinition>,
}

// The behaviour is the inner definition's, every method of it (clippy refuses a provided
// method left to its default), so a behaviour added to `ToolDefinition` cannot be lost here.
#[deny(clippy::missing_trait_methods)]
impl ToolDefinition for Respecified {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        self.inner.prepare_arguments(args)
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        self.inner.execute(args, ctx)
    }

    fn render_call(&self, args: &Value) -> Styled {
        self.inner.render_call(args)
    }

    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        self.inner.render_result(result, is_error)
    }
}
