//! Tools declared in the configuration file (`[tool.<name>]` with `command` or `script`),
//! as tools: the spec the file describes (`super::spec`), and a call that runs the command through the
//! environment's shell as bash runs one (sandbox, SSH, timeout, cancellation, output bounds,
//! progress, process group), with no way for a value to become shell code or an option.
//!
//! - A `command` is an argument vector. Each argument is quoted for the shell whole, so a
//!   value is one inert argument whatever it holds (`; rm x`, `$(…)`, backticks, newlines).
//!   A value that starts with `-` is refused unless its parameter says `allow_dash = true`.
//! - A `script` gets each parameter in the environment variable of its name (`"$filter"`),
//!   an array's items one per line; nothing is put into the script's text.
//!
//! [`definitions`] gives a configuration's declared tools; a [`Toolbox`](crate::toolbox::Toolbox)
//! adds them to the registered ones.

mod expand;

use std::sync::Arc;

use serde_json::Value;

use crate::command::{CommandDetails, DEFAULT_MAX_SPILL_BYTES, run_command};
use crate::config::Config;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::declared::spec::{DeclaredAction, DeclaredOutput, DeclaredTool};
use crate::env::{ExecRequest, ToolContextExt};
use crate::tool::{IntoToolResult, ToolDefinition, from_fn};

/// The tools `config` declares, in file order.
pub fn definitions(config: &Config) -> Vec<Arc<dyn ToolDefinition>> {
    config
        .declared
        .iter()
        .map(|tool| definition(tool.clone()))
        .collect()
}

/// The tool a declaration describes: its spec, and calls that run its command.
pub fn definition(tool: DeclaredTool) -> Arc<dyn ToolDefinition> {
    let spec = tool.spec();
    let tool = Arc::new(tool);
    from_fn(spec, move |args, ctx| run(tool.clone(), args, ctx))
}

/// Runs one call of `tool`.
async fn run(
    tool: Arc<DeclaredTool>,
    args: Value,
    ctx: ToolContext,
) -> Result<ToolResult, ToolError> {
    let values = expand::values(&tool, &args)?;
    let mut env: Vec<(String, String)> = tool
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let command = match &tool.action {
        DeclaredAction::Command(template) => {
            let argv = expand::argv(template, &values);
            expand::shell_line(&argv)?
        }
        DeclaredAction::Script(script) => {
            env.extend(expand::environment(&values));
            script.clone()
        }
    };
    let cwd = ctx.env().cwd().to_path_buf();
    let request = ExecRequest {
        command,
        cwd: tool.cwd.as_ref().map_or(cwd.clone(), |own| cwd.join(own)),
        timeout: tool.timeout,
        env,
    };
    let output = run_command(&ctx, request, DEFAULT_MAX_SPILL_BYTES, &tool.success_codes).await?;
    match &tool.output {
        DeclaredOutput::Text => output.into_tool_result(),
        DeclaredOutput::Json { schema } => json_result(&tool.name, output, schema.as_ref()),
    }
}

/// The result of a tool whose command prints one JSON value: that value as the structured
/// result, checked against the output schema when there is one, and its text for the model.
fn json_result(
    name: &str,
    output: crate::tool::ToolOutput<CommandDetails>,
    schema: Option<&Value>,
) -> Result<ToolResult, ToolError> {
    if output
        .details
        .as_ref()
        .is_some_and(|d| d.truncated_by.is_some())
    {
        return Err(ToolError::new(format!(
            "The output of {name} passed the output limit, so it could not be read as one JSON value. Make the command print less (a smaller query, fewer fields)."
        )));
    }
    let mut result = output.into_tool_result()?;
    let text = result.text_content();
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        ToolError::new(format!(
            "The output of {name} is not the JSON value its declaration promises ({e}); it printed: {text}. Fix the command so it prints one JSON value and nothing else."
        ))
    })?;
    if let Some(schema) = schema {
        let validator = jsonschema::validator_for(schema).map_err(|e| {
            ToolError::new(format!(
                "The output schema of {name} does not compile: {e}."
            ))
        })?;
        if let Some(error) = validator.iter_errors(&value).next() {
            let path = error.instance_path().to_string();
            let field = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            return Err(ToolError::new(format!(
                "The output of {name} does not match its output schema at `{field}`: {error}. Fix the command or the declared output_schema."
            )));
        }
    }
    result.structured_content = Some(value);
    Ok(result)
}
