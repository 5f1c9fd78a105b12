//! The forms `#[tool]` accepts, compiled as a user's crate compiles them (its mistakes are the
//! compile-time cases of `tests/ui`). Each tool here has a name of its own, since every tool
//! of this binary is registered together.

use pi_tools::{
    Json, ToolContext, ToolDefinition, ToolError, ToolOutput, ToolRenderer, ToolResult, ToolRole,
    tool,
};
use serde_json::Value;

// The dependency under another name, as a renamed dependency in a user's manifest gives.
extern crate pi_tools as renamed_for_forms;

/// Plain parameters, the context by type, `Option`, a renamed field.
#[tool(label = "Read", snippet = "Read a file", guidelines = ["Prefer read over cat."], read_only)]
pub async fn form_read(
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
async fn form_edit(
    #[args] args: EditArgs,
    #[ctx] context: ToolContext,
) -> Result<ToolResult, ToolError> {
    let _ = context;
    Ok(ToolResult::text(format!(
        "{} -> {}",
        args.old_text, args.new_text
    )))
}

#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
struct ShellConfig {
    timeout_secs: u64,
}

#[derive(Default)]
struct ShellRenderer;

impl ToolRenderer for ShellRenderer {}

/// Configuration, a renderer, a `Display` error, a JSON value.
#[tool(name = "form-run-shell", config = ShellConfig, renderer = ShellRenderer)]
async fn form_shell(
    #[config] config: &ShellConfig,
    command: String,
) -> Result<Vec<String>, std::io::Error> {
    Ok(vec![command, config.timeout_secs.to_string()])
}

/// A static string and `Json`.
#[tool]
async fn form_ping() -> Result<&'static str, ToolError> {
    Ok("pong")
}

/// Json explicitly.
#[tool(description = "Report the version.")]
async fn form_version() -> Result<Json<[u8; 3]>, String> {
    Ok(Json([1, 0, 0]))
}

/// Search the code.
///
/// Later paragraphs reach the model too.
#[renamed_for_forms::tool(crate = "renamed_for_forms", role = explore)]
async fn form_search(
    /// The pattern.
    pattern: String,
    /// Where to search.
    #[default = "."]
    path: String,
    /// At most this many matches.
    #[default = 100]
    limit: u64,
    /// Match case-insensitively.
    #[default = false]
    ignore_case: bool,
) -> Result<String, renamed_for_forms::ToolError> {
    Ok(format!("{pattern} {path} {limit} {ignore_case}"))
}

#[test]
fn every_accepted_form_declares_a_tool() {
    let tools: [&dyn ToolDefinition; 5] = [
        &FormReadTool,
        &FormEditTool,
        &FormRunShellTool,
        &FormPingTool,
        &FormVersionTool,
    ];
    let names: Vec<&str> = tools.iter().map(|t| t.spec().name.as_str()).collect();
    assert_eq!(
        names,
        [
            "form_read",
            "form_edit",
            "form-run-shell",
            "form_ping",
            "form_version"
        ]
    );
    let _ = (
        FormReadArgs {
            path: String::new(),
            start_line: None,
        },
        form_read,
        form_edit,
        form_shell,
        form_ping,
        form_version,
    );
}

#[test]
fn role_defaults_and_a_renamed_crate_reach_the_definition() {
    assert_eq!(FormSearchTool.spec().role, ToolRole::Explore);
    let parameters = &FormSearchTool.spec().parameters;
    assert_eq!(parameters["properties"]["limit"]["default"], 100);
    assert_eq!(parameters["properties"]["path"]["default"], ".");
    assert_eq!(
        FormSearchTool.spec().snippet.as_deref(),
        Some("Search the code.")
    );
    let _ = form_search;
}
