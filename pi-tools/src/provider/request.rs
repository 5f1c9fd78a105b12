//! The other half of talking to a provider: the request. From a model name, the system
//! prompt, the tools and the conversation so far, the path to post to, the headers and the
//! JSON body each API wants, with the tools in the schema dialect that goes with the reply
//! reader. The HTTP client stays the caller's.
//!
//! | dialect | path (after the base URL) | auth header | system prompt | tools |
//! |---|---|---|---|---|
//! | `openai`, `openai-strict` | `/chat/completions` | `Authorization: Bearer` | first `messages` entry, role `system` | the dialect's, strict or not |
//! | `openai-responses` | `/responses` | `Authorization: Bearer` | `instructions` | flat and strict (`{type, name, description, parameters, strict}`) |
//! | `anthropic` | `/v1/messages` | `x-api-key`, with `anthropic-version` | `system` | `input_schema` |
//! | `gemini` | `/v1beta/models/{model}:generateContent` | `x-goog-api-key` | `systemInstruction` | in one `functionDeclarations` |
//!
//! [`Request::with_stream`] asks for a streamed reply: `"stream": true` in the body, or
//! Gemini's `:streamGenerateContent?alt=sse`.
//!
//! One [`Dialect`] names the tools' schemas ([`Toolbox::schemas`](crate::toolbox::Toolbox::schemas)),
//! the request and the reader of [`read_json`](super::read_json), so they agree: strict tools
//! (`openai-strict`, `openai-responses`) go with replies read as strict
//! ([`Reply::strict`](super::Reply::strict)).
//!
//! ```
//! use pi_tools::dialect::Dialect;
//! use pi_tools::provider::Request;
//! use serde_json::json;
//!
//! let history = [json!({"role": "user", "content": "Read a.txt"})];
//! let request = Request::new("claude-sonnet-4-5", &history)
//!     .with_system("You are a careful coding agent.")
//!     .with_api_key("sk-ant-…")
//!     .build(Dialect::Anthropic)
//!     .unwrap();
//! assert_eq!(request.path, "/v1/messages");
//! assert_eq!(request.body["system"], "You are a careful coding agent.");
//! assert_eq!(request.body["max_tokens"], 4096);
//! assert!(request.headers.contains(&("anthropic-version", "2023-06-01".to_owned())));
//! ```

use serde_json::{Map, Value};

use super::format;
use crate::dialect::Dialect;

/// The Messages API version the Anthropic reader follows.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The output budget sent where an API requires one (Anthropic's `max_tokens`) and none was
/// set with [`Request::with_max_tokens`].
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// One turn's request, before it is shaped for a provider by [`Request::build`].
#[derive(Debug, Clone)]
pub struct Request<'a> {
    model: &'a str,
    history: &'a [Value],
    system: Option<&'a str>,
    tools: &'a [Value],
    api_key: Option<&'a str>,
    max_tokens: Option<u32>,
    stream: bool,
}

/// A request shaped for one provider, for any HTTP client: POST `body` as JSON to the base
/// URL followed by `path`, with `headers` (`Content-Type: application/json` is the client's).
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderRequest {
    /// The path after the base URL (`/chat/completions`, `/v1/messages`, …).
    pub path: String,
    /// The headers the API wants: authentication, and its version where it has one.
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
}

impl<'a> Request<'a> {
    /// A request to `model` with the conversation so far (`history`: messages in the
    /// provider's own shape, as [`Reply::assistant`](super::Reply::assistant) and
    /// [`Reply::results`](super::Reply::results) give them).
    pub fn new(model: &'a str, history: &'a [Value]) -> Self {
        Request {
            model,
            history,
            system: None,
            tools: &[],
            api_key: None,
            max_tokens: None,
            stream: false,
        }
    }

    /// The system prompt (e.g. the toolbox's prompt), put where the provider takes it.
    pub fn with_system(mut self, system: &'a str) -> Self {
        self.system = Some(system).filter(|s| !s.is_empty());
        self
    }

    /// The tools, each as [`tool_schema`](crate::dialect::tool_schema) renders it in the
    /// same dialect ([`Toolbox::dialect_schemas`](crate::toolbox::Toolbox::dialect_schemas)
    /// gives them, leaving out a tool the dialect cannot express).
    pub fn with_tools(mut self, tools: &'a [Value]) -> Self {
        self.tools = tools;
        self
    }

    /// The API key, sent in the header the provider reads it from.
    pub fn with_api_key(mut self, key: &'a str) -> Self {
        self.api_key = Some(key);
        self
    }

    /// The most tokens the model may write in its reply (default: the API's own, and
    /// [`DEFAULT_MAX_TOKENS`] where the API requires a value).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Asks for the reply as a stream of events (default: one JSON body): `"stream": true`
    /// in the body, or Gemini's `streamGenerateContent?alt=sse`. Feed the response's bytes
    /// to a [`ReplyStream`](super::ReplyStream) of the same dialect.
    ///
    /// ```
    /// use pi_tools::dialect::Dialect;
    /// use pi_tools::provider::Request;
    ///
    /// let history = [];
    /// let streamed = Request::new("gemini-2.5-flash", &history).with_stream(true);
    /// let gemini = streamed.build(Dialect::Gemini).unwrap();
    /// assert_eq!(gemini.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    /// assert!(gemini.body.get("stream").is_none());
    /// let openai = streamed.build(Dialect::OpenAi).unwrap();
    /// assert_eq!(openai.body["stream"], true);
    /// ```
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The request as `dialect`'s API wants it; an error for MCP, which has no requests.
    pub fn build(&self, dialect: Dialect) -> Result<ProviderRequest, ListsOnly> {
        let wire = format::wire(dialect).ok_or(ListsOnly(dialect))?;
        Ok((wire.request)(self))
    }

    /// The conversation so far.
    pub(super) fn history(&self) -> &'a [Value] {
        self.history
    }

    /// The system prompt, when there is one.
    pub(super) fn system(&self) -> Option<&'a str> {
        self.system
    }

    /// The output budget, when one was set.
    pub(super) fn max_tokens(&self) -> Option<u32> {
        self.max_tokens
    }

    /// The tools, when there are any.
    pub(super) fn tools(&self) -> Option<Value> {
        (!self.tools.is_empty()).then(|| Value::from(self.tools.to_vec()))
    }

    /// Whether the reply is asked for as a stream.
    pub(super) fn streamed(&self) -> bool {
        self.stream
    }

    /// The model.
    pub(super) fn model(&self) -> &'a str {
        self.model
    }

    /// The request to `path` with `body`, the API key in the header `auth` names
    /// (`Authorization` as a bearer token).
    pub(super) fn shaped(
        &self,
        path: String,
        auth: &'static str,
        body: Map<String, Value>,
    ) -> ProviderRequest {
        let headers = self
            .api_key
            .map(|key| match auth {
                "Authorization" => ("Authorization", format!("Bearer {key}")),
                other => (other, key.to_owned()),
            })
            .into_iter()
            .collect();
        ProviderRequest {
            path,
            headers,
            body: body.into(),
        }
    }
}

/// A user's text (the task) as the first entry of the history, in `dialect`'s shape:
/// `{"role": "user", "content": text}`, or Gemini's `{"role": "user", "parts": [{"text"}]}`.
pub fn user_message(dialect: Dialect, text: &str) -> Result<Value, ListsOnly> {
    let wire = format::wire(dialect).ok_or(ListsOnly(dialect))?;
    Ok((wire.user_text)(text))
}

/// A request asked of a dialect that has none: MCP only lists tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}", format::lists_only(*.0))]
pub struct ListsOnly(pub Dialect);
