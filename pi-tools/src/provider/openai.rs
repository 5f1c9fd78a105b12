//! OpenAI Chat Completions: a `ChatCompletion` (or its `chat.completion.chunk` stream) in,
//! `tool` messages out.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::core::ToolResultMessage;

use super::format::{StreamState, WireFormat};
use super::keep::{Budget, Keep};
use super::reply::Arguments;
use super::request::{ProviderRequest, Request};
use super::stream::{Event, index};
use super::walk::{At, Path, kind};
use super::{Reply, ReplyError, data_url, split_content};
use crate::dialect::Dialect;

const P: Dialect = Dialect::OpenAi;

/// The results as Chat Completions messages, in the calls' order: one
/// `{"role": "tool", "tool_call_id", "content"}` per call, its text as `content`. A tool
/// message takes no image, so when results have images, one `user` message follows the tool
/// messages with them (each call's images after a line naming the call), and each tool
/// message that had images says so. Chat Completions has no failure flag: a failed call's
/// content is its error text.
///
/// ```
/// use pi_tools::{ToolCall, ToolResult, ToolResultMessage};
///
/// let call = ToolCall::new("call_1", "read", serde_json::json!({"path": "a.txt"}));
/// let message = ToolResultMessage::new(&call, ToolResult::text("hello"), false);
/// assert_eq!(
///     pi_tools::provider::openai::tool_messages(&[message]),
///     [serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "hello"})]
/// );
/// ```
pub fn tool_messages(messages: &[ToolResultMessage]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut image_parts = Vec::new();
    for message in messages {
        let (mut text, images) = split_content(&message.content);
        if !images.is_empty() {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&if images.len() == 1 {
                "(The image of this result follows in the next user message.)".to_owned()
            } else {
                format!(
                    "(The {} images of this result follow in the next user message.)",
                    images.len()
                )
            });
            image_parts.push(json!({
                "type": "text",
                "text": format!(
                    "Images from the result of call {} ({}):",
                    message.tool_call_id, message.tool_name
                ),
            }));
            for (mime_type, data) in images {
                image_parts.push(json!({
                    "type": "image_url",
                    "image_url": {"url": data_url(mime_type, data)},
                }));
            }
        }
        out.push(json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": text,
        }));
    }
    if !image_parts.is_empty() {
        out.push(json!({"role": "user", "content": image_parts}));
    }
    out
}

/// What [`read`] uses of a `ChatCompletion`: the message is rebuilt for the history from
/// its content (kept whole: its parts go back as they are), refusal and calls.
const BODY: Keep = Keep::Object(&[
    ("error", Keep::All),
    (
        "choices",
        Keep::List(&Keep::Object(&[
            ("finish_reason", Keep::Scalar),
            (
                "message",
                Keep::Object(&[
                    ("content", Keep::List(&Keep::WholeObject)),
                    ("refusal", Keep::Scalar),
                    ("reasoning_content", Keep::Scalar),
                    (
                        "tool_calls",
                        Keep::List(&Keep::Object(&[
                            ("type", Keep::Scalar),
                            ("id", Keep::Scalar),
                            (
                                "function",
                                Keep::Object(&[("name", Keep::Scalar), ("arguments", Keep::All)]),
                            ),
                        ])),
                    ),
                ]),
            ),
        ])),
    ),
]);

/// What [`Stream`] uses of a `chat.completion.chunk`: its deltas.
const EVENT: Keep = Keep::Object(&[
    ("error", Keep::All),
    (
        "choices",
        Keep::List(&Keep::Object(&[
            ("index", Keep::Scalar),
            ("finish_reason", Keep::Scalar),
            (
                "delta",
                Keep::Object(&[
                    ("content", Keep::Scalar),
                    ("refusal", Keep::Scalar),
                    ("reasoning_content", Keep::Scalar),
                    (
                        "tool_calls",
                        Keep::List(&Keep::Object(&[
                            ("index", Keep::Scalar),
                            ("id", Keep::Scalar),
                            ("type", Keep::Scalar),
                            (
                                "function",
                                Keep::Object(&[
                                    ("name", Keep::Scalar),
                                    ("arguments", Keep::Scalar),
                                ]),
                            ),
                        ])),
                    ),
                ]),
            ),
        ])),
    ),
]);

/// Reads a `ChatCompletion`: the first (only) choice's message.
pub(super) fn read(mut body: Value, reply: &mut Reply, budget: &Budget) -> Result<(), ReplyError> {
    let root = At::reply_root(P, &body)?;
    let mut choices = root.array("choices")?;
    let count = choices.len();
    let Some((choice, choice_path)) = choices.next() else {
        return Err(root.error_at("choices", "no choice: the reply has no message to read"));
    };
    if count > 1 {
        return Err(root.error_at(
            "choices",
            format!("{count} choices: only one can continue a conversation; ask for one (`n` = 1)"),
        ));
    }
    let choice = At::new(P, choice, &choice_path);
    reply.stop_reason = choice.str("finish_reason")?.map(str::to_owned);
    let message_path = Path::key(choice.path(), "message");
    let message = At::new(P, choice.required("message")?, &message_path);
    let mut assistant = Map::new();
    assistant.insert("role".into(), json!("assistant"));
    let content = message.field("content")?;
    match content {
        None => {}
        Some(Value::String(text)) => reply.push_text(text),
        Some(Value::Array(_)) => {
            for (part, path) in message.array("content")? {
                let part = At::new(P, part, &path);
                match part.required_str("type")? {
                    "text" => reply.push_text(part.str("text")?.unwrap_or_default()),
                    other => {
                        return Err(part.error_at(
                            "type",
                            format!(
                                "unknown content part type `{other}`; pi-tools reads `text` parts"
                            ),
                        ));
                    }
                }
            }
        }
        Some(other) => {
            return Err(message.error_at(
                "content",
                format!("expected a string or null, found {}", kind(other)),
            ));
        }
    }
    let has_content = content.is_some();
    let refusal = message.str("refusal")?.map(str::to_owned);
    if let Some(refusal) = &refusal {
        reply.push_text(refusal);
    }
    // OpenAI-compatible servers for reasoning models (DeepSeek, vLLM) put the thinking here;
    // it is not sent back.
    if let Some(thinking) = message.str("reasoning_content")? {
        reply.push_thinking(thinking);
    }
    let mut wire_calls = Vec::new();
    for (call, path) in message.array("tool_calls")? {
        let call = At::new(P, call, &path);
        if let Some(kind) = call.str("type")?
            && kind != "function"
        {
            return Err(call.error_at(
                "type",
                format!("unknown tool call type `{kind}`; pi-tools runs `function` calls"),
            ));
        }
        let id = call.required_str("id")?;
        let function_path = Path::key(call.path(), "function");
        let function = At::new(P, call.required("function")?, &function_path);
        let name = function.required_str("name")?;
        let arguments_path = Path::key(function.path(), "arguments");
        let (arguments, text) = match function.field("arguments")? {
            None => (Arguments::Text(""), "{}".to_owned()),
            Some(Value::String(text)) => (Arguments::Text(text), text.clone()),
            // Some compatible servers send the object itself.
            Some(value) => (Arguments::Value(value), value.to_string()),
        };
        reply.push_call(Some(id), name, arguments, arguments_path.as_str(), budget)?;
        wire_calls.push(json!({
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": text},
        }));
    }
    // The content goes back as it came: moved into the assistant turn, not copied.
    drop(choices);
    let content = body
        .pointer_mut("/choices/0/message/content")
        .filter(|_| has_content)
        .map_or(Value::Null, Value::take);
    assistant.insert("content".into(), content);
    if let Some(refusal) = refusal {
        assistant.insert("refusal".into(), json!(refusal));
    }
    if !wire_calls.is_empty() {
        assistant.insert("tool_calls".into(), Value::Array(wire_calls));
    }
    reply.assistant = vec![Value::Object(assistant)];
    Ok(())
}

/// A `chat.completion.chunk` stream under reconstruction.
#[derive(Debug, Default)]
pub(super) struct Stream {
    content: Option<String>,
    refusal: Option<String>,
    reasoning: Option<String>,
    /// By the index the chunks give: a map, so an index far ahead holds one call rather than
    /// a slot for every index before it; gaps close up in the reply.
    calls: BTreeMap<usize, StreamedCall>,
    finish_reason: Option<String>,
    done: bool,
}

#[derive(Debug, Default)]
struct StreamedCall {
    id: Option<String>,
    kind: Option<String>,
    name: String,
    arguments: String,
}

impl StreamState for Stream {
    fn marker(&mut self, data: &str) -> bool {
        self.done |= data == "[DONE]";
        data == "[DONE]"
    }

    fn event(&mut self, event: &Event<'_>) -> Result<(), ReplyError> {
        for (choice, path) in event.data.array("choices")? {
            let choice = At::new(P, choice, &path);
            if choice.field("index")?.is_some() && index(&choice, "index")? != 0 {
                return Err(choice.error_at(
                    "index",
                    "a second choice: only one can continue a conversation; ask for one (`n` = 1)",
                ));
            }
            if let Some(reason) = choice.str("finish_reason")? {
                self.finish_reason = Some(reason.to_owned());
            }
            let Some(delta) = choice.field("delta")? else {
                continue;
            };
            let delta_path = Path::key(choice.path(), "delta");
            let delta = At::new(P, delta, &delta_path);
            for (key, slot) in [
                ("content", &mut self.content),
                ("refusal", &mut self.refusal),
                ("reasoning_content", &mut self.reasoning),
            ] {
                if let Some(text) = delta.str(key)? {
                    slot.get_or_insert_with(String::new).push_str(text);
                }
            }
            for (call, path) in delta.array("tool_calls")? {
                let call = At::new(P, call, &path);
                let at = index(&call, "index")?;
                let slot = self.calls.entry(at).or_default();
                if let Some(id) = call.str("id")? {
                    slot.id = Some(id.to_owned());
                }
                if let Some(kind) = call.str("type")? {
                    slot.kind = Some(kind.to_owned());
                }
                if let Some(function) = call.field("function")? {
                    let function_path = Path::key(call.path(), "function");
                    let function = At::new(P, function, &function_path);
                    if let Some(name) = function.str("name")? {
                        slot.name.push_str(name);
                    }
                    if let Some(arguments) = function.str("arguments")? {
                        slot.arguments.push_str(arguments);
                    }
                }
            }
        }
        Ok(())
    }

    /// The `ChatCompletion` the chunks make up.
    fn finish(self: Box<Self>) -> Result<Value, String> {
        let Some(finish_reason) = self.finish_reason else {
            return Err(if self.done {
                "`data: [DONE]` came before any chunk had a `finish_reason`".to_owned()
            } else {
                "no chunk has a `finish_reason`".to_owned()
            });
        };
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert("content".into(), json!(self.content));
        if let Some(refusal) = self.refusal {
            message.insert("refusal".into(), json!(refusal));
        }
        if let Some(reasoning) = self.reasoning {
            message.insert("reasoning_content".into(), json!(reasoning));
        }
        if !self.calls.is_empty() {
            let calls = self
                .calls
                .into_values()
                .map(|c| {
                    let mut call = Map::new();
                    if let Some(id) = c.id {
                        call.insert("id".into(), json!(id));
                    }
                    if let Some(kind) = c.kind {
                        call.insert("type".into(), json!(kind));
                    }
                    call.insert(
                        "function".into(),
                        json!({"name": c.name, "arguments": c.arguments}),
                    );
                    Value::Object(call)
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        Ok(json!({
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        }))
    }
}

/// Chat Completions, strict or not (the dialect tells the reply whether it is).
pub(super) static FORMAT: WireFormat = WireFormat {
    read,
    body: &BODY,
    event: &EVENT,
    stream: || Box::<Stream>::default(),
    results: write_results,
    results_are_one_entry: false,
    request: build_request,
    user_text: super::format::user_text,
};

fn write_results(_reply: &Reply, messages: &[ToolResultMessage]) -> Vec<Value> {
    tool_messages(messages)
}

/// The system prompt is the first message, the budget `max_completion_tokens`.
fn build_request(request: &Request<'_>) -> ProviderRequest {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model()));
    let mut messages: Vec<Value> = request
        .system()
        .map(|s| json!({"role": "system", "content": s}))
        .into_iter()
        .collect();
    messages.extend(request.history().iter().cloned());
    body.insert("messages".into(), messages.into());
    body.extend(request.tools().map(|t| ("tools".to_owned(), t)));
    body.extend(
        request
            .max_tokens()
            .map(|n| ("max_completion_tokens".into(), n.into())),
    );
    if request.streamed() {
        body.insert("stream".into(), true.into());
    }
    request.shaped("/chat/completions".to_owned(), "Authorization", body)
}
