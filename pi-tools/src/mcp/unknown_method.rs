//! The answers to what the server does not serve: a call of an unknown tool, and a request
//! the protocol layer could not read as one of the methods it knows (a known method with
//! unusable parameters, or an unknown method).

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CustomRequest, ErrorCode};

use super::server::ToolServer;

impl ToolServer {
    /// The protocol error for a call of a tool that is not served (MCP lists unknown tools
    /// among invalid params), naming the tools that are.
    pub(crate) fn unknown_tool(&self, name: &str) -> ErrorData {
        let listed = self.served().listed();
        let names: Vec<&str> = listed.tools.iter().map(|t| t.name()).collect();
        // The configuration's own text (a registered tool that is not active says how to
        // turn it on) comes first, as for a model's batch.
        let message = match self
            .config()
            .unknown_tool
            .as_ref()
            .and_then(|text| text(name))
        {
            Some(text) => text,
            None if names.is_empty() => {
                format!("Unknown tool `{name}`. This server serves no tools.")
            }
            None => format!(
                "Unknown tool `{name}`. The tools are: {}. Call one of them by its exact name.",
                names.join(", ")
            ),
        };
        ErrorData::invalid_params(message, Some(serde_json::json!({ "tools": names })))
    }
}

/// The error for `request`, whose method is `method`.
pub(crate) fn answer(method: &str, request: &CustomRequest) -> ErrorData {
    match method {
        "tools/call" => {
            let problem = match request.params_as::<CallToolRequestParams>() {
                Err(err) => err.to_string(),
                Ok(None) => "there are none".to_owned(),
                Ok(Some(_)) => "they do not fit this method".to_owned(),
            };
            ErrorData::invalid_params(
                format!(
                    "Invalid params for tools/call: {problem}. Send {{\"name\": \"<tool>\", \"arguments\": {{...}}}}, with the arguments as an object."
                ),
                None,
            )
        }
        "initialize" | "ping" | "tools/list" | "logging/setLevel" => ErrorData::invalid_params(
            format!("Invalid params for {method}; see the MCP specification for its parameters."),
            None,
        ),
        _ => ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: {method}. This server offers initialize, ping, logging/setLevel, tools/list, tools/call, resources/list, resources/templates/list and resources/read (and prompts/list and prompts/get when it serves a prompt)."
            ),
            None,
        ),
    }
}
