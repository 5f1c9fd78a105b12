//! Providers' wire formats, both ways: a model's reply in (the JSON body or the streamed
//! event-stream body) as the batch the runner runs, and the batch's results out as what goes
//! next into that provider's request, with the request itself ([`Request`]).
//!
//! One value names a wire format everywhere: the [`Dialect`] the tools are described in is
//! the one their calls are read in, their results written in and the request shaped for
//! (`openai-strict` reads Chat Completions replies as strict, so a `null` for an optional
//! parameter is absent). MCP only lists tools; asking it for a reply is an error.
//!
//! | dialect | calls in the reply | results in the next request |
//! |---|---|---|
//! | `openai`, `openai-strict` (Chat Completions) | `choices[0].message.tool_calls[]` (`arguments` a JSON string); streamed as `delta.tool_calls[]` keyed by `index` | one `{"role": "tool", "tool_call_id", "content"}` per call; images follow in one `user` message |
//! | `openai-responses` | `output[]` items `{type: "function_call", call_id, name, arguments}`; streamed as `response.function_call_arguments.delta` | `{type: "function_call_output", call_id, output}` items (`output` a list with `input_image`s when there are images) |
//! | `anthropic` (Messages) | `content[]` blocks `{type: "tool_use", id, name, input}`; streamed as `input_json_delta` | one `user` message of `tool_result` blocks `{tool_use_id, content, is_error}` |
//! | `gemini` (`generateContent`) | `candidates[0].content.parts[].functionCall {name, args, id?}`; streamed as whole chunks | one content of `functionResponse {name, id?, response: {output} or {error}, parts?}` parts |
//!
//! Every reader keeps the assistant turn as the provider wants it back in the history
//! ([`Reply::assistant`]) and its text and thinking ([`Reply::text`], [`Reply::thinking`]).
//! A reply that cannot be read is a [`ReplyError`] naming the provider and the JSON path; a
//! call whose arguments are not a JSON object is not: it gets a failed result of its own
//! ([`Reply::unreadable`]), and the rest of the batch runs. Nothing is dropped silently: a
//! block, item or part of a type this module does not know is an error.
//!
//! ```
//! use pi_tools::dialect::Dialect;
//! use pi_tools::provider::read_reply;
//!
//! let body = br#"{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
//!     "role": "assistant", "content": null,
//!     "tool_calls": [{"id": "call_1", "type": "function",
//!                     "function": {"name": "read", "arguments": "{\"path\": \"a.txt\"}"}}]}}]}"#;
//! let reply = read_reply(Dialect::OpenAi, body).unwrap();
//! assert_eq!(reply.calls[0].name, "read");
//! assert_eq!(reply.calls[0].arguments, serde_json::json!({"path": "a.txt"}));
//! ```

pub mod anthropic;
mod error;
mod format;
pub mod gemini;
mod keep;
mod native;
pub mod openai;
mod patch_group;
mod reply;
mod request;
pub mod responses;
mod stream;
mod walk;

use serde_json::Value;

use crate::dialect::Dialect;
pub use error::ReplyError;
pub use reply::{NativeCall, Reply};
pub use request::{
    ANTHROPIC_VERSION, DEFAULT_MAX_TOKENS, ListsOnly, ProviderRequest, Request, user_message,
};
pub use stream::ReplyStream;

/// The name the wire formats had before they became one value with the schema dialects: a
/// provider is now the [`Dialect`] its tools are described in.
#[deprecated(
    since = "0.2.0",
    note = "use `Dialect`: one value names the wire format of the tools, the replies, the results and the request (`Dialect::OpenAiStrict` reads Chat Completions replies as strict)"
)]
pub type Provider = Dialect;

/// Reads a reply body as the provider sent it: a JSON object, or the event-stream body of a
/// streamed reply (told apart by the first character that is not white space).
pub fn read_reply(dialect: Dialect, body: &[u8]) -> Result<Reply, ReplyError> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => Err(ReplyError::new(
            dialect,
            "",
            "the body is empty; pass the reply's whole JSON body or its event stream",
        )),
        Some(b'{') => {
            let wire = format::wire(dialect)
                .ok_or_else(|| ReplyError::new(dialect, "", format::lists_only(dialect)))?;
            // Only what the reader uses is decoded: a value costs tens of bytes however
            // small it is written, so members nobody reads are skipped as they are parsed,
            // and what is kept may hold one value per 16 bytes of the body.
            let budget = keep::Budget::of_bytes(body.len());
            let value = keep::from_slice(body, wire.body, &budget).map_err(|e| {
                let reason = if budget.spent() {
                    budget.reason()
                } else {
                    format!("the body is not valid JSON ({e}); pass the reply's whole body")
                };
                ReplyError::new(dialect, "", reason)
            })?;
            read_owned(dialect, wire, value, &budget)
        }
        Some(_) => {
            let mut stream = ReplyStream::new(dialect);
            stream.feed(body)?;
            stream.finish()
        }
    }
}

/// Reads a reply's JSON body (a `ChatCompletion`, a Responses `response`, an Anthropic
/// `message`, a Gemini `GenerateContentResponse`).
pub fn read_json(dialect: Dialect, body: &Value) -> Result<Reply, ReplyError> {
    let wire = format::wire(dialect)
        .ok_or_else(|| ReplyError::new(dialect, "", format::lists_only(dialect)))?;
    // The reader takes what it keeps by value: a copy of only what it reads, not the body.
    let kept = keep::copy(body, wire.body);
    read_owned(dialect, wire, kept, &keep::Budget::of_texts())
}

/// Reads a reply's JSON body that is the reader's to take apart.
fn read_owned(
    dialect: Dialect,
    wire: &format::WireFormat,
    body: Value,
    budget: &keep::Budget,
) -> Result<Reply, ReplyError> {
    let mut reply = Reply::new(dialect);
    (wire.read)(body, &mut reply, budget)?;
    Ok(reply)
}

/// `data:<mime>;base64,<data>`, how OpenAI takes an inline image.
fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// What stands in a tool result, after what was there, for a block no provider's tool result
/// takes (audio, a binary resource).
const NOT_CARRIED: &str = "this provider's tool results take text and images";

/// A block a provider's tool result takes as text: its text (an embedded text resource's
/// under a line naming it), or a line saying what was there for audio and a binary resource.
fn as_text(block: &crate::core::ContentBlock) -> std::borrow::Cow<'_, str> {
    block
        .readable_text()
        .unwrap_or_else(|| block.stand_in(NOT_CARRIED).into())
}

/// The text of a result's blocks joined by newlines (see [`as_text`]), and its images.
fn split_content(content: &[crate::core::ContentBlock]) -> (String, Vec<(&str, &str)>) {
    let mut text = String::new();
    let mut images = Vec::new();
    for block in content {
        match block {
            crate::core::ContentBlock::Image { data, mime_type } => {
                images.push((mime_type.as_str(), data.as_str()));
            }
            _ => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&as_text(block));
            }
        }
    }
    (text, images)
}
