//! The bash definition with the active sandbox's limits added to its description, so the
//! model reads where it may write and whether the network is on before its first call.

use std::sync::Arc;

use serde_json::Value;

use crate::core::{BoxFuture, ExecutionMode, ToolContext, ToolError, ToolResult};
use crate::tool::ToolDefinition;
use crate::tool::render::Styled;
use crate::tool::{SourceLocation, ToolConfigSpec};

/// `definition` with `note` (a sentence from
/// [`SandboxSettings::describe`](crate::config::SandboxSettings::describe)) after its
/// description; everything else is the definition's own.
pub fn with_sandbox_note(
    definition: Arc<dyn ToolDefinition>,
    note: &str,
) -> Arc<dyn ToolDefinition> {
    let description = format!("{} {note}", definition.description());
    Arc::new(Noted {
        inner: definition,
        description,
    })
}

struct Noted {
    inner: Arc<dyn ToolDefinition>,
    description: String,
}

impl ToolDefinition for Noted {
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

    fn accepts_unknown_properties(&self) -> bool {
        self.inner.accepts_unknown_properties()
    }

    fn role(&self) -> crate::tool::ToolRole {
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
