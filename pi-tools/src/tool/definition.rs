//! The product face of a tool, and the thin projections between it and the kernel's
//! [`AgentTool`].

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use crate::core::{AgentTool, BoxFuture, ExecutionMode, ToolContext, ToolError, ToolResult};
use crate::tool::render::{Color, Style, Styled};

/// Where a tool was declared (for duplicate-name errors and docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// Source file, as `file!()` gives it.
    pub file: &'static str,
    /// Line, as `line!()` gives it.
    pub line: u32,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The typed configuration a tool declares with `config = Type`: its schema, a loader for a
/// `[tool.<name>]` section (as JSON), and the default used when the section is absent.
#[derive(Clone, Copy)]
pub struct ToolConfigSpec {
    /// JSON schema of the configuration type.
    pub schema: fn() -> Value,
    /// Parses a section into the configuration value; the error names the offending key.
    pub load: fn(Value) -> Result<Arc<dyn Any + Send + Sync>, String>,
    /// The configuration used when the section is absent.
    pub default: fn() -> Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for ToolConfigSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolConfigSpec").finish_non_exhaustive()
    }
}

/// A tool's part in the system prompt's rule on exploring files (`#[tool(role = ...)]`).
/// The rule names the tools by these roles, so a user's own search tool takes part in it
/// as the built-in ones do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ToolRole {
    /// No part in the rule.
    #[default]
    General,
    /// Lists, finds or searches files (the built-in grep, find and ls): with a shell
    /// active, the prompt tells the model to prefer these tools over it for exploring.
    Explore,
    /// Runs shell commands (the built-in bash): with it active, the prompt tells the model
    /// how to explore files, with the exploration tools or, without any, with the shell;
    /// its description and the prompt's guidelines say what the sandbox allows.
    Shell,
}

/// A tool as the product sees it: everything the kernel needs plus prompt metadata,
/// renderers, typed configuration and its source location. `#[tool]` implements this for a
/// generated unit struct; [`wrap`] turns it into an [`AgentTool`] for the runner.
pub trait ToolDefinition: Send + Sync + 'static {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;

    /// A short human label.
    fn label(&self) -> &str {
        self.name()
    }

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// One line for the system prompt's "Available tools" section; tools without one are
    /// active but not listed.
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }

    /// Lines for the system prompt's "Guidelines" section.
    fn prompt_guidelines(&self) -> Vec<String> {
        Vec::new()
    }

    /// The canonical JSON schema of the arguments.
    fn parameters(&self) -> &Value;

    /// Whether the tool may run beside others of its batch.
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }

    /// Reshapes raw arguments before validation. The default passes them through.
    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        Ok(args)
    }

    /// Whether arguments may carry properties the schema does not declare (the `#[tool]`
    /// key `accept_unknown_properties`); by default an unknown property is a validation
    /// error naming the closest known one.
    fn accepts_unknown_properties(&self) -> bool {
        false
    }

    /// Runs the tool on validated arguments.
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>>;

    /// The typed configuration this tool accepts, if any.
    fn config(&self) -> Option<ToolConfigSpec> {
        None
    }

    /// Whether the tool only reads (MCP's `readOnlyHint`).
    fn read_only(&self) -> bool {
        false
    }

    /// Whether the tool may destroy data (MCP's `destructiveHint`).
    fn destructive(&self) -> bool {
        false
    }

    /// The MCP server this tool is mounted from (`[mcp.servers.<name>]`), or `None` for a
    /// tool of this program.
    fn mounted_from(&self) -> Option<&str> {
        None
    }

    /// The tool's part in the prompt's rule on exploring files.
    fn role(&self) -> ToolRole {
        ToolRole::General
    }

    /// Example arguments, each a JSON object the tool's schema accepts; the catalog shows
    /// them as example calls. `#[tool(examples = [r#"{...}"#])]` sets them.
    fn examples(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Where the tool was declared.
    fn source_location(&self) -> Option<SourceLocation> {
        None
    }

    /// How a call looks to a person: by default the tool's name and its arguments.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push(self.name(), Style::fg(Color::Cyan).bold());
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
    let config = config.or_else(|| definition.config().map(|spec| (spec.default)()));
    let mode = mode.unwrap_or_else(|| definition.execution_mode());
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

impl AgentTool for Wrapped {
    fn name(&self) -> &str {
        self.definition.name()
    }

    fn label(&self) -> &str {
        self.definition.label()
    }

    fn description(&self) -> &str {
        self.definition.description()
    }

    fn parameters(&self) -> &Value {
        self.definition.parameters()
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        self.definition.prepare_arguments(args)
    }

    fn accepts_unknown_properties(&self) -> bool {
        self.definition.accepts_unknown_properties()
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
/// kernel tool.
pub fn from_agent_tool(tool: Arc<dyn AgentTool>) -> Arc<dyn ToolDefinition> {
    Arc::new(FromAgentTool { tool })
}

struct FromAgentTool {
    tool: Arc<dyn AgentTool>,
}

impl ToolDefinition for FromAgentTool {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn label(&self) -> &str {
        self.tool.label()
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn parameters(&self) -> &Value {
        self.tool.parameters()
    }

    fn execution_mode(&self) -> ExecutionMode {
        self.tool.execution_mode()
    }

    fn prepare_arguments(&self, args: Value) -> Result<Value, ToolError> {
        self.tool.prepare_arguments(args)
    }

    fn accepts_unknown_properties(&self) -> bool {
        self.tool.accepts_unknown_properties()
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
