//! Gemini `generateContent`: a `GenerateContentResponse` (or the chunks of
//! `streamGenerateContent?alt=sse`) in, one content of `functionResponse` parts out.

use serde_json::{Map, Value, json};

use crate::core::ToolResultMessage;

use super::format::{StreamState, WireFormat};
use super::keep::{Budget, Keep};
use super::reply::Arguments;
use super::request::{ProviderRequest, Request};
use super::stream::Event;
use super::walk::{At, Path, take_array};
use super::{Reply, ReplyError, split_content};
use crate::dialect::Dialect;

const P: Dialect = Dialect::Gemini;

/// Parts the model produced that are not text or calls (code it ran and its result, inline
/// or file data): kept in the history as they are.
const KEPT: &[&str] = &[
    "executableCode",
    "codeExecutionResult",
    "inlineData",
    "fileData",
];

/// The results as the one content Gemini wants after a turn with function calls: a
/// `functionResponse` part per call, in the calls' order, with the call's `name`, its `id`
/// when the model sent one, and `response` `{"output": text}`, or `{"error": text}` for a
/// failed call. Images go in the part's `parts` as `inlineData`.
pub fn function_responses(reply: &Reply, messages: &[ToolResultMessage]) -> Value {
    let parts: Vec<Value> = messages
        .iter()
        .map(|message| {
            let (text, images) = split_content(&message.content);
            let mut response = Map::new();
            response.insert("name".into(), json!(message.tool_name));
            let index = reply
                .calls
                .iter()
                .position(|c| c.id == message.tool_call_id);
            if index.is_none_or(|i| reply.sent_id(i)) {
                response.insert("id".into(), json!(message.tool_call_id));
            }
            let key = if message.is_error { "error" } else { "output" };
            response.insert("response".into(), json!({ key: text }));
            if !images.is_empty() {
                let media: Vec<Value> = images
                    .into_iter()
                    .map(|(mime_type, data)| {
                        json!({"inlineData": {"mimeType": mime_type, "data": data}})
                    })
                    .collect();
                response.insert("parts".into(), Value::Array(media));
            }
            json!({"functionResponse": response})
        })
        .collect();
    json!({"role": "user", "parts": parts})
}

/// What [`read`] uses of a `GenerateContentResponse` (and of each chunk of its stream, one
/// too): the candidates' parts go back into the history as they are, so they are kept whole.
const BODY: Keep = Keep::Object(&[
    ("error", Keep::All),
    (
        "promptFeedback",
        Keep::Object(&[("blockReason", Keep::Scalar)]),
    ),
    (
        "candidates",
        Keep::List(&Keep::Object(&[
            ("finishReason", Keep::Scalar),
            (
                "content",
                Keep::Object(&[("parts", Keep::List(&Keep::WholeObject))]),
            ),
        ])),
    ),
]);

/// Reads a `GenerateContentResponse`: the first candidate's content, its parts moved into
/// the assistant turn.
pub(super) fn read(mut body: Value, reply: &mut Reply, budget: &Budget) -> Result<(), ReplyError> {
    let root = At::reply_root(P, &body)?;
    let Some((candidate, candidate_path)) = root.array("candidates")?.next() else {
        let blocked = root
            .field("promptFeedback")?
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str);
        return Err(match blocked {
            Some(reason) => root.error_at(
                "promptFeedback.blockReason",
                format!("the prompt was blocked ({reason}); change the request"),
            ),
            None => root.error_at("candidates", "no candidate: the reply has nothing to read"),
        });
    };
    let candidate = At::new(P, candidate, &candidate_path);
    reply.stop_reason = candidate.str("finishReason")?.map(str::to_owned);
    if candidate.field("content")?.is_none() {
        return Ok(());
    }
    let content_path = Path::key(candidate.path(), "content");
    let Some(content) = body
        .get_mut("candidates")
        .and_then(|c| c.get_mut(0))
        .and_then(|c| c.get_mut("content"))
    else {
        return Ok(());
    };
    let parts = take_array(P, content, content_path.as_str(), "parts")?;
    let mut kept = Vec::with_capacity(parts.len());
    for (mut part, path) in parts {
        let at = At::new(P, &part, &path);
        let fields = at.object()?;
        if let Some(call) = at.field("functionCall")? {
            let call_path = Path::key(at.path(), "functionCall");
            let call = At::new(P, call, &call_path);
            let name = call.required_str("name")?.to_owned();
            let id = call
                .str("id")?
                .filter(|id| !id.is_empty())
                .map(str::to_owned);
            let args_path = Path::key(call_path.as_str(), "args");
            // The args are moved into the call, and a copy of the call's put back for the
            // history. A string is not what Gemini sends; it reads as a JSON text, as for the
            // others.
            let args = part
                .get_mut("functionCall")
                .and_then(|call| call.get_mut("args"));
            let moved = args.as_ref().is_some_and(|args| args.is_object());
            reply.push_call(
                id.as_deref(),
                &name,
                Arguments::taken(args),
                args_path.as_str(),
                budget,
            )?;
            if moved
                && let (Some(args), Some(call)) = (
                    part.get_mut("functionCall").and_then(|c| c.get_mut("args")),
                    reply.calls.last(),
                )
            {
                args.clone_from(&call.arguments);
            }
        } else if let Some(text) = at.str("text")? {
            if at.field("thought")? == Some(&Value::Bool(true)) {
                reply.push_thinking(text);
            } else {
                reply.push_text(text);
            }
        } else {
            let known = KEPT.iter().any(|k| fields.contains_key(*k));
            let signature_only = fields.len() == 1 && fields.contains_key("thoughtSignature");
            if !(known || signature_only) {
                let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
                return Err(at.error(format!(
                    "a part with none of `text`, `functionCall` or {} (it has {}); pi-tools cannot tell what it is",
                    KEPT.join(", "),
                    if keys.is_empty() {
                        "no field".to_owned()
                    } else {
                        keys.join(", ")
                    }
                )));
            }
        }
        kept.push(part);
    }
    if !kept.is_empty() {
        reply.assistant = vec![json!({"role": "model", "parts": kept})];
    }
    Ok(())
}

/// The chunks of `streamGenerateContent?alt=sse` under reconstruction: each is a whole
/// `GenerateContentResponse` carrying the next parts. Text parts in a row are joined (unless
/// a part carries a thought signature, which stays on its own part).
#[derive(Debug, Default)]
pub(super) struct Stream {
    parts: Vec<Value>,
    finish_reason: Option<String>,
    prompt_feedback: Option<Value>,
    chunks: usize,
}

impl Stream {
    fn push(&mut self, part: &Value) {
        if let (Some(last), Some(text)) = (self.parts.last_mut(), plain_text(part))
            && plain_text(last).is_some()
            && thought(last) == thought(part)
            && let Some(Value::String(previous)) = last.get_mut("text")
        {
            // In place: a copy of the text so far for every chunk would take time (and
            // passing memory) in the square of the text's length.
            previous.push_str(text);
            return;
        }
        self.parts.push(part.clone());
    }
}

impl StreamState for Stream {
    fn event(&mut self, event: &Event<'_>) -> Result<(), ReplyError> {
        let data = &event.data;
        self.chunks += 1;
        if let Some(feedback) = data.field("promptFeedback")? {
            self.prompt_feedback = Some(feedback.clone());
        }
        let Some((candidate, path)) = data.array("candidates")?.next() else {
            return Ok(());
        };
        let candidate = At::new(P, candidate, &path);
        if let Some(reason) = candidate.str("finishReason")? {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(content) = candidate.field("content")? else {
            return Ok(());
        };
        let content_path = Path::key(candidate.path(), "content");
        let content = At::new(P, content, &content_path);
        for (part, path) in content.array("parts")? {
            let at = At::new(P, part, &path);
            at.object()?;
            self.push(part);
        }
        Ok(())
    }

    /// The `GenerateContentResponse` the chunks make up.
    fn finish(self: Box<Self>) -> Result<Value, String> {
        let Some(finish_reason) = self.finish_reason else {
            return Err(if self.chunks == 0 {
                "no chunk".to_owned()
            } else {
                "no chunk has a `finishReason`".to_owned()
            });
        };
        let mut body = json!({
            "candidates": [{
                "content": {"role": "model", "parts": self.parts},
                "finishReason": finish_reason,
            }],
        });
        if let Some(feedback) = self.prompt_feedback {
            body["promptFeedback"] = feedback;
        }
        Ok(body)
    }
}

/// The text of a part that is only text (and maybe `thought`), with no signature.
fn plain_text(part: &Value) -> Option<&str> {
    let object = part.as_object()?;
    let only_text = object.keys().all(|k| k == "text" || k == "thought");
    if only_text {
        object.get("text").and_then(Value::as_str)
    } else {
        None
    }
}

fn thought(part: &Value) -> bool {
    part.get("thought") == Some(&Value::Bool(true))
}

/// `generateContent` (and its `alt=sse` stream).
pub(super) static FORMAT: WireFormat = WireFormat {
    read,
    body: &BODY,
    event: &BODY,
    stream: || Box::<Stream>::default(),
    results: write_results,
    results_are_one_entry: true,
    request: build_request,
    user_text,
};

fn write_results(reply: &Reply, messages: &[ToolResultMessage]) -> Vec<Value> {
    vec![function_responses(reply, messages)]
}

/// The model is in the path, not the body; the system prompt is `systemInstruction`,
/// the tools one `functionDeclarations`, the budget `generationConfig.maxOutputTokens`.
fn build_request(request: &Request<'_>) -> ProviderRequest {
    let mut body = Map::new();
    body.extend(request.system().map(|s| {
        let instruction = json!({"parts": [{"text": s}]});
        ("systemInstruction".to_owned(), instruction)
    }));
    body.insert("contents".into(), request.history().to_vec().into());
    body.extend(
        request
            .tools()
            .map(|t| ("tools".to_owned(), json!([{"functionDeclarations": t}]))),
    );
    body.extend(
        request
            .max_tokens()
            .map(|n| ("generationConfig".to_owned(), json!({"maxOutputTokens": n}))),
    );
    // Gemini streams from another method, as server-sent events with `alt=sse` (the
    // reader takes those, not the JSON array it sends without).
    let path = if request.streamed() {
        format!(
            "/v1beta/models/{}:streamGenerateContent?alt=sse",
            request.model()
        )
    } else {
        format!("/v1beta/models/{}:generateContent", request.model())
    };
    request.shaped(path, "x-goog-api-key", body)
}

fn user_text(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}
