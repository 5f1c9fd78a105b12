//! The MCP server in process: the protocol over a pipe, and robustness against bad input.

mod mcp_era;
mod mcp_http_param_headers;
mod mcp_http_task_support;
mod mcp_http_tool_asks;
mod mcp_input;
mod mcp_policy;
mod mcp_prompt_asks;
mod mcp_server;
mod mcp_tasks_2025;
mod mcp_tool_asks;
mod mcp_typed;
