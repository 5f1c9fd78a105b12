//! Questions as results, for clients of the stateless era (MCP 2026-07-28): a server may no
//! longer send the client a request, so what a 2025-11-25 session asks with
//! `elicitation/create` or `roots/list` comes back as an `InputRequiredResult`. Its
//! `inputRequests` hold the question, and its `requestState` says what was asked about;
//! the client retries the call with its `inputResponses` and that state.
//!
//! The state is the client's to hold, so it is signed (HMAC-SHA256, rmcp's
//! [`RequestStateCodec`], with a key drawn at random when the process starts) and bound to
//! what was asked for (a tool's call, or a prompt's `prompts/get`: see `prompt_asks`), the
//! exact arguments, the policy rule asked about, the roots already listed and an expiry.
//! Each state is taken once: the call it answers runs once, and the same state sent again
//! is refused. Every refusal is a sentence that says why and what to do.

#![expect(
    deprecated,
    reason = "roots are marked deprecated by a future protocol revision (SEP-2577), not yet gone; 2026-07-28 clients offer them"
)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest,
    InputRequests, InputRequiredResult, InputResponses, ListRootsRequest, ListRootsResult,
    RequestStateCodec, RequestStateError, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::policy::{Approval, ApprovalRequest};

/// How long a question's state is taken back: a person has this long to answer.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(600);

/// The key of the roots question in `inputRequests` (one per round, so a fixed name).
const ROOTS_KEY: &str = "roots";

/// What a round's request asks for, and its state is bound to: a tool's call, or a prompt's
/// messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Subject {
    /// `tools/call`.
    #[default]
    Tool,
    /// `prompts/get`.
    Prompt,
}

impl Subject {
    /// What is asked for, as a noun: `tool` or `prompt`.
    pub(super) fn noun(self) -> &'static str {
        match self {
            Subject::Tool => "tool",
            Subject::Prompt => "prompt",
        }
    }

    /// What to tell a client whose state or answers cannot be taken, after the reason.
    pub(super) fn ask_again(self) -> &'static str {
        match self {
            Subject::Tool => ASK_AGAIN,
            Subject::Prompt => {
                "Get the prompt again without `requestState` and `inputResponses` to be asked anew."
            }
        }
    }
}

/// What a signed state holds (readable by the client, but not changeable).
#[derive(Serialize, Deserialize)]
struct State {
    /// Makes each state one of a kind, so it is taken once.
    nonce: String,
    /// Whether `tool` names a tool or a prompt.
    #[serde(default)]
    subject: Subject,
    /// The tool called (or the prompt got).
    tool: String,
    /// The SHA-256 of the call's exact arguments (as JSON).
    args: String,
    /// The roots the client listed in an earlier round (`file://` URIs), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    roots: Option<Vec<String>>,
    /// Whether this round asked for the roots.
    #[serde(default)]
    roots_asked: bool,
    /// The policy question this round asked, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ask: Option<Asked>,
    /// The policy rule (its digest) the person allowed in an earlier round: the call run
    /// again for the tool's own questions is not asked about again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    granted: Option<String>,
    /// The answers of earlier rounds to the tool's own questions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    answers: Vec<Given>,
    /// The tool's own questions this round asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    questions: Vec<Put>,
}

/// A policy question put in a round.
#[derive(Serialize, Deserialize)]
struct Asked {
    /// Its key in `inputRequests` (unique to the round).
    key: String,
    /// The SHA-256 of the rule and the reason asked about.
    rule: String,
}

/// A tool's question put in a round.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Put {
    /// Its key in `inputRequests`.
    pub(super) key: String,
    /// What it asks: `elicitation/create`, `sampling/createMessage` or `roots/list`.
    pub(super) method: String,
    /// The SHA-256 of the request as sent.
    pub(super) digest: String,
}

/// The client's answer to a tool's question of an earlier round.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Given {
    /// The question answered.
    #[serde(flatten)]
    pub(super) put: Put,
    /// The client's result, as it sent it (checked when it came).
    pub(super) response: Value,
}

/// What the client declared in its request's capabilities, of what a call may ask.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offers {
    /// Form elicitation: the person can be asked.
    pub(crate) elicit: bool,
    /// Sampling: the client's model can be asked.
    pub(crate) sample: bool,
    /// Roots: the client can list its roots.
    pub(crate) roots: bool,
}

/// The process's signing key and the states taken so far.
struct Keeper {
    codec: RequestStateCodec,
    /// Nonces of the states taken, until their states expire anyway.
    taken: Mutex<HashMap<String, Instant>>,
}

/// The keeper, made at first use with 32 random bytes from the system; `None` when the
/// system gives none (questions then cannot be put as results).
fn keeper() -> Option<&'static Keeper> {
    static KEEPER: OnceLock<Option<Keeper>> = OnceLock::new();
    KEEPER
        .get_or_init(|| {
            let key = random_bytes(32)?;
            let codec = RequestStateCodec::try_new(key).ok()?;
            Some(Keeper {
                codec,
                taken: Mutex::new(HashMap::new()),
            })
        })
        .as_ref()
}

/// `n` bytes from the system's random source.
fn random_bytes(n: usize) -> Option<Vec<u8>> {
    let mut bytes = vec![0; n];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes)
}

pub(super) fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The digest a state binds the arguments with.
fn args_digest(args: &Value) -> String {
    hex_sha256(args.to_string().as_bytes())
}

/// The digest a state binds the policy question with: the rule and the reason it gives.
fn rule_digest(request: &ApprovalRequest) -> String {
    hex_sha256(format!("{:?}\n{}", request.rule, request.reason).as_bytes())
}

/// What to tell a tool's client whose state or answers cannot be taken, after the reason.
const ASK_AGAIN: &str =
    "Call the tool again without `requestState` and `inputResponses` to be asked anew.";

/// One round of a stateless-era call: what earlier rounds brought (the roots listed, the
/// person's answer) and what this round asks, filled in while the call is prepared.
pub(crate) struct Round {
    /// Whether the request calls a tool or gets a prompt.
    pub(super) subject: Subject,
    tool: String,
    args: String,
    /// Roots listed in an earlier round.
    pub(crate) roots: Option<Vec<String>>,
    /// The person's answer to the question asked, bound to its rule; taken once.
    answer: Mutex<Option<(String, Approval)>>,
    /// The question the policy asked in this round, if it did.
    asked: Mutex<Option<ApprovalRequest>>,
    /// Whether the client declared form elicitation in this request's capabilities.
    pub(crate) can_ask: bool,
    /// What the client declared it can be asked.
    pub(crate) offers: Offers,
    /// The policy rule allowed for this call, in this round or an earlier one.
    granted: Mutex<Option<String>>,
    /// The tool's own questions: answered in earlier rounds, and asked in this one.
    pub(super) asks: Mutex<super::tool_round::ToolAsks>,
}

impl Round {
    /// The round of a call of `tool` (or a get of the prompt `tool`, as `subject` says) with
    /// `args`, from the request's `requestState` and `inputResponses`. `offers`: what the
    /// client declared in its request's capabilities of all that may be asked. An error is
    /// the sentence refusing the request.
    pub(crate) fn open(
        subject: Subject,
        tool: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        offers: Offers,
    ) -> Result<Arc<Round>, String> {
        let again = subject.ask_again();
        let mut round = Round {
            subject,
            tool: tool.to_owned(),
            args: args_digest(args),
            roots: None,
            answer: Mutex::new(None),
            asked: Mutex::new(None),
            can_ask: offers.elicit,
            offers,
            granted: Mutex::new(None),
            asks: Mutex::new(Default::default()),
        };
        let Some(sealed) = state else {
            // Answers without a state may answer the tool's own questions, by key (SEP-2322:
            // what the server does not recognise it ignores, and what is missing it asks
            // for); the policy's question and the roots are asked as ever.
            round
                .asks
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .unsigned = responses.filter(|r| !r.is_empty()).cloned();
            return Ok(Arc::new(round));
        };
        let keeper = keeper().ok_or_else(|| {
            "The server cannot check a `requestState` (it has no signing key: the system gave no random bytes), so nothing ran.".to_owned()
        })?;
        let state: State = keeper.codec.open_json(sealed).map_err(|e| match e {
            RequestStateError::Expired => format!(
                "The `requestState` has expired (a question is answered within {} minutes), so nothing ran. {again}",
                STATE_TTL.as_secs() / 60
            ),
            _ => format!(
                "The `requestState` was not made by this server process: it was altered, or it comes from another server or from before a restart, so nothing ran. {again}"
            ),
        })?;
        if state.subject != round.subject || state.tool != round.tool || state.args != round.args {
            return Err(format!(
                "The `requestState` was given for another call (the {} `{}` with other arguments), and an answer holds only for the exact call it was asked about, so nothing ran. {again}",
                state.subject.noun(),
                state.tool
            ));
        }
        let responses = responses.cloned().unwrap_or_default();
        if state.roots_asked {
            let listed = responses.get(ROOTS_KEY).ok_or_else(|| {
                format!("The `inputResponses` hold no answer to the `{ROOTS_KEY}` request (roots/list) this round asked, so nothing ran. Answer it under that key with the state, or {}", lower_first(again))
            })?;
            let listed: ListRootsResult = serde_json::from_value(listed.clone()).map_err(|e| {
                format!("The answer to `{ROOTS_KEY}` is not a roots/list result ({e}), so nothing ran. Answer with {{\"roots\": [{{\"uri\": \"file:///...\"}}]}}.")
            })?;
            round.roots = Some(listed.roots.into_iter().map(|r| r.uri).collect());
        } else {
            round.roots = state.roots.clone();
        }
        if let Some(asked) = &state.ask {
            let Some(answer) = responses.get(&asked.key) else {
                let given: Vec<&str> = responses.keys().map(String::as_str).collect();
                return Err(format!(
                    "The `inputResponses` answer {}, which is not the question this `requestState` asked (`{}`), so nothing ran. Answer that question under its key. {again}",
                    if given.is_empty() {
                        "nothing".to_owned()
                    } else {
                        format!("`{}`", given.join("`, `"))
                    },
                    asked.key
                ));
            };
            let answer: ElicitResult = serde_json::from_value(answer.clone()).map_err(|e| {
                format!("The answer to `{}` is not an elicitation result ({e}), so nothing ran. Answer with {{\"action\": \"accept\", \"content\": {{\"answer\": \"allow_once\"}}}} or another action.", asked.key)
            })?;
            let approval = match answer.action {
                ElicitationAction::Accept => super::elicit::chosen(answer.content.as_ref()),
                _ => Approval::Deny(None),
            };
            *round.answer.get_mut().unwrap_or_else(|e| e.into_inner()) =
                Some((asked.rule.clone(), approval));
        } else if let Some(rule) = &state.granted {
            *round.answer.get_mut().unwrap_or_else(|e| e.into_inner()) =
                Some((rule.clone(), Approval::AllowOnce));
        }
        let answers =
            super::tool_round::answers(state.answers, &state.questions, &responses, again)?;
        round
            .asks
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .given = answers;
        keeper.take(&state.nonce, again)?;
        Ok(Arc::new(round))
    }

    /// The person's answer to `request`, when this round brings one for its rule (taken
    /// once); else the question is kept to be put in this round's result.
    pub(crate) fn answer_or_ask(&self, request: ApprovalRequest) -> Option<Approval> {
        let rule = rule_digest(&request);
        let mut answer = self.answer.lock().unwrap_or_else(|e| e.into_inner());
        if answer.as_ref().is_some_and(|(r, _)| *r == rule) {
            let approval = answer.take().map(|(_, approval)| approval);
            if matches!(
                approval,
                Some(Approval::AllowOnce | Approval::AllowForSession)
            ) {
                *self.granted.lock().unwrap_or_else(|e| e.into_inner()) = Some(rule);
            }
            return approval;
        }
        *self.asked.lock().unwrap_or_else(|e| e.into_inner()) = Some(request);
        None
    }

    /// Whether the policy asked a question in this round (the call then ends with it).
    pub(crate) fn policy_asked(&self) -> bool {
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// The input-required result asking the policy's question, or else the tool's own
    /// questions, when this round asked any.
    pub(crate) fn question(&self) -> Option<Result<InputRequiredResult, String>> {
        let request = self.asked.lock().unwrap_or_else(|e| e.into_inner()).take();
        match request {
            Some(request) => Some(self.ask_person(&request)),
            None => self.tool_questions(),
        }
    }

    /// The state of the next round of this call, carrying what this one knows (the roots
    /// listed, the rule allowed, the tool's answers) and asking `questions`.
    pub(super) fn next_state(
        &self,
        given: Vec<Given>,
        questions: Vec<Put>,
    ) -> Result<String, String> {
        seal(&State {
            nonce: nonce()?,
            subject: self.subject,
            tool: self.tool.clone(),
            args: self.args.clone(),
            roots: self.roots.clone(),
            roots_asked: false,
            ask: None,
            granted: self
                .granted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            answers: given,
            questions,
        })
    }

    fn ask_person(&self, request: &ApprovalRequest) -> Result<InputRequiredResult, String> {
        let nonce = nonce()?;
        let key = format!("approve-{}", &nonce[..12]);
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: super::elicit::message(request),
            requested_schema: super::elicit::schema(),
        };
        let state = State {
            nonce,
            subject: self.subject,
            tool: self.tool.clone(),
            args: self.args.clone(),
            roots: self.roots.clone(),
            roots_asked: false,
            ask: Some(Asked {
                key: key.clone(),
                rule: rule_digest(request),
            }),
            granted: None,
            answers: Vec::new(),
            questions: Vec::new(),
        };
        let requests =
            InputRequests::from([(key, InputRequest::Elicitation(ElicitRequest::new(params)))]);
        Ok(InputRequiredResult::new(
            Some(requests),
            Some(seal(&state)?),
        ))
    }

    /// The input-required result asking the client for its roots.
    pub(crate) fn ask_roots(&self) -> Result<InputRequiredResult, String> {
        let state = State {
            nonce: nonce()?,
            subject: self.subject,
            tool: self.tool.clone(),
            args: self.args.clone(),
            roots: None,
            roots_asked: true,
            ask: None,
            granted: None,
            answers: Vec::new(),
            questions: Vec::new(),
        };
        let requests = InputRequests::from([(
            ROOTS_KEY.to_owned(),
            InputRequest::ListRoots(ListRootsRequest {
                method: Default::default(),
                extensions: Default::default(),
            }),
        )]);
        Ok(InputRequiredResult::new(
            Some(requests),
            Some(seal(&state)?),
        ))
    }
}

impl Keeper {
    /// Takes the state with `nonce`, refusing one already taken (`again` says what to do).
    fn take(&self, nonce: &str, again: &str) -> Result<(), String> {
        let now = Instant::now();
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken.retain(|_, until| *until > now);
        if taken.insert(nonce.to_owned(), now + STATE_TTL).is_some() {
            return Err(format!(
                "The `requestState` was already used: an answer runs its call once, and that call was run (or refused) already, so nothing ran now. {again}"
            ));
        }
        Ok(())
    }
}

fn nonce() -> Result<String, String> {
    random_bytes(16)
        .map(|b| b.iter().map(|b| format!("{b:02x}")).collect())
        .ok_or_else(|| {
            "The server cannot put the question (the system gave no random bytes), so nothing ran."
                .to_owned()
        })
}

fn seal(state: &State) -> Result<String, String> {
    seal_for(state, STATE_TTL)
}

/// `state`, signed and taken back for `ttl`.
fn seal_for(state: &State, ttl: Duration) -> Result<String, String> {
    let keeper = keeper().ok_or_else(|| {
        "The server cannot put the question (it has no signing key: the system gave no random bytes), so nothing ran.".to_owned()
    })?;
    keeper
        .codec
        .seal_json_with(state, &SealOptions::new().ttl(ttl))
        .map_err(|e| {
            format!("The question's state could not be signed ({e}); this is a bug in pi-tools.")
        })
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(args: &Value) -> State {
        State {
            nonce: nonce().expect("random bytes"),
            subject: Subject::Tool,
            tool: "write".to_owned(),
            args: args_digest(args),
            roots: None,
            roots_asked: false,
            ask: None,
            granted: None,
            answers: Vec::new(),
            questions: Vec::new(),
        }
    }

    const ALL: Offers = Offers {
        elicit: true,
        sample: true,
        roots: true,
    };

    #[test]
    fn an_expired_state_is_refused_saying_so() {
        let args = serde_json::json!({"path": "a"});
        let sealed = seal_for(&state(&args), Duration::from_millis(1)).expect("sealed");
        std::thread::sleep(Duration::from_millis(20));
        let refused = Round::open(Subject::Tool, "write", &args, Some(&sealed), None, ALL)
            .err()
            .expect("refused");
        assert!(
            refused.starts_with("The `requestState` has expired"),
            "{refused}"
        );
    }

    #[test]
    fn a_fresh_state_is_taken_once() {
        let args = serde_json::json!({"path": "a"});
        let sealed = seal(&state(&args)).expect("sealed");
        assert!(Round::open(Subject::Tool, "write", &args, Some(&sealed), None, ALL).is_ok());
        let refused = Round::open(Subject::Tool, "write", &args, Some(&sealed), None, ALL)
            .err()
            .expect("refused");
        assert!(refused.contains("already used"), "{refused}");
    }
}
