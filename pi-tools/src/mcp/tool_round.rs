//! A tool's own questions in the stateless era (MCP 2026-07-28): a question the tool asks
//! with no answer yet is kept in the call's round, and the call ends with an input-required
//! result asking it; the retried request runs the tool again from the start, and each of its
//! questions, asked in the same order, finds its answer in the signed `requestState`.
//!
//! Once the call became a task (see `tasks`), a question without an answer is the task's
//! instead: the tool waits for `tasks/update` to answer it, and is not run again.
//!
//! A question is known by its key in `inputRequests` (the tool's id for it, or its place in
//! the order of asking) and by the digest of the request as sent: an answer is given back
//! only to the very question it answered. The state carries every answer of the earlier
//! rounds, so a tool of many rounds gets them all back on each run.

#![expect(
    deprecated,
    reason = "sampling and roots are marked deprecated by a future protocol revision (SEP-2577), not yet gone; 2026-07-28 clients offer them"
)]

use std::collections::HashSet;

use rmcp::model::{
    CreateMessageResult, ElicitResult, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListRootsResult,
};
use serde_json::Value;

use super::mrtr::{Given, Put, Round, hex_sha256};
use super::tasks::TaskLink;

/// The keys pi-tools puts its own questions under (the client's roots, the policy's
/// question), which a tool's question may not take.
const RESERVED: [&str; 2] = ["roots", "approve-"];

/// The tool's questions in one round.
#[derive(Default)]
pub(crate) struct ToolAsks {
    /// The answers of the earlier rounds.
    pub(super) given: Vec<Given>,
    /// How many questions the tool asked in this run.
    next: usize,
    /// The keys asked in this run.
    used: HashSet<String>,
    /// The questions of this run without an answer, to be put in the result.
    asked: Vec<(Put, InputRequest)>,
    /// The capability a question needed that the client did not declare.
    missing: Option<&'static str>,
    /// Why an answer could not be taken (it answered another question).
    refused: Option<String>,
    /// Answers the client sent without a `requestState` (it answered before it was asked,
    /// or lost the state): each is taken by the tool's question of its key, and the rest
    /// are ignored. They answer only the tool's own questions, never the policy's or the
    /// roots request, whose answers hold only under the server's signed state.
    pub(super) unsigned: Option<InputResponses>,
    /// The task the call became, which takes its questions from then on.
    task: Option<TaskLink>,
}

/// Where a tool's question stands in its round.
pub(crate) enum Asked {
    /// An earlier round brought its answer.
    Answered(Value),
    /// It is put in this round's input-required result: the run ends.
    Put,
    /// It is the task's: the answer comes when `tasks/update` brings it (the sender is
    /// dropped when the task ends first).
    InTask(tokio::sync::oneshot::Receiver<Value>),
}

/// Whether `response`, the answer under `key` to `request`, is a result of its method; if
/// not, the sentence refusing it (for `tasks/update`).
pub(crate) fn answers_question(
    key: &str,
    request: &InputRequest,
    response: &Value,
) -> Result<(), String> {
    readable(key, method_of(request), response)
}

/// The answers of a round: `given` (of the earlier rounds) and the client's answer to each
/// of `questions` (this round's) from `responses`, checked to be a result of the method
/// asked. An error is the sentence refusing the request, ending with `again` (what to do).
pub(super) fn answers(
    mut given: Vec<Given>,
    questions: &[Put],
    responses: &InputResponses,
    again: &str,
) -> Result<Vec<Given>, String> {
    for put in questions {
        let Some(response) = responses.get(&put.key) else {
            return Err(format!(
                "The `inputResponses` hold no answer to `{}` ({}), which this round asked, so nothing ran. Answer every question of the round under its key, with the `requestState` as it came. {again}",
                put.key, put.method
            ));
        };
        readable(&put.key, &put.method, response)?;
        given.push(Given {
            put: put.clone(),
            response: response.clone(),
        });
    }
    Ok(given)
}

/// Whether `response`, the answer under `key`, is a result of `method`; if not, the sentence
/// refusing the request.
fn readable(key: &str, method: &str, response: &Value) -> Result<(), String> {
    let readable = match method {
        "elicitation/create" => serde_json::from_value::<ElicitResult>(response.clone())
            .map(drop)
            .map_err(|e| (e, "{\"action\": \"accept\", \"content\": {...}}")),
        "sampling/createMessage" => serde_json::from_value::<CreateMessageResult>(response.clone())
            .map(drop)
            .map_err(|e| {
                (
                    e,
                    "{\"role\": \"assistant\", \"content\": {\"type\": \"text\", \"text\": \"...\"}, \"model\": \"...\"}",
                )
            }),
        _ => serde_json::from_value::<ListRootsResult>(response.clone())
            .map(drop)
            .map_err(|e| (e, "{\"roots\": [{\"uri\": \"file:///...\"}]}")),
    };
    readable.map_err(|(error, shape)| {
        format!("The answer to `{key}` is not a {method} result ({error}), so nothing ran. Answer with {shape}.")
    })
}

/// The method a request asks with.
fn method_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "elicitation/create",
    }
}

impl Round {
    /// The tool asks `request` (named `id`, else by its place in the order of asking): the
    /// client's answer when an earlier round brought it, `Ok(None)` when it is asked in this
    /// round's result, and an error (the sentence the call is refused with) when the answer
    /// under its key was given to another question.
    pub(crate) fn tool_ask(
        &self,
        id: Option<&str>,
        request: InputRequest,
    ) -> Result<Asked, String> {
        let method = method_of(&request);
        let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
        asks.next += 1;
        let key = match id {
            Some(id) => id.to_owned(),
            None => format!(
                "{}-{}",
                method.split('/').next().unwrap_or("ask"),
                asks.next
            ),
        };
        if RESERVED
            .iter()
            .any(|r| key == *r || (r.ends_with('-') && key.starts_with(r)))
        {
            return Err(format!(
                "The tool named a question `{key}`, a key pi-tools keeps for its own questions (`roots`, `approve-...`); this is a bug in the tool: give the question another id."
            ));
        }
        if !asks.used.insert(key.clone()) {
            return Err(format!(
                "The tool asked two questions under the key `{key}` in one run; this is a bug in the tool: give each question an id of its own."
            ));
        }
        let digest = hex_sha256(
            serde_json::to_string(&request)
                .unwrap_or_default()
                .as_bytes(),
        );
        if let Some(given) = asks.given.iter().find(|g| g.put.key == key) {
            if given.put.digest != digest || given.put.method != method {
                let refusal = format!(
                    "The answer under `{key}` was given to another question than the one the {noun} asks now (a {noun} must ask the same questions in the same order on every run), so it was not taken. {}",
                    self.subject.ask_again(),
                    noun = self.subject.noun()
                );
                asks.refused.get_or_insert(refusal.clone());
                return Err(refusal);
            }
            return Ok(Asked::Answered(given.response.clone()));
        }
        let put = Put {
            key,
            method: method.to_owned(),
            digest,
        };
        let unsigned = asks
            .unsigned
            .as_ref()
            .and_then(|r| r.get(&put.key))
            .cloned();
        if let Some(response) = unsigned {
            if let Err(refusal) = readable(&put.key, method, &response) {
                asks.refused.get_or_insert(refusal.clone());
                return Err(refusal);
            }
            // Carried in the state of a later question of this run, as a signed answer.
            asks.given.push(Given {
                put,
                response: response.clone(),
            });
            return Ok(Asked::Answered(response));
        }
        if let Some(link) = &asks.task {
            return match link.tasks.ask(&link.id, put.key, request) {
                Some(answer) => Ok(Asked::InTask(answer)),
                None => Err(
                    "The task of this call ended (it was cancelled) before its question could be put."
                        .to_owned(),
                ),
            };
        }
        asks.asked.push((put, request));
        Ok(Asked::Put)
    }

    /// The call became the task `link`: its questions are the task's from now on. `false`
    /// (and nothing changes) when it already put a question in this round's result or the
    /// policy asked: the run is ending with that result, which a task could not give.
    pub(crate) fn attach_task(&self, link: TaskLink) -> bool {
        let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
        if !asks.asked.is_empty() || self.policy_asked() {
            return false;
        }
        asks.task = Some(link);
        true
    }

    /// Notes that the tool asked for `capability`, which the client did not declare.
    pub(crate) fn note_missing(&self, capability: &'static str) {
        let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
        asks.missing.get_or_insert(capability);
    }

    /// The capability a question of this run needed that the client did not declare.
    pub(crate) fn missing_capability(&self) -> Option<&'static str> {
        self.asks.lock().unwrap_or_else(|e| e.into_inner()).missing
    }

    /// Why an answer of this round was refused, if one was.
    pub(crate) fn refusal(&self) -> Option<String> {
        self.asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .refused
            .take()
    }

    /// The input-required result asking the tool's questions of this run, if it asked any
    /// that had no answer; its state carries every answer so far.
    pub(super) fn tool_questions(&self) -> Option<Result<InputRequiredResult, String>> {
        let (given, asked) = {
            let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
            if asks.asked.is_empty() {
                return None;
            }
            (asks.given.clone(), std::mem::take(&mut asks.asked))
        };
        let puts = asked.iter().map(|(put, _)| put.clone()).collect();
        let requests: InputRequests = asked
            .into_iter()
            .map(|(put, request)| (put.key, request))
            .collect();
        Some(
            self.next_state(given, puts)
                .map(|state| InputRequiredResult::new(Some(requests), Some(state))),
        )
    }
}
