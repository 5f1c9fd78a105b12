//! `pi-tools mcp`: the active tools served over MCP on standard input and output.

use std::process::ExitCode;

use crate::mcp::{McpTool, McpTools, init_stderr_logging, serve_stdio};

use crate::config::ConfigSource;

use super::{Failure, McpArgs, setup};

pub(super) async fn mcp(args: McpArgs, config: &ConfigSource) -> Result<ExitCode, Failure> {
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let toolbox = setup::running_toolbox(config, &cwd)?;
    init_stderr_logging();
    // The toolbox's lean tools carry the configured mode overrides and tool configs; the
    // definitions beside them give MCP its titles and hints.
    let mut tools = McpTools::new();
    for (definition, tool) in toolbox.active().iter().zip(toolbox.agent_tools()) {
        tools.push(McpTool::with_definition(tool, definition.as_ref()));
    }
    let runner_config = toolbox.runner_config();
    let env = runner_config
        .extensions
        .get::<std::sync::Arc<dyn crate::env::ExecutionEnv>>()
        .cloned();
    let served = serve_stdio(tools, runner_config).await;
    // Calls in flight were cancelled with their processes; background jobs that outlived
    // their calls must not outlive the server either.
    if let Some(env) = env {
        env.end_session();
    }
    served.map_err(|e| Failure::general(format!("the MCP session failed: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
