//! OpenAI Responses: a `response` (or its `response.*` event stream) in,
//! `function_call_output` items out.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::core::ToolResultMessage;

use super::format::{StreamState, WireFormat};
use super::keep::{Budget, Keep};
use super::reply::Arguments;
use super::request::{ProviderRequest, Request};
use super::stream::{Event, index};
use super::walk::{At, Path, kind, take_array};
use super::{Reply, ReplyError, data_url, split_content};
use crate::dialect::Dialect;

const P: Dialect = Dialect::OpenAiResponses;

/// Output items that hosted tools produce: the provider ran them, their results are inside,
/// and they go back into the history as they are.
const HOSTED: &[&str] = &[
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
];

/// The results as Responses input items, in the calls' order: one
/// `{"type": "function_call_output", "call_id", "output"}` each. `output` is the text, or,
/// when the result has images, a list of `input_text` and `input_image` parts. Responses
/// has no failure flag: a failed call's output is its error text.
pub fn function_call_outputs(messages: &[ToolResultMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|message| {
            let (text, images) = split_content(&message.content);
            let output = if images.is_empty() {
                json!(text)
            } else {
                let mut parts = Vec::with_capacity(images.len() + 1);
                if !text.is_empty() {
                    parts.push(json!({"type": "input_text", "text": text}));
                }
                for (mime_type, data) in images {
                    parts.push(json!({
                        "type": "input_image",
                        "image_url": data_url(mime_type, data),
                    }));
                }
                Value::Array(parts)
            };
            json!({
                "type": "function_call_output",
                "call_id": message.tool_call_id,
                "output": output,
            })
        })
        .collect()
}

/// What [`read`] uses of a `response`: its output items go back into the history as they
/// are, so they are kept whole.
const BODY: Keep = Keep::Object(&[
    ("error", Keep::All),
    ("status", Keep::Scalar),
    (
        "incomplete_details",
        Keep::Object(&[("reason", Keep::Scalar)]),
    ),
    ("output", Keep::List(&Keep::WholeObject)),
]);

/// What [`Stream`] uses of a `response.*` event: items and parts whole (they make the
/// output items), deltas, and the final `response` as [`read`] uses it.
const EVENT: Keep = Keep::Object(&[
    ("error", Keep::All),
    ("type", Keep::Scalar),
    ("output_index", Keep::Scalar),
    ("content_index", Keep::Scalar),
    ("summary_index", Keep::Scalar),
    ("item", Keep::WholeObject),
    ("part", Keep::WholeObject),
    ("delta", Keep::Scalar),
    ("response", BODY),
    ("message", Keep::Scalar),
]);

/// Reads a `response` object: its `output` items.
pub(super) fn read(mut body: Value, reply: &mut Reply, budget: &Budget) -> Result<(), ReplyError> {
    let root = At::reply_root(P, &body)?;
    let status = root.str("status")?;
    if status == Some("failed") {
        return Err(root.error_at("status", "the response failed"));
    }
    reply.stop_reason = match (status, root.field("incomplete_details")?) {
        (Some("incomplete"), Some(details)) => Some(format!(
            "incomplete: {}",
            details
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("no reason given")
        )),
        (status, _) => status.map(str::to_owned),
    };
    // The items are moved into the assistant turn, not copied.
    for (item, path) in take_array(P, &mut body, "", "output")? {
        let at = At::new(P, &item, &path);
        match at.required_str("type")? {
            "message" => {
                for (part, path) in at.array("content")? {
                    let part = At::new(P, part, &path);
                    match part.required_str("type")? {
                        "output_text" => reply.push_text(part.str("text")?.unwrap_or_default()),
                        "refusal" => reply.push_text(part.str("refusal")?.unwrap_or_default()),
                        other => {
                            return Err(part.error_at(
                                "type",
                                format!(
                                    "unknown content part type `{other}`; pi-tools reads `output_text` and `refusal`"
                                ),
                            ));
                        }
                    }
                }
            }
            "reasoning" => {
                for key in ["summary", "content"] {
                    for (part, path) in at.array(key)? {
                        let part = At::new(P, part, &path);
                        if let Some(text) = part.str("text")? {
                            reply.push_thinking(text);
                        }
                    }
                }
            }
            "function_call" => {
                let id = at.required_str("call_id")?;
                let name = at.required_str("name")?;
                if let Some(other) = at.field("arguments")?.filter(|v| !v.is_string()) {
                    return Err(at.error_at(
                        "arguments",
                        format!("expected a JSON string, found {}", kind(other)),
                    ));
                }
                let arguments = match at.str("arguments")? {
                    Some(text) => Arguments::Text(text),
                    None => Arguments::Text(""),
                };
                let arguments_path = Path::key(path.as_str(), "arguments");
                reply.push_call(Some(id), name, arguments, arguments_path.as_str(), budget)?;
            }
            "apply_patch_call" => super::native::apply_patch_call(&at, reply)?,
            "shell_call" => super::native::shell_call(&at, reply)?,
            hosted if HOSTED.contains(&hosted) => {}
            other => {
                return Err(at.error_at(
                    "type",
                    format!(
                        "unknown output item type `{other}`; pi-tools reads `message`, `reasoning`, `function_call`, `apply_patch_call` and `shell_call` items, and keeps those of hosted tools ({})",
                        HOSTED.join(", ")
                    ),
                ));
            }
        }
        reply.assistant.push(item);
    }
    Ok(())
}

/// A `response.*` event stream under reconstruction. Items are built from
/// `response.output_item.added` and the deltas, replaced by `response.output_item.done`'s
/// complete item, and in the end by `response.completed`'s output when it has one. Events
/// about parts of an item that its done event carries anyway are not needed and pass.
///
/// Items and their parts are kept by the index the events give, in maps rather than lists:
/// an index far ahead (4095 while nothing came before) holds one entry, not a slot for
/// every index before it, so memory follows the events that came (a list per index let a
/// 1 MB stream take GBs). Gaps close up when the reply is put together.
#[derive(Debug, Default)]
pub(super) struct Stream {
    items: BTreeMap<usize, Value>,
    /// The parts the events announce or fill, by (item, list, index in the list): merged into
    /// the items' `content` and `summary` lists by [`Stream::finish`].
    parts: BTreeMap<(usize, &'static str, usize), Value>,
    /// The final `response` of `response.completed` / `response.incomplete`.
    last: Option<Value>,
}

impl Stream {
    /// The output item at `at`, made (empty) if the stream has not announced it.
    fn item(&mut self, at: usize) -> &mut Value {
        self.items
            .entry(at)
            .or_insert_with(|| Value::Object(Map::new()))
    }

    /// The element `data[index_key]` of the list `key` of the item `data.output_index`: the
    /// item's own when its list has it, else one kept aside (made empty if the stream has not
    /// announced it) until [`Stream::finish`]; the item is made too.
    fn part(
        &mut self,
        data: &At<'_>,
        key: &'static str,
        index_key: &str,
    ) -> Result<&mut Value, ReplyError> {
        let item = index(data, "output_index")?;
        let at = index(data, index_key)?;
        let slot = self
            .items
            .entry(item)
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(object) = slot.as_object_mut() else {
            return Err(data.error("the item this event is about is not an object"));
        };
        match object.get_mut(key) {
            Some(Value::Array(list)) if at < list.len() => return Ok(&mut list[at]),
            Some(Value::Array(_)) | None => {}
            Some(_) => return Err(data.error(format!("the item's `{key}` is not a list"))),
        }
        Ok(self
            .parts
            .entry((item, key, at))
            .or_insert_with(|| Value::Object(Map::new())))
    }
}

impl StreamState for Stream {
    fn event(&mut self, event: &Event<'_>) -> Result<(), ReplyError> {
        let data = &event.data;
        match event.kind()? {
            "response.output_item.added" | "response.output_item.done" => {
                let at = index(data, "output_index")?;
                let item = data.required("item")?;
                if !item.is_object() {
                    return Err(data.error_at("item", "expected an object"));
                }
                // The item as it is now is complete: parts announced before are in it.
                self.parts.retain(|(of, _, _), _| *of != at);
                self.items.insert(at, item.clone());
            }
            "response.content_part.added" => {
                let part = data.required("part")?.clone();
                self.part(data, "content", "content_index")?
                    .clone_from(&part);
            }
            "response.reasoning_summary_part.added" => {
                let part = data.required("part")?.clone();
                self.part(data, "summary", "summary_index")?
                    .clone_from(&part);
            }
            "response.output_text.delta" => {
                let delta = data.required_text("delta")?;
                append(self.part(data, "content", "content_index")?, "text", delta);
            }
            "response.refusal.delta" => {
                let delta = data.required_text("delta")?;
                append(
                    self.part(data, "content", "content_index")?,
                    "refusal",
                    delta,
                );
            }
            "response.reasoning_summary_text.delta" => {
                let delta = data.required_text("delta")?;
                append(self.part(data, "summary", "summary_index")?, "text", delta);
            }
            "response.function_call_arguments.delta" => {
                let delta = data.required_text("delta")?;
                let at = index(data, "output_index")?;
                append(self.item(at), "arguments", delta);
            }
            "response.completed" | "response.incomplete" => {
                self.last = Some(data.required("response")?.clone());
            }
            "response.failed" => {
                let reason = data
                    .field("response")?
                    .and_then(|r| r.get("error"))
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                return Err(data.error(format!("the response failed: {reason}")));
            }
            "error" => {
                let reason = data.str("message")?.unwrap_or("no reason given");
                return Err(data.error(format!("the provider reports an error: {reason}")));
            }
            _ => {}
        }
        Ok(())
    }

    /// The `response` the events make up.
    fn finish(self: Box<Self>) -> Result<Value, String> {
        let Some(mut last) = self.last else {
            return Err("no `response.completed` event".to_owned());
        };
        let has_output = last
            .get("output")
            .and_then(Value::as_array)
            .is_some_and(|o| !o.is_empty());
        if !has_output && let Some(object) = last.as_object_mut() {
            let mut items = self.items;
            for ((item, key, _), part) in self.parts {
                let Some(Value::Object(item)) = items.get_mut(&item) else {
                    continue;
                };
                let list = item.entry(key).or_insert_with(|| Value::Array(Vec::new()));
                // `part` made sure of the list and kept aside only what is past its end; a
                // later item at this index dropped the parts before it. Parts come in index
                // order, so gaps close up.
                if let Value::Array(list) = list {
                    list.push(part);
                }
            }
            object.insert("output".into(), Value::Array(items.into_values().collect()));
        }
        Ok(last)
    }
}

/// Appends `text` to the string field `key` of `target` (made when absent).
fn append(target: &mut Value, key: &str, text: &str) {
    if let Some(object) = target.as_object_mut() {
        match object.get_mut(key) {
            Some(Value::String(s)) => s.push_str(text),
            _ => {
                object.insert(key.to_owned(), json!(text));
            }
        }
    }
}

/// The Responses API.
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

/// A call that came as an `apply_patch_call` or a `shell_call` is answered in that
/// shape's own output item; the others with `function_call_output`s.
fn write_results(reply: &Reply, messages: &[ToolResultMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|message| {
            super::native::responses_output(reply, message, messages).unwrap_or_else(|| {
                function_call_outputs(std::slice::from_ref(message))
                    .pop()
                    .unwrap_or_default()
            })
        })
        .collect()
}

/// The system prompt is `instructions`, the history `input`, the budget
/// `max_output_tokens`.
fn build_request(request: &Request<'_>) -> ProviderRequest {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model()));
    body.extend(request.system().map(|s| ("instructions".into(), s.into())));
    body.insert("input".into(), request.history().to_vec().into());
    body.extend(request.tools().map(|t| ("tools".to_owned(), t)));
    body.extend(
        request
            .max_tokens()
            .map(|n| ("max_output_tokens".into(), n.into())),
    );
    if request.streamed() {
        body.insert("stream".into(), true.into());
    }
    request.shaped("/responses".to_owned(), "Authorization", body)
}
