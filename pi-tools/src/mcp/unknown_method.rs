//! The answer to a request the protocol layer could not read as one of the methods it
//! knows: a known method with unusable parameters, or an unknown method.

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CustomRequest, ErrorCode};

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
