//! The MCP client as a tool's [`ClientAsker`]: each call of a tool gets one, so the tool's
//! questions reach the client that called it.
//!
//! In a 2025-11-25 session a question is a request to the client (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`), sent only when the client declared the capability
//! at `initialize`, and awaited (the call's cancellation stops the wait). In the stateless era
//! (2026-07-28) the question goes into the call's round (see `tool_round`): the call ends with
//! an input-required result, and its retry runs the tool again with the answer; once the call
//! is a task, the question is the task's and the tool waits for `tasks/update` to answer it.

#![expect(
    deprecated,
    reason = "sampling and roots are marked deprecated by a future protocol revision (SEP-2577), not yet gone; clients of both eras offer them"
)]

use std::sync::Arc;

use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    ListRootsRequest, ListRootsResult, Role, SamplingMessageContentBlock,
};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use serde_json::Value;

use super::elicit::ASK_TIMEOUT;
use super::mrtr::Round;
use super::tool_round::Asked;
use crate::core::{
    Answer, BoxFuture, ClientAsker, ClientRoot, Question, Sampled, SamplingRequest, SamplingRole,
    ToolError,
};

/// How a call's tool reaches its client.
pub(crate) enum McpAsker {
    /// A 2025-11-25 session: requests to the client.
    Session(Peer<RoleServer>),
    /// A stateless-era request: the call's round.
    Round(Arc<Round>),
    /// Nothing can reach the client; the sentence says why.
    Unable(&'static str),
}

/// Why a request of a stateless HTTP server (no session) cannot ask its 2025 client.
const NO_SESSION: &str = "The MCP client cannot be asked: the server runs without sessions (stateless HTTP), so it cannot send the client a question. Call the tool in a session, or name MCP 2026-07-28 in the request's `_meta` so the question comes back as an input-required result.";

/// What the tool is told while its question goes to the client as the call's result.
const ASKED_AS_RESULT: &str = "The question was put to the MCP client as this call's result (an input-required result of MCP 2026-07-28); the call runs again from the start with the answer. Return this error as it is.";

impl McpAsker {
    /// The asker of a 2025-11-25 call from `peer`; `stateless`: the request came to a
    /// stateless HTTP server, which cannot send its client a request.
    pub(crate) fn of_session(peer: &Peer<RoleServer>, stateless: bool) -> McpAsker {
        match stateless {
            true => McpAsker::Unable(NO_SESSION),
            false => McpAsker::Session(peer.clone()),
        }
    }

    /// The asker of a call, as an extension value.
    pub(crate) fn shared(self) -> Arc<dyn ClientAsker> {
        Arc::new(self)
    }
}

/// The sentence for a client that did not declare `capability` (`elicitation`, `sampling`,
/// `roots`), in a session (`at_initialize`) or in its request's `_meta`.
fn undeclared(capability: &str, at_initialize: bool) -> ToolError {
    let when = match at_initialize {
        true => "when it connected (`initialize`)".to_owned(),
        false => {
            "in its request's `_meta` (`io.modelcontextprotocol/clientCapabilities`)".to_owned()
        }
    };
    ToolError::new(format!(
        "The MCP client cannot be asked: it did not declare the `{capability}` capability {when}. Use a client that offers {capability}, or put what it would ask for into the arguments."
    ))
}

fn client_failed(what: &str, error: impl std::fmt::Display) -> ToolError {
    ToolError::new(format!(
        "The MCP client did not answer the {what} ({error}), so the tool goes on without an answer."
    ))
}

impl ClientAsker for McpAsker {
    fn ask(&self, question: Question) -> BoxFuture<'_, Result<Answer, ToolError>> {
        Box::pin(async move {
            let params = form(&question)?;
            match self {
                McpAsker::Unable(why) => Err(ToolError::new(*why)),
                McpAsker::Session(peer) => {
                    if !peer
                        .supported_elicitation_modes()
                        .contains(&ElicitationMode::Form)
                    {
                        return Err(undeclared("elicitation", true));
                    }
                    let mut params = params;
                    if let ElicitRequestParams::FormElicitationParams { meta, .. } = &mut params {
                        *meta = super::tasks_2025::related_task_meta();
                    }
                    let asked = peer.create_elicitation_with_timeout(params, Some(ASK_TIMEOUT));
                    let result = super::tasks_2025::waiting_on_client(asked)
                        .await
                        .map_err(|e| client_failed("question", e))?;
                    Ok(answer(result))
                }
                McpAsker::Round(round) => {
                    if !round.offers.elicit {
                        round.note_missing("elicitation");
                        return Err(undeclared("elicitation", false));
                    }
                    let request = InputRequest::Elicitation(ElicitRequest::new(params));
                    let response = in_round(round, question.id(), request).await?;
                    let result: ElicitResult = read(response)?;
                    Ok(answer(result))
                }
            }
        })
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, Result<Sampled, ToolError>> {
        Box::pin(async move {
            let id = request.id.clone();
            let params = sampling(request)?;
            match self {
                McpAsker::Unable(why) => Err(ToolError::new(*why)),
                McpAsker::Session(peer) => {
                    if peer
                        .peer_info()
                        .and_then(|i| i.capabilities.sampling.clone())
                        .is_none()
                    {
                        return Err(undeclared("sampling", true));
                    }
                    let asked = tokio::time::timeout(ASK_TIMEOUT, peer.create_message(params));
                    let result = super::tasks_2025::waiting_on_client(asked)
                        .await
                        .map_err(|_| {
                            client_failed("sampling request", "no answer within ten minutes")
                        })?
                        .map_err(|e| client_failed("sampling request", e))?;
                    Ok(sampled(result))
                }
                McpAsker::Round(round) => {
                    if !round.offers.sample {
                        round.note_missing("sampling");
                        return Err(undeclared("sampling", false));
                    }
                    let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
                    let response = in_round(round, id.as_deref(), request).await?;
                    Ok(sampled(read(response)?))
                }
            }
        })
    }

    fn roots(&self, id: Option<String>) -> BoxFuture<'_, Result<Vec<ClientRoot>, ToolError>> {
        Box::pin(async move {
            let listed: ListRootsResult = match self {
                McpAsker::Unable(why) => return Err(ToolError::new(*why)),
                McpAsker::Session(peer) => {
                    if peer
                        .peer_info()
                        .and_then(|i| i.capabilities.roots.clone())
                        .is_none()
                    {
                        return Err(undeclared("roots", true));
                    }
                    tokio::time::timeout(ASK_TIMEOUT, peer.list_roots())
                        .await
                        .map_err(|_| {
                            client_failed("roots request", "no answer within ten minutes")
                        })?
                        .map_err(|e| client_failed("roots request", e))?
                }
                // The roots the server asked for itself (it follows them) are known.
                McpAsker::Round(round) if round.roots.is_some() => {
                    let uris = round.roots.clone().unwrap_or_default();
                    return Ok(uris
                        .into_iter()
                        .map(|uri| ClientRoot { uri, name: None })
                        .collect());
                }
                McpAsker::Round(round) => {
                    if !round.offers.roots {
                        round.note_missing("roots");
                        return Err(undeclared("roots", false));
                    }
                    let request = InputRequest::ListRoots(ListRootsRequest {
                        method: Default::default(),
                        extensions: Default::default(),
                    });
                    read(in_round(round, id.as_deref(), request).await?)?
                }
            };
            Ok(listed
                .roots
                .into_iter()
                .map(|root| ClientRoot {
                    uri: root.uri,
                    name: root.name,
                })
                .collect())
        })
    }
}

/// The answer `request` has in `round` (or, once the call is a task, the answer the task's
/// client gives), or the error that ends the run while the question is put as the call's
/// result (or refused).
async fn in_round(
    round: &Round,
    id: Option<&str>,
    request: InputRequest,
) -> Result<Value, ToolError> {
    match round.tool_ask(id, request) {
        Ok(Asked::Answered(response)) => Ok(response),
        Ok(Asked::Put) => Err(ToolError::new(ASKED_AS_RESULT)),
        Ok(Asked::InTask(answer)) => match tokio::time::timeout(ASK_TIMEOUT, answer).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(_)) => Err(ToolError::new(
                "The task ended (it was cancelled) before the question was answered.",
            )),
            Err(_) => Err(client_failed(
                "question",
                "no tasks/update answered it within ten minutes",
            )),
        },
        Err(refusal) => Err(ToolError::new(refusal)),
    }
}

/// A response already checked to be of its method's result (see `tool_round::answers`).
fn read<T: serde::de::DeserializeOwned>(response: Value) -> Result<T, ToolError> {
    serde_json::from_value(response).map_err(|e| {
        ToolError::new(format!(
            "The client's answer could not be read ({e}); this is a bug in pi-tools."
        ))
    })
}

/// The elicitation request of `question`, or why its form is not one MCP takes.
fn form(question: &Question) -> Result<ElicitRequestParams, ToolError> {
    let schema = match question.schema() {
        Value::Object(object) => ElicitationSchema::from_json_schema(object.clone()).ok(),
        _ => None,
    }
    .ok_or_else(|| {
        ToolError::new(
            "The question's form is not one MCP elicitation takes: it must be a JSON Schema object whose properties are strings, numbers, integers, booleans or enumerations (no nesting); this is a bug in the tool.",
        )
    })?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message().to_owned(),
        requested_schema: schema,
    })
}

fn answer(result: ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => Answer::Accept(result.content.unwrap_or(Value::Null)),
        ElicitationAction::Decline => Answer::Decline,
        _ => Answer::Cancel,
    }
}

/// The `sampling/createMessage` parameters of `request`, or why they are not valid.
fn sampling(request: SamplingRequest) -> Result<CreateMessageRequestParams, ToolError> {
    let messages = request
        .messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                SamplingRole::User => Role::User,
                SamplingRole::Assistant => Role::Assistant,
            };
            rmcp::model::SamplingMessage::new(role, SamplingMessageContentBlock::text(m.text))
        })
        .collect();
    let mut params = CreateMessageRequestParams::new(messages, request.max_tokens);
    params.system_prompt = request.system_prompt;
    params.temperature = request.temperature;
    if !request.stop_sequences.is_empty() {
        params.stop_sequences = Some(request.stop_sequences);
    }
    params.validate().map_err(|e| {
        ToolError::new(format!(
            "The sampling request is not valid ({e}); this is a bug in the tool."
        ))
    })?;
    Ok(params)
}

fn sampled(result: CreateMessageResult) -> Sampled {
    let content = serde_json::to_value(&result.message.content).unwrap_or(Value::Null);
    let text = result
        .message
        .content
        .into_vec()
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    Sampled {
        model: result.model,
        stop_reason: result.stop_reason,
        role: match result.message.role {
            Role::User => SamplingRole::User,
            _ => SamplingRole::Assistant,
        },
        text,
        content,
    }
}
