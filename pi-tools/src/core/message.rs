//! A model's tool call and the result message that goes back into the transcript.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::result::{ToolResult, Usage};

/// One tool call emitted by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; echoed in events and the result message.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The raw arguments, as the model sent them.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// A call that arrives already refused (a provider's reply whose arguments could not be
    /// read as a JSON object): the runner does not look the tool up or run anything, and
    /// gives this failed result, with the call's events and message like any other's.
    #[serde(skip)]
    pub refusal: Option<ToolResult>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl ToolCall {
    /// A call with this id, tool name and arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            refusal: None,
        }
    }

    /// A call that is not to run: the runner answers it with `result`, failed.
    pub fn refused(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        result: ToolResult,
    ) -> Self {
        ToolCall {
            refusal: Some(result),
            ..ToolCall::new(id, name, arguments)
        }
    }
}

/// The transcript message for one finished call (`role: "toolResult"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename = "toolResult", rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name as the model called it.
    pub tool_name: String,
    /// What the model sees (empty list when none).
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// UI details; omitted when `Null`.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// Model usage of the tool, when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools to activate for the next batch; omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added_tool_names: Vec<String>,
    /// Whether the call failed.
    pub is_error: bool,
    /// Milliseconds since the Unix epoch when the message was created.
    pub timestamp: u64,
}

impl ToolResultMessage {
    /// The message answering `call` with `result`, stamped now: the result's content,
    /// details, usage and tools to activate, and whether it failed.
    pub fn new(call: &ToolCall, result: ToolResult, is_error: bool) -> Self {
        ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: result.content,
            details: result.details,
            usage: result.usage,
            added_tool_names: result.added_tool_names,
            is_error,
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}
