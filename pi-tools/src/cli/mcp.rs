//! `pi-tools mcp`: the active tools served over MCP on standard input and output.

use std::process::ExitCode;

use super::{Failure, McpArgs, setup};

pub(super) async fn mcp(args: McpArgs) -> Result<ExitCode, Failure> {
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let toolbox = setup::running_toolbox(args.config.config.as_deref(), &cwd)?;
    // MCP SERVER HAND-OFF: replace this statement with the call to the server, e.g.
    // `crate::mcp::serve_stdio(toolbox).await`, mapping its error to a `Failure`.
    drop(toolbox);
    Err(Failure::general(
        "the MCP server is not built into this binary; use `pi-tools run` to execute tool calls",
    ))
}
