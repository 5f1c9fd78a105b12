//! Asking the client's user: a call the policy says `ask` for is put to the person behind the
//! MCP client through `elicitation/create`, when the client declared the `elicitation`
//! capability; without it the call is denied, saying the client cannot be asked.
//!
//! Each session gets a policy hook of its own (see [`Session::for_client`]) whose approver
//! asks that session's client, so an answer "for this session" holds in that session only. The question
//! is put in the runner's prepare phase: nothing of the call has started until it is answered.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use serde_json::{Value, json};

use super::mrtr::Round;
use tokio_util::sync::CancellationToken;

use crate::core::{BoxFuture, RunnerConfig};
use crate::env::EnvOf;
use crate::env::local::process_env;
use crate::policy::{Approval, ApprovalRequest, Approver};
use crate::session::{Session, SessionOf, WithSession};

/// How long a question waits for the person's answer before the call is denied.
pub(crate) const ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest arguments text put in a question; the rest is cut (the person still sees the
/// rule and the reason, which decide).
const MAX_ARGS_CHARS: usize = 2000;

/// The answers offered, as the schema's values.
const ALLOW_ONCE: &str = "allow_once";
const ALLOW_SESSION: &str = "allow_session";
const DENY: &str = "deny";

tokio::task_local! {
    /// The round of a stateless-era call being prepared (see `mrtr`): its question goes
    /// into the call's result instead of a request to the client.
    static ROUND: Arc<Round>;
}

/// Runs `work` (one call of a stateless-era request) with `round` as its round: a policy
/// question is then answered from the round, or kept in it to be put as a result.
pub(crate) async fn with_round<F: std::future::Future>(round: Arc<Round>, work: F) -> F::Output {
    ROUND.scope(round, work).await
}

/// The round of the call being prepared in this task, if it is of the stateless era.
fn round() -> Option<Arc<Round>> {
    ROUND.try_with(Arc::clone).ok()
}

/// The approver of one MCP session: asks its client through elicitation.
pub(crate) struct ClientApprover {
    /// The session's client as its latest call reached it. A session that slept was woken
    /// with a new worker, so the way to its client changes: the first call's is closed.
    peer: Mutex<Option<Peer<RoleServer>>>,
    /// The approver the configuration's hook had, asked when the client cannot be.
    fallback: Option<Arc<dyn Approver>>,
    /// Whether the session is one request of a stateless HTTP server, which knows nothing
    /// the client declared and could not match an answer to its question.
    stateless: AtomicBool,
}

impl ClientApprover {
    /// Remembers the way to the session's client as this call reached it (the same client
    /// throughout, but a new way after the session slept and woke), and whether the
    /// session is a request of a stateless HTTP server.
    pub(crate) fn bind(&self, peer: &Peer<RoleServer>, stateless: bool) {
        *self.peer.lock().unwrap_or_else(|e| e.into_inner()) = Some(peer.clone());
        self.stateless.store(stateless, Ordering::Relaxed);
    }

    /// The client, when it declared form elicitation at `initialize` and can be sent a
    /// request.
    fn askable(&self) -> Option<Peer<RoleServer>> {
        if self.stateless.load(Ordering::Relaxed) {
            return None;
        }
        self.peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|peer| {
                peer.supported_elicitation_modes()
                    .contains(&ElicitationMode::Form)
            })
    }

    async fn ask(&self, peer: &Peer<RoleServer>, request: ApprovalRequest) -> Approval {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: super::tasks_2025::related_task_meta(),
            message: message(&request),
            requested_schema: schema(),
        };
        // The runner does not cancel a before-call hook: a question still open when the
        // call is cancelled (by the client, or by the end of the session) stops waiting
        // here, and the call ends at once.
        let cancel = request.cancel.clone();
        let answer = tokio::select! {
            answer = super::tasks_2025::waiting_on_client(
                peer.create_elicitation_with_timeout(params, Some(ASK_TIMEOUT)),
            ) => answer,
            () = cancel.cancelled() => return Approval::Deny(None),
        };
        match answer {
            Ok(result) => match result.action {
                ElicitationAction::Accept => chosen(result.content.as_ref()),
                // Decline, cancel, and whatever a later revision adds: not a yes.
                _ => Approval::Deny(None),
            },
            Err(err) => {
                tracing::warn!(%err, tool = %request.tool, "the client's answer to a policy question could not be had; the call is denied");
                Approval::Deny(None)
            }
        }
    }
}

impl Approver for ClientApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval> {
        Box::pin(async move {
            if let Some(round) = round()
                && round.can_ask
            {
                // Answered in this round, or asked as the call's result: the runner's
                // denial meanwhile is never sent (the call did not start). The stateless
                // house serves every client, so an answer holds for this call alone.
                return round
                    .answer_or_ask(request)
                    .map(for_this_call)
                    .unwrap_or(Approval::Deny(Some(
                        "The question is put to the person as the call's result.".to_owned(),
                    )));
            }
            let stateless = self.stateless.load(Ordering::Relaxed);
            let approval = match (self.askable(), &self.fallback) {
                (Some(peer), _) => self.ask(&peer, request).await,
                (None, Some(fallback)) => fallback.approve(request).await,
                (None, None) => Approval::Deny(None),
            };
            // A request of a stateless server is served by the house of every client.
            match stateless {
                true => for_this_call(approval),
                false => approval,
            }
        })
    }

    fn unavailable(&self) -> Option<String> {
        let round = round();
        if round.as_ref().is_some_and(|r| r.can_ask) {
            return None;
        }
        if round.is_none() && self.askable().is_some() {
            return None;
        }
        if let Some(fallback) = &self.fallback {
            return fallback.unavailable();
        }
        if round.is_some() {
            return Some(
                "The MCP client cannot be asked: its request did not declare the elicitation \
                 capability in `_meta` (`io.modelcontextprotocol/clientCapabilities`)."
                    .to_owned(),
            );
        }
        Some(match self.stateless.load(Ordering::Relaxed) {
            true => "The MCP client cannot be asked: the server runs without sessions \
                     (stateless HTTP), so it cannot send the client a question."
                .to_owned(),
            false => "The MCP client cannot be asked: it did not declare the elicitation \
                      capability when it connected."
                .to_owned(),
        })
    }
}

/// `approval` holding for the call asked about only: where the session is the stateless
/// house, which serves the requests of every client, "for the session" would let one
/// client's answer allow another client's calls.
fn for_this_call(approval: Approval) -> Approval {
    match approval {
        Approval::AllowForSession => Approval::AllowOnce,
        other => other,
    }
}

/// The session of one client, made from the configuration a server gives it: it works in
/// the configuration's environment, ends with `cancel`, and, when the configuration's
/// session has a policy, is judged by a hook of its own whose approver asks this client
/// (see [`Session::for_client`]). Returns the configuration carrying it, the session, and
/// that approver.
pub(crate) fn client_session(
    config: RunnerConfig,
    cancel: CancellationToken,
) -> (RunnerConfig, Arc<Session>, Option<Arc<ClientApprover>>) {
    let env = config.env().cloned().unwrap_or_else(process_env);
    let (session, approver) = match config.session() {
        Some(base) => {
            let approver = base.policy().map(|hook| {
                Arc::new(ClientApprover {
                    peer: Mutex::new(None),
                    fallback: hook.approver().cloned(),
                    stateless: AtomicBool::new(false),
                })
            });
            let asks = approver.clone().map(|a| a as Arc<dyn Approver>);
            (base.for_client(env, asks), approver)
        }
        None => (Session::new(env), None),
    };
    let session = Arc::new(session.with_cancel(cancel));
    (config.with_session(session.clone()), session, approver)
}

/// The question: the tool, its arguments, and why the policy asks (the rule with its
/// position and reason).
pub(crate) fn message(request: &ApprovalRequest) -> String {
    let mut args = request.args.to_string();
    if let Some((cut, _)) = args.char_indices().nth(MAX_ARGS_CHARS) {
        args.truncate(cut);
        args.push('…');
    }
    format!(
        "The model wants to call the tool `{}` with {args}. {}",
        request.tool, request.reason
    )
}

/// The form: one choice among the approver's answers, and a message for the model.
pub(crate) fn schema() -> ElicitationSchema {
    let schema = json!({
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Your answer",
                "oneOf": [
                    {"const": ALLOW_ONCE, "title": "Allow this call once"},
                    {"const": ALLOW_SESSION, "title": "Allow such calls for this session"},
                    {"const": DENY, "title": "Deny it"}
                ]
            },
            "message": {
                "type": "string",
                "title": "A message for the model (when denying)"
            }
        },
        "required": ["answer"]
    });
    let Value::Object(object) = schema else {
        unreachable!("the schema is an object literal")
    };
    ElicitationSchema::from_json_schema(object).expect("the answer form is a valid schema")
}

/// The answer chosen in an accepted form; anything unreadable denies.
pub(crate) fn chosen(content: Option<&Value>) -> Approval {
    let field = |name: &str| content.and_then(|c| c.get(name)).and_then(Value::as_str);
    match field("answer") {
        Some(ALLOW_ONCE) => Approval::AllowOnce,
        Some(ALLOW_SESSION) => Approval::AllowForSession,
        _ => Approval::Deny(field("message").map(str::to_owned)),
    }
}

#[cfg(test)]
mod tests {
    use super::{Approval, chosen, schema};
    use serde_json::json;

    #[test]
    fn the_form_offers_the_approvers_answers() {
        let schema = serde_json::to_value(schema()).expect("serialises");
        assert_eq!(
            schema["properties"]["answer"]["oneOf"],
            json!([
                {"const": "allow_once", "title": "Allow this call once"},
                {"const": "allow_session", "title": "Allow such calls for this session"},
                {"const": "deny", "title": "Deny it"}
            ])
        );
        assert_eq!(schema["required"], json!(["answer"]));
    }

    #[test]
    fn an_accepted_form_gives_the_chosen_answer() {
        assert_eq!(
            chosen(Some(&json!({"answer": "allow_once"}))),
            Approval::AllowOnce
        );
        assert_eq!(
            chosen(Some(&json!({"answer": "allow_session"}))),
            Approval::AllowForSession
        );
        assert_eq!(
            chosen(Some(
                &json!({"answer": "deny", "message": "use the staging copy"})
            )),
            Approval::Deny(Some("use the staging copy".to_owned()))
        );
        assert_eq!(
            chosen(Some(&json!({"answer": "maybe"}))),
            Approval::Deny(None)
        );
        assert_eq!(chosen(None), Approval::Deny(None));
    }
}
