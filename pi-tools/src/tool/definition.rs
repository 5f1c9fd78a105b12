//! The product face of a tool, and the thin projections between it and the kernel's
//! [`AgentTool`].

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use crate::core::{AgentTool, BoxFuture, ExecutionMode, ToolContext, ToolError, ToolResult};
use crate::tool::render::{Color, Style, Styled};
use crate::tool::spec::ToolSpec;

/// A tool as the product sees it: its metadata as one value ([`ToolSpec`]) and its
/// behaviour (run it; reshape arguments and render for people where it has its own way).
/// `#[tool]` implements this for a generated unit struct; [`wrap`] turns it into an
/// [`AgentTool`] for the runner.
pub trait ToolDefinition: Send + Sync + 'static {
    /// What the tool says about itself: name, description, schema, prompt lines, hints.
    fn spec(&self) -> &ToolSpec;

    /// Reshapes raw arguments before validation. The default passes them through.
    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        Ok(args)
    }

    /// Runs the tool on validated arguments.
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>>;

    /// How a call looks to a person: by default the tool's name and its arguments.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push(&self.spec().name, Style::fg(Color::Cyan).bold());
        if args.as_object().is_some_and(|o| !o.is_empty()) {
            out.add(format!(" {args}"), Style::fg(Color::Gray));
        }
        out
    }

    /// How a result looks to a person: by default its text, red when it failed.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        plain_result(result, is_error)
    }
}

/// Projects a definition onto the kernel's lean face, with its configuration (or the
/// declared default when `config` is `None`).
pub fn wrap(
    definition: Arc<dyn ToolDefinition>,
    config: Option<Arc<dyn Any + Send + Sync>>,
) -> Arc<dyn AgentTool> {
    wrap_with_mode(definition, config, None)
}

/// [`wrap`], with the execution mode overridden (e.g. by `[tool.<name>] mode` in the
/// configuration); `None` keeps the definition's own mode.
pub fn wrap_with_mode(
    definition: Arc<dyn ToolDefinition>,
    config: Option<Arc<dyn Any + Send + Sync>>,
    mode: Option<ExecutionMode>,
) -> Arc<dyn AgentTool> {
    let config = config.or_else(|| definition.spec().config.map(|spec| (spec.default)()));
    let mode = mode.unwrap_or(definition.spec().mode);
    Arc::new(Wrapped {
        definition,
        config,
        mode,
    })
}

struct Wrapped {
    definition: Arc<dyn ToolDefinition>,
    config: Option<Arc<dyn Any + Send + Sync>>,
    mode: ExecutionMode,
}

// The kernel's lean face, answered from the spec (the kernel asks for these few things
// only; the spec is the one place they live).
impl AgentTool for Wrapped {
    fn name(&self) -> &str {
        &self.definition.spec().name
    }

    fn label(&self) -> &str {
        &self.definition.spec().label
    }

    fn description(&self) -> &str {
        &self.definition.spec().description
    }

    fn parameters(&self) -> &Value {
        &self.definition.spec().parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        self.definition.spec().output_schema.as_ref()
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        self.definition.prepare_arguments(args)
    }

    fn accepts_unknown_properties(&self) -> bool {
        self.definition.spec().accepts_unknown_properties
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        let ctx = match &self.config {
            Some(config) => ctx.with_tool_config(config.clone()),
            None => ctx,
        };
        self.definition.execute(args, ctx)
    }
}

/// Builds a minimal definition (no snippet, guidelines or renderers of its own) from a bare
/// kernel tool: its spec is read from the tool once.
pub fn from_agent_tool(tool: Arc<dyn AgentTool>) -> Arc<dyn ToolDefinition> {
    let spec = ToolSpec {
        label: tool.label().to_owned(),
        mode: tool.execution_mode(),
        accepts_unknown_properties: tool.accepts_unknown_properties(),
        output_schema: tool.output_schema().cloned(),
        ..ToolSpec::new(tool.name(), tool.description(), tool.parameters().clone())
    };
    Arc::new(FromAgentTool { spec, tool })
}

struct FromAgentTool {
    spec: ToolSpec,
    tool: Arc<dyn AgentTool>,
}

impl ToolDefinition for FromAgentTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        self.tool.prepare_arguments(args)
    }

    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        self.tool.execute(args, ctx)
    }
}

/// Custom rendering of a tool's calls and results for people (`#[tool(renderer = Type)]`,
/// where `Type: ToolRenderer + Default`). A definition with a renderer delegates its
/// [`ToolDefinition::render_call`] and [`ToolDefinition::render_result`] to it.
///
/// The default methods render the arguments as grey JSON and the result's text (red when it
/// failed); override the ones the tool needs.
pub trait ToolRenderer: Send + Sync + 'static {
    /// How a call with these arguments looks.
    fn render_call(&self, args: &Value) -> Styled {
        Styled::new().push(args.to_string(), Style::fg(Color::Gray))
    }

    /// How a result looks.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        plain_result(result, is_error)
    }
}

/// A result as plain text, red when it failed: the default rendering of both
/// [`ToolDefinition::render_result`] and [`ToolRenderer::render_result`].
fn plain_result(result: &ToolResult, is_error: bool) -> Styled {
    let style = if is_error {
        Style::fg(Color::Red)
    } else {
        Style::PLAIN
    };
    Styled::new().push(result.text_content(), style)
}
