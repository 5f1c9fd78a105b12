//! The one dispatcher of the wire formats. Each dialect that has replies is one
//! [`WireFormat`]: it reads a reply's JSON, keeps a stream's events, writes a batch's results
//! and shapes a request. [`wire`] is the only place that chooses one by the dialect; every
//! operation of this module goes through it. MCP only lists tools, so it has none.

use std::fmt::Debug;

use serde_json::Value;

use super::keep::{Budget, Keep};
use super::request::{ProviderRequest, Request};
use super::stream::Event;
use super::{Reply, ReplyError, anthropic, gemini, openai, responses};
use crate::core::ToolResultMessage;
use crate::dialect::Dialect;

/// One provider API's wire format, both ways, as data: what each API differs in is a value
/// or a function of its own module, and this is the whole list of them.
pub(super) struct WireFormat {
    /// Reads a reply's JSON body (its calls, text, thinking and assistant turn) into the
    /// reply. The body is the reader's: what the reply keeps of it (items, blocks, parts, a
    /// call's arguments) is moved into the reply rather than copied. The values of arguments
    /// parsed from a JSON text count against the budget.
    pub(super) read: fn(Value, &mut Reply, &Budget) -> Result<(), ReplyError>,
    /// What `read` uses of a reply's JSON body: what the reply keeps or reads. The rest is
    /// skipped as the body is decoded.
    pub(super) body: &'static Keep,
    /// What the stream's accumulator uses of an event's data.
    pub(super) event: &'static Keep,
    /// An accumulator for the reply's event stream, before its first event.
    pub(super) stream: fn() -> Box<dyn StreamState>,
    /// The batch's results as the entries that go next into the request's history.
    pub(super) results: fn(&Reply, &[ToolResultMessage]) -> Vec<Value>,
    /// Whether `results` is always one entry (a message, a content) rather than a list.
    pub(super) results_are_one_entry: bool,
    /// The request as the API wants it.
    pub(super) request: fn(&Request<'_>) -> ProviderRequest,
    /// A user's text as a message of the history.
    pub(super) user_text: fn(&str) -> Value,
}

/// A user's text as most APIs take it: `{"role": "user", "content": text}`.
pub(super) fn user_text(text: &str) -> Value {
    serde_json::json!({"role": "user", "content": text})
}

/// A reply under reconstruction from its event stream.
pub(super) trait StreamState: Debug + Send {
    /// Takes one event.
    fn event(&mut self, event: &Event<'_>) -> Result<(), ReplyError>;

    /// Takes a data line that is a marker rather than JSON (Chat Completions' `[DONE]`);
    /// false when `data` is no marker of this format.
    fn marker(&mut self, _data: &str) -> bool {
        false
    }

    /// The reply the events made, as its JSON body, or why the stream ended too early.
    fn finish(self: Box<Self>) -> Result<Value, String>;
}

/// The wire format of `dialect`, or `None` for MCP, a face that only lists tools.
pub(super) fn wire(dialect: Dialect) -> Option<&'static WireFormat> {
    match dialect {
        Dialect::Mcp => None,
        Dialect::OpenAi | Dialect::OpenAiStrict => Some(&openai::FORMAT),
        Dialect::OpenAiResponses => Some(&responses::FORMAT),
        Dialect::Anthropic => Some(&anthropic::FORMAT),
        Dialect::Gemini => Some(&gemini::FORMAT),
    }
}

/// What to do instead of asking a dialect without replies for one.
pub(super) fn lists_only(dialect: Dialect) -> String {
    format!(
        "the {dialect} dialect only lists tools and has no requests or replies; use openai, openai-strict, openai-responses, anthropic or gemini"
    )
}
