//! The supported forms compile with only `pi-tools` (and serde/schemars for user types).

use pi_tools::{
    Json, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolRenderer, ToolResult, tool,
};
use serde_json::Value;

/// Plain parameters, the context by type, `Option`, a renamed field.
#[tool(label = "Read", snippet = "Read a file", guidelines = ["Prefer read over cat."], read_only)]
pub async fn read(
    ctx: &ToolContext,
    /// The path.
    path: String,
    /// Where to start.
    #[serde(rename = "startLine")]
    start_line: Option<u64>,
) -> Result<ToolOutput<Value>, ToolError> {
    let _ = (ctx.call_id(), start_line);
    Ok(ToolOutput::text(path))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct EditArgs {
    #[serde(rename = "oldText")]
    pub old_text: String,
    #[serde(rename = "newText")]
    pub new_text: String,
}

fn upgrade(args: Value) -> Result<Value, ToolError> {
    Ok(args)
}

/// The `#[args]` form, `prepare`, sequential, destructive.
#[tool(mode = sequential, prepare = upgrade, destructive)]
async fn edit(#[args] args: EditArgs, #[ctx] context: ToolContext) -> Result<ToolResult, ToolError> {
    let _ = context;
    Ok(ToolResult::text(format!("{} -> {}", args.old_text, args.new_text)))
}

#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
struct ShellConfig {
    timeout_secs: u64,
}

#[derive(Default)]
struct ShellRenderer;

impl ToolRenderer for ShellRenderer {}

/// Configuration, a renderer, a `Display` error, a JSON value.
#[tool(name = "run-shell", config = ShellConfig, renderer = ShellRenderer)]
async fn shell(#[config] config: &ShellConfig, command: String) -> Result<Vec<String>, std::io::Error> {
    Ok(vec![command, config.timeout_secs.to_string()])
}

/// A static string and `Json`.
#[tool]
async fn ping() -> Result<&'static str, ToolError> {
    Ok("pong")
}

/// Json explicitly.
#[tool(description = "Report the version.")]
async fn version() -> Result<Json<[u8; 3]>, String> {
    Ok(Json([1, 0, 0]))
}

fn main() {
    let tools: [&dyn ToolDefinition; 5] = [&ReadTool, &EditTool, &RunShellTool, &PingTool, &VersionTool];
    assert_eq!(tools[2].name(), "run-shell");
    let _ = (ReadArgs { path: String::new(), start_line: None }, read, edit, shell, ping, version);
}
