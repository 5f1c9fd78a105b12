//! Prompts a program serves beside its tools (`prompts/list`, `prompts/get`), with
//! arguments, and the completions of their arguments (`completion/complete`), given with
//! [`McpTools::with_prompts`](super::McpTools::with_prompts). The system prompt of the
//! tools ([`McpPrompt`](super::McpPrompt)) is listed first.

use serde_json::{Map, Value};

use super::prompt_asks::PromptContext;
use super::resources::McpResourceContent;
use crate::core::BoxFuture;

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptArgument {
    /// Its name in `prompts/get`'s `arguments`.
    pub name: String,
    /// What it is, in a sentence.
    pub description: Option<String>,
    /// Whether `prompts/get` needs it.
    pub required: bool,
}

/// A prompt as `prompts/list` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptInfo {
    /// Its name in `prompts/get`.
    pub name: String,
    /// One line on what it is, for the client to show.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Vec<McpPromptArgument>,
}

/// Who says a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpPromptRole {
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// What one message of a prompt holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpPromptContent {
    /// Text.
    Text(String),
    /// An image.
    Image {
        /// Its bytes (sent base64-encoded).
        data: Vec<u8>,
        /// Its MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// A resource, embedded whole.
    Resource(McpResourceContent),
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPromptMessage {
    /// Who says it.
    pub role: McpPromptRole,
    /// What it holds.
    pub content: McpPromptContent,
}

impl McpPromptArgument {
    /// An argument, optional until [`required`](Self::required) says otherwise.
    pub fn new(name: impl Into<String>) -> Self {
        McpPromptArgument {
            name: name.into(),
            description: None,
            required: false,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Makes it required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

impl McpPromptInfo {
    /// A prompt without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        McpPromptInfo {
            name: name.into(),
            description: None,
            arguments: Vec::new(),
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an argument.
    pub fn with_argument(mut self, argument: McpPromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }
}

impl McpPromptMessage {
    /// A user's message of text.
    pub fn user(text: impl Into<String>) -> Self {
        McpPromptMessage {
            role: McpPromptRole::User,
            content: McpPromptContent::Text(text.into()),
        }
    }

    /// A user's message holding `content`.
    pub fn user_content(content: McpPromptContent) -> Self {
        McpPromptMessage {
            role: McpPromptRole::User,
            content,
        }
    }
}

/// A program's own prompts. The same for every session of the server.
///
/// A prompt's messages come from [`get`](Self::get), or from
/// [`get_asking`](Self::get_asking) for a prompt that asks the client first (the person, its
/// model, its roots) through a [`PromptContext`]; implement one of the two.
pub trait McpPrompts: Send + Sync + 'static {
    /// The prompts `prompts/list` gives (after the tools' system prompt, when served).
    fn list(&self) -> Vec<McpPromptInfo>;

    /// The messages of the prompt `name` with `arguments` (each a string, as the
    /// specification has them; a required one missing is refused before this is asked):
    /// `None` when it is not one of these prompts, else the messages or a sentence saying
    /// why not and what to do. `None` for every name by default.
    fn get<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, Option<Result<Vec<McpPromptMessage>, String>>> {
        let _ = (name, arguments);
        Box::pin(std::future::ready(None))
    }

    /// As [`get`](Self::get), for a prompt that may ask the client through `ctx` before it
    /// gives its messages ([`PromptContext::ask`], [`sample`](PromptContext::sample),
    /// [`client_roots`](PromptContext::client_roots)); by default [`get`](Self::get), which
    /// asks nothing. The server asks in the request's era: in a 2025-11-25 session by
    /// request to the client, in 2026-07-28 as the result of `prompts/get`, whose retry with
    /// the answers calls this again from the start, so ask before anything else.
    fn get_asking<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
        ctx: &'a PromptContext,
    ) -> BoxFuture<'a, Option<Result<Vec<McpPromptMessage>, String>>> {
        let _ = ctx;
        self.get(name, arguments)
    }

    /// Values for the argument `argument` of the prompt `prompt` that begin as `typed`
    /// does, the likeliest first (at most 100 are sent); none by default.
    fn complete<'a>(
        &'a self,
        prompt: &'a str,
        argument: &'a str,
        typed: &'a str,
    ) -> BoxFuture<'a, Vec<String>> {
        let _ = (prompt, argument, typed);
        Box::pin(std::future::ready(Vec::new()))
    }
}
