//! The other half of talking to a provider: the request. From a model name, the system
//! prompt, the tools and the conversation so far, the path to post to, the headers and the
//! JSON body each API wants, with the tools in the schema dialect that goes with the reply
//! reader. The HTTP client stays the caller's.
//!
//! | provider | path (after the base URL) | auth header | system prompt | tools |
//! |---|---|---|---|---|
//! | `openai` | `/chat/completions` | `Authorization: Bearer` | first `messages` entry, role `system` | `openai` dialect |
//! | `openai-responses` | `/responses` | `Authorization: Bearer` | `instructions` | `openai-strict`, flat (`{type, name, description, parameters, strict}`) |
//! | `anthropic` | `/v1/messages` | `x-api-key`, with `anthropic-version` | `system` | `anthropic` dialect |
//! | `gemini` | `/v1beta/models/{model}:generateContent` | `x-goog-api-key` | `systemInstruction` | `gemini` dialect, in one `functionDeclarations` |
//!
//! The tools of [`Provider::tool_schema`] and the reader of [`read_json`](super::read_json)
//! agree: Responses tools are strict and [`Reply::strict`](super::Reply::strict) is set for
//! Responses replies; Chat Completions tools are not strict and neither are its replies.
//!
//! ```
//! use pi_tools::provider::{Provider, Request};
//! use serde_json::json;
//!
//! let history = [json!({"role": "user", "content": "Read a.txt"})];
//! let request = Request::new("claude-sonnet-4-5", &history)
//!     .with_system("You are a careful coding agent.")
//!     .with_api_key("sk-ant-…")
//!     .build(Provider::Anthropic);
//! assert_eq!(request.path, "/v1/messages");
//! assert_eq!(request.body["system"], "You are a careful coding agent.");
//! assert_eq!(request.body["max_tokens"], 4096);
//! assert!(request.headers.contains(&("anthropic-version", "2023-06-01".to_owned())));
//! ```

use serde_json::{Map, Value, json};

use super::Provider;
use crate::dialect::{self, Dialect, DialectError};
use crate::tool::ToolDefinition;

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
        }
    }

    /// The system prompt (e.g. the toolbox's prompt), put where the provider takes it.
    pub fn with_system(mut self, system: &'a str) -> Self {
        self.system = Some(system).filter(|s| !s.is_empty());
        self
    }

    /// The tools, each as [`Provider::tool_schema`] renders it for the same provider.
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

    /// The request as `provider` wants it.
    pub fn build(&self, provider: Provider) -> ProviderRequest {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        let tools = (!self.tools.is_empty()).then(|| Value::from(self.tools.to_vec()));
        let (path, auth) = match provider {
            Provider::OpenAi => {
                let mut messages: Vec<Value> = self
                    .system
                    .map(|s| json!({"role": "system", "content": s}))
                    .into_iter()
                    .collect();
                messages.extend(self.history.iter().cloned());
                body.insert("messages".into(), messages.into());
                body.extend(tools.map(|t| ("tools".to_owned(), t)));
                body.extend(
                    self.max_tokens
                        .map(|n| ("max_completion_tokens".into(), n.into())),
                );
                ("/chat/completions".to_owned(), "Authorization")
            }
            Provider::OpenAiResponses => {
                body.extend(self.system.map(|s| ("instructions".into(), s.into())));
                body.insert("input".into(), self.history.to_vec().into());
                body.extend(tools.map(|t| ("tools".to_owned(), t)));
                body.extend(
                    self.max_tokens
                        .map(|n| ("max_output_tokens".into(), n.into())),
                );
                ("/responses".to_owned(), "Authorization")
            }
            Provider::Anthropic => {
                let max = self.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
                body.insert("max_tokens".into(), max.into());
                body.extend(self.system.map(|s| ("system".into(), s.into())));
                body.insert("messages".into(), self.history.to_vec().into());
                body.extend(tools.map(|t| ("tools".to_owned(), t)));
                ("/v1/messages".to_owned(), "x-api-key")
            }
            Provider::Gemini => {
                // The model is in the path, not the body.
                body.remove("model");
                body.extend(self.system.map(|s| {
                    let instruction = json!({"parts": [{"text": s}]});
                    ("systemInstruction".to_owned(), instruction)
                }));
                body.insert("contents".into(), self.history.to_vec().into());
                body.extend(
                    tools.map(|t| ("tools".to_owned(), json!([{"functionDeclarations": t}]))),
                );
                body.extend(
                    self.max_tokens
                        .map(|n| ("generationConfig".to_owned(), json!({"maxOutputTokens": n}))),
                );
                let path = format!("/v1beta/models/{}:generateContent", self.model);
                (path, "x-goog-api-key")
            }
        };
        let mut headers = Vec::new();
        if let Some(key) = self.api_key {
            headers.push(match auth {
                "Authorization" => ("Authorization", format!("Bearer {key}")),
                other => (other, key.to_owned()),
            });
        }
        if provider == Provider::Anthropic {
            headers.push(("anthropic-version", ANTHROPIC_VERSION.to_owned()));
        }
        ProviderRequest {
            path,
            headers,
            body: body.into(),
        }
    }
}

impl Provider {
    /// The schema dialect of this provider's tools: `openai` for Chat Completions,
    /// `openai-responses` for Responses (its tools are strict unless declared otherwise, and
    /// its replies are read so), `anthropic`, `gemini`.
    pub fn dialect(self) -> Dialect {
        match self {
            Provider::OpenAi => Dialect::OpenAi,
            Provider::OpenAiResponses => Dialect::OpenAiResponses,
            Provider::Anthropic => Dialect::Anthropic,
            Provider::Gemini => Dialect::Gemini,
        }
    }

    /// A tool as this provider's request lists it: its [`dialect`](Self::dialect)'s wire
    /// form.
    pub fn tool_schema(self, tool: &dyn ToolDefinition) -> Result<Value, DialectError> {
        dialect::tool_schema(tool, self.dialect())
    }
}
