//! A prompt that asks the client before it gives its messages: the person (a form), the
//! client's model, or its roots, as a tool asks with `ctx.ask` / `ctx.sample` /
//! `ctx.client_roots`, and over the same carriers, decided once here for every prompt:
//!
//! - in a 2025-11-25 session the question is a request to the client (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`), awaited while `prompts/get` waits;
//! - in the stateless era (2026-07-28) it is the `prompts/get` result: an
//!   `InputRequiredResult` whose signed `requestState` is bound to the prompt, its exact
//!   arguments and an expiry (see `mrtr`). The retry with `inputResponses` makes the
//!   prompt's messages again from the start, each question now finding its answer; a
//!   tampered, replayed, expired or foreign state is refused with a sentence.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{GetPromptRequestParams, GetPromptResponse};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::asker::McpAsker;
use super::mrtr::{Round, Subject};
use super::server::ToolServer;
use crate::core::{Answer, ClientAsker, ClientRoot, Question, Sampled, SamplingRequest};

/// What a prompt may ask the client while it makes its messages
/// ([`McpPrompts::get_asking`](super::McpPrompts::get_asking)): the person behind the client
/// ([`ask`](Self::ask)), the client's model ([`sample`](Self::sample)) and its roots
/// ([`client_roots`](Self::client_roots)). Each error is a sentence saying why nobody could
/// be asked (or, in the stateless era, that the question went to the client as the
/// request's result): return it as the prompt's error.
///
/// **Ask before anything else**: a 2026-07-28 client answers by sending `prompts/get`
/// again, which makes the prompt's messages again from the start, its questions asked in
/// the same order now answered.
///
/// ```
/// use pi_tools::mcp::{McpPromptMessage, PromptContext};
/// use pi_tools::{Answer, Question};
/// use serde_json::json;
///
/// async fn review(ctx: &PromptContext) -> Result<Vec<McpPromptMessage>, String> {
///     let form = json!({
///         "type": "object",
///         "properties": {"focus": {"type": "string"}},
///         "required": ["focus"]
///     });
///     let question = Question::new("What should the review look at?", form).with_id("focus");
///     match ctx.ask(question).await? {
///         Answer::Accept(content) => Ok(vec![McpPromptMessage::user(format!(
///             "Review the change, looking at {}.",
///             content["focus"].as_str().unwrap_or("everything")
///         ))]),
///         _ => Ok(vec![McpPromptMessage::user("Review the change.")]),
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let refused = review(&PromptContext::without_client()).await.unwrap_err();
/// assert!(refused.starts_with("No client can be asked"));
/// # });
/// ```
#[derive(Clone)]
pub struct PromptContext {
    asker: Option<Arc<dyn ClientAsker>>,
}

/// Why a prompt without a client cannot ask.
const NO_CLIENT: &str = "No client can be asked: these prompt messages are made where nobody answers questions. Give the prompt what it needs in its arguments, or get it through an MCP client that offers elicitation.";

impl PromptContext {
    /// A context whose questions go to `asker` (a test's client, say; the MCP server gives
    /// each `prompts/get` its own).
    pub fn new(asker: Arc<dyn ClientAsker>) -> Self {
        PromptContext { asker: Some(asker) }
    }

    /// A context with no client: every question fails with a sentence saying so.
    pub fn without_client() -> Self {
        PromptContext { asker: None }
    }

    /// Puts `question` to the person behind the client and waits for the answer.
    pub async fn ask(&self, question: Question) -> Result<Answer, String> {
        let asker = self.asker.as_ref().ok_or(NO_CLIENT)?;
        asker
            .ask(question)
            .await
            .map_err(|e| e.message().to_owned())
    }

    /// Asks the client's model to write the next message of `request`'s conversation.
    pub async fn sample(&self, request: SamplingRequest) -> Result<Sampled, String> {
        let asker = self.asker.as_ref().ok_or(NO_CLIENT)?;
        asker
            .sample(request)
            .await
            .map_err(|e| e.message().to_owned())
    }

    /// The roots the client works in, as it lists them now.
    pub async fn client_roots(&self) -> Result<Vec<ClientRoot>, String> {
        let asker = self.asker.as_ref().ok_or(NO_CLIENT)?;
        asker.roots(None).await.map_err(|e| e.message().to_owned())
    }
}

impl ToolServer {
    /// `prompts/get` in the request's era: a session's prompt asks its client by request, a
    /// stateless-era prompt's question is the result.
    pub(crate) async fn get_prompt_in(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if super::era::is_stateless(&context) {
            return self.get_prompt_stateless(request, context).await;
        }
        let asker = McpAsker::of_session(&context.peer, self.is_sessionless_http(&context));
        let ctx = PromptContext::new(asker.shared());
        let result = self.prompt_named(&request.name, request.arguments, &ctx);
        Ok(result.await?.into())
    }

    /// `prompts/get` of the stateless era: the prompt's questions without an answer end the
    /// request with an input-required result; the retry's answers come back to them.
    async fn get_prompt_stateless(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let capabilities = context.client_capabilities().unwrap_or_default();
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let round = Round::open(
            Subject::Prompt,
            &request.name,
            &arguments,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
            super::stateless::offers(&capabilities),
        )
        .map_err(|message| ErrorData::invalid_params(message, None))?;
        let ctx = PromptContext::new(McpAsker::Round(round.clone()).shared());
        let got = self
            .prompt_named(&request.name, request.arguments, &ctx)
            .await;
        if let Some(refusal) = round.refusal() {
            // An answer was given to another question than the prompt asks.
            return Err(ErrorData::invalid_params(refusal, None));
        }
        if let Some(question) = round.question() {
            return question
                .map(Into::into)
                .map_err(|message| ErrorData::internal_error(message, None));
        }
        match (got, round.missing_capability()) {
            (Ok(result), _) => Ok(result.into()),
            (Err(error), Some(capability)) => Err(missing_capability(capability, &error)),
            (Err(error), None) => Err(error),
        }
    }
}

/// `-32021` for a prompt that needed `capability`, which the request did not declare, and
/// failed without it (`error`, its refusal).
fn missing_capability(capability: &str, error: &ErrorData) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "The prompt needs the client's `{capability}` capability, which this request did not declare in `_meta` (`io.modelcontextprotocol/clientCapabilities`), so it could not be made. Declare it and get the prompt again. The prompt said: {}",
            error.message
        ),
        Some(serde_json::json!({ "requiredCapabilities": { capability: {} } })),
    )
}
