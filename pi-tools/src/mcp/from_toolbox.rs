//! A [`Toolbox`] as an MCP server serves it: the product's tools, prompt and guidelines
//! read from the toolbox's public face, so the toolbox knows nothing of MCP.

use std::sync::Arc;

use super::tools::{McpPrompt, McpTool, McpTools};
use crate::dialect::Dialect;
use crate::toolbox::Toolbox;

impl From<&Toolbox> for McpTools {
    /// The active tools as an MCP server serves them, in one call: each with its
    /// configuration and mode override, MCP's title and hints from its definition, the
    /// system prompt's guidelines as the server's instructions, and the whole system prompt
    /// as the prompt `system_prompt` (what `pi-tools mcp` serves). Name the server with
    /// [`McpTools::with_server_info`].
    fn from(toolbox: &Toolbox) -> McpTools {
        // The lean tools carry the configured mode overrides and tool configs; the
        // definitions beside them give MCP its titles and hints.
        let mut tools = McpTools::new();
        // MCP has no native shapes: the tools that serve them are not listed.
        let offered = toolbox.offered(Dialect::Mcp);
        for (definition, tool) in toolbox.active().iter().zip(toolbox.agent_tools()) {
            if offered.iter().any(|o| Arc::ptr_eq(o, definition)) {
                tools.push(McpTool::with_definition(tool, definition.as_ref()));
            }
        }
        let sections = toolbox.prompt_for(Dialect::Mcp);
        tools = tools.with_prompt(McpPrompt {
            name: "system_prompt".to_owned(),
            description: "The system prompt for these tools: the available tools and the \
                          guidelines for using them."
                .to_owned(),
            text: sections.to_string(),
        });
        let guidelines = sections.guidelines;
        if guidelines.is_empty() {
            return tools;
        }
        let text: Vec<String> = guidelines.iter().map(|g| format!("- {g}")).collect();
        tools.with_instructions(format!("Guidelines:\n{}", text.join("\n")))
    }
}
