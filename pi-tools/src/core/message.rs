//! A model's tool call and the result message that goes back into the transcript.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::link::ResourceLink;
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

/// The transcript message for one finished call (`role: "toolResult"`): the call it
/// answers, its [`ToolResult`], whether it failed, and when.
///
/// The message is built around the result: `message.content`, `message.details`,
/// `message.usage` and `message.added_tool_names` are the result's (through `Deref`). On the
/// wire the result's fields sit beside the message's own, as they always have:
/// `{"role": "toolResult", "toolCallId", "toolName", "content", "details"?,
/// "structuredContent"?, "usage"?, "addedToolNames"?, "isError", "timestamp"}`; the result's `terminate` is the batch's
/// business (`BatchOutcome::terminate`) and is not written.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name as the model called it.
    pub tool_name: String,
    /// What the call gave: what the model sees, the details, usage and tools to activate.
    pub result: ToolResult,
    /// Whether the call failed.
    pub is_error: bool,
    /// Milliseconds since the Unix epoch when the message was created.
    pub timestamp: u64,
}

impl ToolResultMessage {
    /// The message answering `call` with `result`, stamped now.
    pub fn new(call: &ToolCall, result: ToolResult, is_error: bool) -> Self {
        ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result,
            is_error,
            timestamp: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

impl std::ops::Deref for ToolResultMessage {
    type Target = ToolResult;

    fn deref(&self) -> &ToolResult {
        &self.result
    }
}

impl std::ops::DerefMut for ToolResultMessage {
    fn deref_mut(&mut self) -> &mut ToolResult {
        &mut self.result
    }
}

/// The message as it is written: the result's fields beside the message's own.
#[derive(Serialize)]
#[serde(tag = "role", rename = "toolResult", rename_all = "camelCase")]
struct WireOut<'a> {
    tool_call_id: &'a str,
    tool_name: &'a str,
    content: &'a [ContentBlock],
    #[serde(skip_serializing_if = "Value::is_null")]
    details: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: &'a Option<Value>,
    #[serde(skip_serializing_if = "<[ResourceLink]>::is_empty")]
    links: &'a [ResourceLink],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: &'a Option<Usage>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    added_tool_names: &'a [String],
    is_error: bool,
    timestamp: u64,
}

/// The message as it is read.
#[derive(Deserialize)]
#[serde(tag = "role", rename = "toolResult", rename_all = "camelCase")]
struct WireIn {
    tool_call_id: String,
    tool_name: String,
    #[serde(default)]
    content: Vec<ContentBlock>,
    #[serde(default)]
    details: Value,
    #[serde(default)]
    structured_content: Option<Value>,
    #[serde(default)]
    links: Vec<ResourceLink>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    added_tool_names: Vec<String>,
    is_error: bool,
    timestamp: u64,
}

impl Serialize for ToolResultMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireOut {
            tool_call_id: &self.tool_call_id,
            tool_name: &self.tool_name,
            content: &self.result.content,
            details: &self.result.details,
            structured_content: &self.result.structured_content,
            links: &self.result.links,
            usage: &self.result.usage,
            added_tool_names: &self.result.added_tool_names,
            is_error: self.is_error,
            timestamp: self.timestamp,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolResultMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = WireIn::deserialize(deserializer)?;
        Ok(ToolResultMessage {
            tool_call_id: wire.tool_call_id,
            tool_name: wire.tool_name,
            result: ToolResult {
                content: wire.content,
                details: wire.details,
                structured_content: wire.structured_content,
                links: wire.links,
                usage: wire.usage,
                added_tool_names: wire.added_tool_names,
                terminate: false,
            },
            is_error: wire.is_error,
            timestamp: wire.timestamp,
        })
    }
}
