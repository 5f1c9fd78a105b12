//! A definition with words added to its description: how the product tells the model about
//! the context a tool runs in (the shell's sandbox limits, say), whatever the tool.

use std::sync::Arc;

use serde_json::Value;

use super::definition::{SourceLocation, ToolConfigSpec, ToolDefinition, ToolRole};
use super::render::Styled;
use crate::core::{BoxFuture, ExecutionMode, ToolContext, ToolError, ToolResult};

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
/// assert_eq!(noted.description(), "Say hello. Greets in English only.");
/// assert_eq!(noted.name(), "greet");
/// ```
pub fn extend_description(
    definition: Arc<dyn ToolDefinition>,
    addition: &str,
) -> Arc<dyn ToolDefinition> {
    let addition = addition.trim();
    if addition.is_empty() {
        return definition;
    }
    let description = format!("{} {addition}", definition.description());
    Arc::new(Extended {
        inner: definition,
        description,
    })
}

struct Extended {
    inner: Arc<dyn ToolDefinition>,
    description: String,
}

// Every method forwards (clippy refuses a provided method left to its default), so a method
// added to `ToolDefinition` cannot lose the tool's own answer here.
#[deny(clippy::missing_trait_methods)]
impl ToolDefinition for Extended {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn label(&self) -> &str {
        self.inner.label()
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.inner.prompt_snippet()
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        self.inner.prompt_guidelines()
    }

    fn parameters(&self) -> &Value {
        self.inner.parameters()
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.inner.execution_mode()
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        self.inner.prepare_arguments(args)
    }

    fn accepts_unknown_properties(&self) -> bool {
        self.inner.accepts_unknown_properties()
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        self.inner.execute(args, ctx)
    }

    fn config(&self) -> Option<ToolConfigSpec> {
        self.inner.config()
    }

    fn read_only(&self) -> bool {
        self.inner.read_only()
    }

    fn destructive(&self) -> bool {
        self.inner.destructive()
    }

    fn mounted_from(&self) -> Option<&str> {
        self.inner.mounted_from()
    }

    fn role(&self) -> ToolRole {
        self.inner.role()
    }

    fn examples(&self) -> Vec<Value> {
        self.inner.examples()
    }

    fn source_location(&self) -> Option<SourceLocation> {
        self.inner.source_location()
    }

    fn render_call(&self, args: &Value) -> Styled {
        self.inner.render_call(args)
    }

    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        self.inner.render_result(result, is_error)
    }
}
