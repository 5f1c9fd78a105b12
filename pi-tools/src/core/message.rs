//! A model's tool call and the result message that goes back into the transcript.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::result::Usage;

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
