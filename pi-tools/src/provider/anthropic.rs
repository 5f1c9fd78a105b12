//! Anthropic Messages: a `message` (or its `message_start` … `message_stop` stream) in, one
//! `user` message of `tool_result` blocks out.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::core::{ContentBlock, ToolResultMessage};

use super::format::{StreamState, WireFormat};
use super::keep::{Budget, Keep};
use super::reply::Arguments;
use super::request::{ANTHROPIC_VERSION, DEFAULT_MAX_TOKENS, ProviderRequest, Request};
use super::stream::{Event, index};
use super::walk::{At, Path, kind, take_array};
use super::{Reply, ReplyError};
use crate::dialect::Dialect;

const P: Dialect = Dialect::Anthropic;

/// Blocks of server tools: Anthropic ran them, their results are inside, and they go back
/// into the history as they are.
const SERVER: &[&str] = &["server_tool_use", "web_search_tool_result"];

/// The results as the one `user` message Anthropic wants after a turn with tool calls: a
/// `tool_result` block per call, in the calls' order, with its text and image blocks and
/// `is_error`. An embedded text resource is a text block; audio and a binary resource are a
/// text block saying what was there.
pub fn tool_results(messages: &[ToolResultMessage]) -> Value {
    let blocks: Vec<Value> = messages
        .iter()
        .map(|message| {
            let content: Vec<Value> = message
                .content
                .iter()
                .filter_map(|block| match block {
                    // Anthropic refuses empty text blocks.
                    ContentBlock::Text { text } if text.is_empty() => None,
                    ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
                    ContentBlock::Image { data, mime_type } => Some(json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime_type, "data": data},
                    })),
                    // A text resource as its text; audio and bytes as a line saying what
                    // was there (a tool_result takes text, image, document and
                    // search_result blocks: no audio).
                    other => Some(json!({"type": "text", "text": super::as_text(other)})),
                })
                .collect();
            let mut block = Map::new();
            block.insert("type".into(), json!("tool_result"));
            block.insert("tool_use_id".into(), json!(message.tool_call_id));
            if !content.is_empty() {
                block.insert("content".into(), Value::Array(content));
            }
            block.insert("is_error".into(), json!(message.is_error));
            Value::Object(block)
        })
        .collect();
    json!({"role": "user", "content": blocks})
}

/// What [`read`] uses of a `message`: its content blocks go back into the history as they
/// are (a `tool_use` block with its `input`), so they are kept whole.
const BODY: Keep = Keep::Object(&[
    ("type", Keep::Scalar),
    ("error", Keep::All),
    ("stop_reason", Keep::Scalar),
    ("content", Keep::List(&Keep::WholeObject)),
]);

/// What [`Stream`] uses of an event: the message as [`read`] uses it, blocks whole, deltas.
const EVENT: Keep = Keep::Object(&[
    ("type", Keep::Scalar),
    ("error", Keep::All),
    ("message", BODY),
    ("index", Keep::Scalar),
    ("content_block", Keep::WholeObject),
    (
        "delta",
        Keep::Object(&[
            ("type", Keep::Scalar),
            ("text", Keep::Scalar),
            ("thinking", Keep::Scalar),
            ("signature", Keep::Scalar),
            ("partial_json", Keep::Scalar),
            ("citation", Keep::All),
            ("stop_reason", Keep::Scalar),
        ]),
    ),
]);

/// Reads a `message`: its `content` blocks, moved into the assistant turn.
pub(super) fn read(mut body: Value, reply: &mut Reply, budget: &Budget) -> Result<(), ReplyError> {
    let root = At::root(P, &body);
    if root.str("type")? == Some("error") || root.field("error")?.is_some() {
        let reason = root
            .field("error")?
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        return Err(root.error(format!("the provider answered with an error: {reason}")));
    }
    reply.stop_reason = root.str("stop_reason")?.map(str::to_owned);
    let mut content = Vec::new();
    for (mut block, path) in take_array(P, &mut body, "", "content")? {
        let at = At::new(P, &block, &path);
        match at.required_str("type")? {
            "text" => reply.push_text(at.str("text")?.unwrap_or_default()),
            "thinking" => reply.push_thinking(at.str("thinking")?.unwrap_or_default()),
            "redacted_thinking" => {}
            "tool_use" => {
                let id = at.required_str("id")?.to_owned();
                let name = at.required_str("name")?.to_owned();
                let input_path = Path::key(path.as_str(), "input");
                if name == "bash"
                    && let Some(input) = block.get_mut("input")
                {
                    let sent = input.clone();
                    if super::native::bash_restart(&id, input, reply) {
                        content.push(
                            json!({"type": "tool_use", "id": id, "name": name, "input": sent}),
                        );
                        continue;
                    }
                }
                // The input is moved into the call, not copied.
                let input = Arguments::taken(block.get_mut("input"));
                reply.push_call(Some(&id), &name, input, input_path.as_str(), budget)?;
                // The history needs the input as an object; a call whose input cannot be
                // read is kept with `{}` (its result says why it did not run).
                let input = reply
                    .calls
                    .last()
                    .map_or_else(|| json!({}), |c| c.arguments.clone());
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
                continue;
            }
            server if SERVER.contains(&server) => {}
            other => {
                return Err(at.error_at(
                    "type",
                    format!(
                        "unknown content block type `{other}`; pi-tools reads `text`, `thinking`, `redacted_thinking` and `tool_use` blocks, and keeps those of server tools ({})",
                        SERVER.join(", ")
                    ),
                ));
            }
        }
        content.push(block);
    }
    if !content.is_empty() {
        reply.assistant = vec![json!({"role": "assistant", "content": content})];
    }
    Ok(())
}

/// A `message_start` … `message_stop` stream under reconstruction.
#[derive(Debug, Default)]
pub(super) struct Stream {
    message: Option<Value>,
    /// The blocks by the index the events give: a map, so an index far ahead holds one block
    /// rather than a slot for every index before it.
    blocks: BTreeMap<usize, Block>,
    stop_reason: Option<String>,
    stopped: bool,
}

/// A content block as its events built it.
#[derive(Debug)]
struct Block {
    value: Value,
    /// A `tool_use` block's `input_json_delta`s so far (until its stop event puts them in).
    input: Option<String>,
}

impl Stream {
    fn delta(&mut self, data: &At<'_>) -> Result<(), ReplyError> {
        let at = index(data, "index")?;
        let delta_path = Path::key(data.path(), "delta");
        let delta = At::new(P, data.required("delta")?, &delta_path);
        let Some(Block {
            value: block,
            input,
        }) = self.blocks.get_mut(&at)
        else {
            return Err(data.error_at("index", "no block was started at this index"));
        };
        let (key, text) = match delta.required_str("type")? {
            "text_delta" => ("text", delta.required_text("text")?),
            "thinking_delta" => ("thinking", delta.required_text("thinking")?),
            "signature_delta" => ("signature", delta.required_text("signature")?),
            "input_json_delta" => {
                let part = delta.required_text("partial_json")?;
                match input {
                    Some(input) => input.push_str(part),
                    None => {
                        return Err(
                            delta.error("an `input_json_delta` for a block that is not `tool_use`")
                        );
                    }
                }
                return Ok(());
            }
            "citations_delta" => {
                let citation = delta.required("citation")?.clone();
                if let Some(object) = block.as_object_mut() {
                    let list = object
                        .entry("citations")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Some(list) = list.as_array_mut() {
                        list.push(citation);
                    }
                }
                return Ok(());
            }
            other => {
                return Err(delta.error_at(
                    "type",
                    format!(
                        "unknown delta type `{other}`; pi-tools reads text, thinking, signature, input_json and citations deltas"
                    ),
                ));
            }
        };
        match block.as_object_mut().map(|o| o.entry(key)) {
            Some(serde_json::map::Entry::Occupied(mut e)) => match e.get_mut() {
                Value::String(s) => s.push_str(text),
                other => {
                    return Err(delta.error(format!(
                        "the block's `{key}` is {}, not a string to add to",
                        kind(other)
                    )));
                }
            },
            Some(serde_json::map::Entry::Vacant(e)) => {
                e.insert(json!(text));
            }
            None => {}
        }
        Ok(())
    }
}

impl StreamState for Stream {
    fn event(&mut self, event: &Event<'_>) -> Result<(), ReplyError> {
        let data = &event.data;
        match event.kind()? {
            "message_start" => {
                self.message = Some(data.required("message")?.clone());
            }
            "content_block_start" => {
                let at = index(data, "index")?;
                let block = data.required("content_block")?;
                if !block.is_object() {
                    return Err(data.error_at("content_block", "expected an object"));
                }
                let input = (block.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .then(String::new);
                self.blocks.insert(
                    at,
                    Block {
                        value: block.clone(),
                        input,
                    },
                );
            }
            "content_block_delta" => self.delta(data)?,
            "content_block_stop" => {
                let at = index(data, "index")?;
                let Some(block) = self.blocks.get_mut(&at) else {
                    return Err(data.error_at("index", "no block was started at this index"));
                };
                if let Some(input) = block.input.take()
                    && let Some(object) = block.value.as_object_mut()
                {
                    object.insert("input".into(), json!(input));
                }
            }
            "message_delta" => {
                if let Some(delta) = data.field("delta")?
                    && let Some(reason) = delta.get("stop_reason").and_then(Value::as_str)
                {
                    self.stop_reason = Some(reason.to_owned());
                }
            }
            "message_stop" => self.stopped = true,
            // `ping`, and event types added later: Anthropic's versioning policy asks clients
            // to let unknown events pass (their content is in the blocks).
            _ => {}
        }
        Ok(())
    }

    /// The `message` the events make up.
    fn finish(self: Box<Self>) -> Result<Value, String> {
        if !self.stopped {
            return Err("no `message_stop` event".to_owned());
        }
        let Some(mut message) = self.message else {
            return Err("no `message_start` event".to_owned());
        };
        if let Some(object) = message.as_object_mut() {
            // A tool_use block whose stop event did not come still gets its input.
            let blocks: Vec<Value> = self
                .blocks
                .into_values()
                .map(|Block { mut value, input }| {
                    if let (Some(input), Some(object)) = (input, value.as_object_mut()) {
                        object.insert("input".into(), json!(input));
                    }
                    value
                })
                .collect();
            object.insert("content".into(), Value::Array(blocks));
            if let Some(reason) = self.stop_reason {
                object.insert("stop_reason".into(), json!(reason));
            }
        }
        Ok(message)
    }
}

/// The Messages API.
pub(super) static FORMAT: WireFormat = WireFormat {
    read,
    body: &BODY,
    event: &EVENT,
    stream: || Box::<Stream>::default(),
    results: write_results,
    results_are_one_entry: true,
    request: build_request,
    user_text: super::format::user_text,
};

fn write_results(_reply: &Reply, messages: &[ToolResultMessage]) -> Vec<Value> {
    vec![tool_results(messages)]
}

/// `max_tokens` is required, the system prompt is `system`, and the API's version goes
/// in a header of its own.
fn build_request(request: &Request<'_>) -> ProviderRequest {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model()));
    let max = request.max_tokens().unwrap_or(DEFAULT_MAX_TOKENS);
    body.insert("max_tokens".into(), max.into());
    body.extend(request.system().map(|s| ("system".into(), s.into())));
    body.insert("messages".into(), request.history().to_vec().into());
    body.extend(request.tools().map(|t| ("tools".to_owned(), t)));
    if request.streamed() {
        body.insert("stream".into(), true.into());
    }
    let mut shaped = request.shaped("/v1/messages".to_owned(), "x-api-key", body);
    shaped
        .headers
        .push(("anthropic-version", ANTHROPIC_VERSION.to_owned()));
    shaped
}
