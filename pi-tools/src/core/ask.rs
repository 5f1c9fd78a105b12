//! Asking the client: a running tool may put a question to the person behind the client that
//! called it (a form to fill in) or ask that client's model for a message, through
//! [`ToolContext::ask`], [`ToolContext::sample`] and [`ToolContext::client_roots`].
//!
//! The kernel knows no protocol: a front that has a client to ask (the MCP server) gives each
//! call a [`ClientAsker`] in its extensions, and the context reaches it there. Where no front
//! can ask (the CLI's `run`, a client that declared no such capability) the tool gets a
//! [`ToolError`] whose sentence says so.
//!
//! A front may answer by running the call again: in MCP 2026-07-28 a server cannot send the
//! client a request, so the question ends the call (as an input-required result) and the
//! client's retry runs the tool again from the start, its questions now answered in the same
//! order. **A tool should ask before it acts**: whatever it did before a question is done
//! again on the re-run.

use std::sync::Arc;

use serde_json::Value;

use super::context::ToolContext;
use super::error::ToolError;
use super::tool::BoxFuture;

/// A question for the person behind the client: a message and the form of the answer, a JSON
/// Schema object of flat properties (strings, numbers, integers, booleans, enumerations), as
/// MCP elicitation takes it. Asked with [`ToolContext::ask`]; ask before acting, since a
/// front may run the tool again with the answer (see the
/// [guide](crate::guide::asking_the_client)).
///
/// ```
/// use pi_tools::{Answer, Question, ToolContext, ToolError, tool};
/// use serde_json::json;
///
/// /// Deletes the branch after the person confirms it.
/// #[tool]
/// async fn delete_branch(
///     ctx: &ToolContext,
///     /// The branch to delete.
///     name: String,
/// ) -> Result<String, ToolError> {
///     let form = json!({
///         "type": "object",
///         "properties": {"confirm": {"type": "boolean", "title": "Delete it?"}},
///         "required": ["confirm"]
///     });
///     // Asked before anything is done: a front may run the tool again with the answer.
///     match ctx.ask(Question::new(format!("Delete the branch `{name}`?"), form)).await? {
///         Answer::Accept(content) if content["confirm"] == true => Ok(format!("Deleted {name}.")),
///         _ => Ok(format!("The branch {name} was kept: the person did not confirm.")),
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    message: String,
    schema: Value,
    id: Option<String>,
}

impl Question {
    /// A question showing `message`, answered with a form of `schema`.
    pub fn new(message: impl Into<String>, schema: Value) -> Self {
        Question {
            message: message.into(),
            schema,
            id: None,
        }
    }

    /// This question with a name of its own, unique among the call's questions: a front that
    /// puts questions as data (MCP 2026-07-28 `inputRequests`) uses it as their key. Without
    /// one the key says the question's place in the order of asking.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// What the person is shown.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The form of the answer (a JSON Schema object).
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The question's own name, if it was given one.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// The person's answer to a [`Question`].
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The form, filled in (an object of the schema's properties).
    Accept(Value),
    /// The person said no.
    Decline,
    /// The person dismissed the question without choosing.
    Cancel,
}

/// Who says a message of a sampling conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplingRole {
    /// The user (what the model answers).
    User,
    /// The model.
    Assistant,
}

/// One text message of a sampling conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: SamplingRole,
    /// What is said.
    pub text: String,
}

/// A request for the client's model to write the next message of a conversation (MCP
/// `sampling/createMessage`).
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The conversation so far, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// A system prompt the client may use.
    pub system_prompt: Option<String>,
    /// The sampling temperature, if the tool cares.
    pub temperature: Option<f32>,
    /// Where the model should stop.
    pub stop_sequences: Vec<String>,
    /// A name of the request's own, unique among the call's questions (see
    /// [`Question::with_id`]).
    pub id: Option<String>,
}

impl SamplingRequest {
    /// A request for at most `max_tokens` tokens answering the user's `text`.
    pub fn new(text: impl Into<String>, max_tokens: u32) -> Self {
        SamplingRequest {
            messages: vec![SamplingMessage {
                role: SamplingRole::User,
                text: text.into(),
            }],
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            id: None,
        }
    }

    /// This request with `prompt` as its system prompt.
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// This request with a name of its own (see [`Question::with_id`]).
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// The message the client's model wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The model that wrote it, as the client names it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, `stopSequence`, ...), if the client says.
    pub stop_reason: Option<String>,
    /// Who says it (the model: `Assistant`).
    pub role: SamplingRole,
    /// Its text (the text blocks, joined by line ends).
    pub text: String,
    /// Its content as the client sent it, for blocks other than text.
    pub content: Value,
}

/// A root the client works in.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRoot {
    /// Its URI (`file://` for a directory).
    pub uri: String,
    /// Its name, if the client gives one.
    pub name: Option<String>,
}

/// The client of a call, as a front lets the call's tool ask it. A front puts one in each
/// call's [`Extensions`](super::Extensions) (as `Arc<dyn ClientAsker>`); tools reach it
/// through [`ToolContext::ask`], [`ToolContext::sample`] and [`ToolContext::client_roots`].
/// Each error is the sentence the tool (and its model) reads.
pub trait ClientAsker: Send + Sync {
    /// Puts `question` to the person and waits for the answer.
    fn ask(&self, question: Question) -> BoxFuture<'_, Result<Answer, ToolError>>;

    /// Asks the client's model for the next message and waits for it.
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, Result<Sampled, ToolError>>;

    /// Lists the client's roots; `id` names the request as [`Question::with_id`] does.
    fn roots(&self, id: Option<String>) -> BoxFuture<'_, Result<Vec<ClientRoot>, ToolError>>;
}

/// Why a call without a [`ClientAsker`] cannot ask, and what to do.
const NO_CLIENT: &str = "No client can be asked: this call runs where nobody answers a tool's questions (the CLI's `run`, or a front without a client). Give the tool what it needs in its arguments, or call it through an MCP client that offers elicitation and sampling.";

impl ToolContext {
    /// This context, whose tool asks `asker` (for custom drivers and tests; a front's
    /// extensions carry it otherwise).
    pub fn with_asker(self, asker: Arc<dyn ClientAsker>) -> Self {
        let extensions = self.extensions().clone().with(asker);
        self.with_extensions(extensions)
    }

    /// The client this call may ask, if its front gave one.
    pub fn asker(&self) -> Option<&Arc<dyn ClientAsker>> {
        self.extensions().get::<Arc<dyn ClientAsker>>()
    }

    /// Puts `question` to the person behind the client and waits for the answer (the call's
    /// cancellation stops the wait). An error says why nobody could be asked: the tool may
    /// return it as it is. Ask before acting: a front may run the tool again with the answer
    /// (see the [guide](crate::guide::asking_the_client)).
    pub async fn ask(&self, question: Question) -> Result<Answer, ToolError> {
        let asker = self.asker().ok_or_else(|| ToolError::new(NO_CLIENT))?;
        self.until_cancelled(asker.ask(question)).await
    }

    /// Asks the client's model to write the next message of `request`'s conversation and
    /// waits for it (the call's cancellation stops the wait).
    pub async fn sample(&self, request: SamplingRequest) -> Result<Sampled, ToolError> {
        let asker = self.asker().ok_or_else(|| ToolError::new(NO_CLIENT))?;
        self.until_cancelled(asker.sample(request)).await
    }

    /// The roots the client works in, as it lists them now.
    pub async fn client_roots(&self) -> Result<Vec<ClientRoot>, ToolError> {
        let asker = self.asker().ok_or_else(|| ToolError::new(NO_CLIENT))?;
        self.until_cancelled(asker.roots(None)).await
    }

    async fn until_cancelled<T>(
        &self,
        work: BoxFuture<'_, Result<T, ToolError>>,
    ) -> Result<T, ToolError> {
        tokio::select! {
            done = work => done,
            () = self.cancellation().cancelled() => Err(ToolError::new(
                "The call was cancelled while it waited for the client's answer, so it stopped there.",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_util::sync::CancellationToken;

    #[tokio::test]
    async fn without_a_client_the_tool_is_told_who_cannot_answer() {
        let ctx = ToolContext::new("c1", CancellationToken::new());
        let error = ctx
            .ask(Question::new("Go?", serde_json::json!({"type": "object"})))
            .await
            .expect_err("nobody to ask");
        assert_eq!(error.message(), NO_CLIENT);
        let error = ctx
            .sample(SamplingRequest::new("Hi", 10))
            .await
            .expect_err("nobody to ask");
        assert_eq!(error.message(), NO_CLIENT);
    }

    struct Never;

    impl ClientAsker for Never {
        fn ask(&self, _: Question) -> BoxFuture<'_, Result<Answer, ToolError>> {
            Box::pin(std::future::pending())
        }
        fn sample(&self, _: SamplingRequest) -> BoxFuture<'_, Result<Sampled, ToolError>> {
            Box::pin(std::future::pending())
        }
        fn roots(&self, _: Option<String>) -> BoxFuture<'_, Result<Vec<ClientRoot>, ToolError>> {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test]
    async fn a_cancelled_call_stops_waiting_for_the_answer() {
        let cancel = CancellationToken::new();
        let ctx = ToolContext::new("c1", cancel.clone()).with_asker(Arc::new(Never));
        cancel.cancel();
        let error = ctx
            .ask(Question::new("Go?", serde_json::json!({"type": "object"})))
            .await
            .expect_err("cancelled");
        assert!(
            error.message().starts_with("The call was cancelled"),
            "{error:?}"
        );
    }
}
