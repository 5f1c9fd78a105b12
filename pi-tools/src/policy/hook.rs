//! Enforcement: the policy as a before-call hook, so a denied call ends in the prepare phase
//! with an error result and nothing starts; `ask` goes to an [`Approver`] when there is one
//! and is denied when there is none.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;

use super::shell::{self, ShellReading};
use super::{Decision, Policy, Rule, Verdict};
use crate::core::{
    BeforeToolCall, BeforeToolCallContext, BeforeToolCallOutcome, BoxFuture, Extensions, ToolError,
};
use crate::env::EnvOf;

/// What a person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run this call.
    AllowOnce,
    /// Run this call and, for the rest of the session, every call this rule asks about.
    AllowForSession,
    /// Do not run it; the message (if any) is passed to the model.
    Deny(Option<String>),
}

/// The question put to a person.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The tool called.
    pub tool: String,
    /// The call's arguments.
    pub args: Json,
    /// The rule that asks (`None`: a command the policy could not read).
    pub rule: Option<Rule>,
    /// Why the policy asks, in one sentence.
    pub reason: String,
    /// The call's cancellation token: an approver stops waiting for an answer when it is
    /// cancelled (the call is then denied).
    pub cancel: CancellationToken,
}

/// Asks a person about a call the policy says `ask` for (a terminal prompt, an MCP
/// elicitation, a chat button).
pub trait Approver: Send + Sync {
    /// The person's answer.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval>;

    /// Why no one can be asked at this moment, as a sentence (an MCP client that did not
    /// declare elicitation, say); the call is then denied without a question. `None` (the
    /// default): [`Approver::approve`] is asked.
    fn unavailable(&self) -> Option<String> {
        None
    }
}

/// The policy as the runner's before-call hook.
pub struct PolicyHook {
    policy: Arc<Policy>,
    /// The working directory paths are resolved against, found once.
    cwd: PathBuf,
    approver: Option<Arc<dyn Approver>>,
    /// What a person allowed for the session: (tool, rule index).
    allowed: Mutex<HashSet<(String, usize)>>,
    /// Readings of the shell commands seen last: a model runs `cargo test` and `git status`
    /// again and again, and reading a command costs more than judging it.
    readings: Mutex<ReadingCache>,
}

/// How many distinct command texts a hook keeps the reading of.
const READINGS_KEPT: usize = 32;
/// A longer command (a file written through a here-document, say) is read anew each time
/// rather than kept.
const READING_MAX_TEXT: usize = 4096;

/// The readings of the last [`READINGS_KEPT`] distinct command texts, the most recent last.
/// A reading depends on the text alone, so a kept one is the one reading anew would give.
#[derive(Default)]
struct ReadingCache(Vec<(String, Arc<ShellReading>)>);

impl ReadingCache {
    fn read(cache: &Mutex<ReadingCache>, text: &str) -> Arc<ShellReading> {
        if text.len() > READING_MAX_TEXT {
            return Arc::new(shell::read(text));
        }
        if let Ok(mut kept) = cache.lock()
            && let Some(at) = kept.0.iter().position(|(t, _)| t == text)
        {
            let entry = kept.0.remove(at);
            let reading = Arc::clone(&entry.1);
            kept.0.push(entry);
            return reading;
        }
        // Read outside the lock: calls of one batch are judged concurrently.
        let reading = Arc::new(shell::read(text));
        if let Ok(mut kept) = cache.lock()
            && !kept.0.iter().any(|(t, _)| t == text)
        {
            if kept.0.len() >= READINGS_KEPT {
                kept.0.remove(0);
            }
            kept.0.push((text.to_owned(), Arc::clone(&reading)));
        }
        reading
    }
}

impl PolicyHook {
    /// A hook deciding by `policy`; paths are resolved against the working directory of the
    /// extensions' [`ExecutionEnv`](crate::env::ExecutionEnv) (else the process's).
    pub fn new(policy: Arc<Policy>, extensions: Extensions) -> Self {
        let cwd = extensions
            .env()
            .map(|env| env.cwd().to_path_buf())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        PolicyHook {
            policy,
            cwd,
            approver: None,
            allowed: Mutex::new(HashSet::new()),
            readings: Mutex::default(),
        }
    }

    /// Asks `approver` where the policy says `ask` (without one, `ask` denies).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The approver asked where the policy says `ask`, if any.
    pub fn approver(&self) -> Option<&Arc<dyn Approver>> {
        self.approver.as_ref()
    }

    /// A hook with the same policy and working directory for another session of a server
    /// that serves many (the MCP server): it asks `approver`, and what a person allows "for
    /// the session" there stays in that session.
    pub fn for_session(&self, approver: Arc<dyn Approver>) -> PolicyHook {
        self.for_session_asking(Some(approver))
    }

    /// [`for_session`](Self::for_session), asking `approver` if there is one (without one,
    /// `ask` denies).
    pub(crate) fn for_session_asking(&self, approver: Option<Arc<dyn Approver>>) -> PolicyHook {
        PolicyHook {
            policy: Arc::clone(&self.policy),
            cwd: self.cwd.clone(),
            approver,
            allowed: Mutex::new(HashSet::new()),
            readings: Mutex::default(),
        }
    }

    /// Whether the policy lets a call of `tool` with `args` run without asking anyone: an
    /// allow, or an `ask` a person already allowed for the session. Otherwise the sentence
    /// that says why not (for a front that cannot ask, such as a resource read).
    pub fn allows_unasked(&self, tool: &str, args: &serde_json::Value) -> Result<(), String> {
        let verdict = self.policy.check_with(tool, args, &self.cwd, |text| {
            ReadingCache::read(&self.readings, text)
        });
        match verdict.decision {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(denial(&self.policy, &verdict)),
            Decision::Ask => {
                let remembered = verdict.rule.is_some_and(|i| {
                    self.allowed
                        .lock()
                        .is_ok_and(|set| set.contains(&(tool.to_owned(), i)))
                });
                if remembered {
                    Ok(())
                } else {
                    Err(question(&self.policy, &verdict))
                }
            }
        }
    }

    async fn decide(&self, ctx: BeforeToolCallContext) -> BeforeToolCallOutcome {
        let tool = ctx.call.name.clone();
        let verdict = self.policy.check_with(&tool, &ctx.args, &self.cwd, |text| {
            ReadingCache::read(&self.readings, text)
        });
        match verdict.decision {
            Decision::Allow => BeforeToolCallOutcome::Continue,
            Decision::Deny => block(denial(&self.policy, &verdict)),
            Decision::Ask => {
                let key = verdict.rule.map(|i| (tool.clone(), i));
                let remembered = key
                    .as_ref()
                    .is_some_and(|k| self.allowed.lock().is_ok_and(|set| set.contains(k)));
                if remembered {
                    return BeforeToolCallOutcome::Continue;
                }
                let reason = question(&self.policy, &verdict);
                let Some(approver) = &self.approver else {
                    return block(format!(
                        "{reason} No one can be asked here, so the call was denied and nothing ran. {INSTEAD}"
                    ));
                };
                if let Some(why) = approver.unavailable() {
                    return block(format!(
                        "{reason} {why} So the call was denied and nothing ran. {INSTEAD}"
                    ));
                }
                let request = ApprovalRequest {
                    tool: tool.clone(),
                    args: ctx.args,
                    rule: verdict.rule.and_then(|i| self.policy.rule(i)).cloned(),
                    reason: reason.clone(),
                    cancel: ctx.cancel,
                };
                match approver.approve(request).await {
                    Approval::AllowOnce => BeforeToolCallOutcome::Continue,
                    Approval::AllowForSession => {
                        if let (Some(key), Ok(mut set)) = (key, self.allowed.lock()) {
                            set.insert(key);
                        }
                        BeforeToolCallOutcome::Continue
                    }
                    Approval::Deny(message) => {
                        let said = message
                            .filter(|m| !m.trim().is_empty())
                            .map(|m| format!(" They said: {m}"))
                            .unwrap_or_default();
                        block(format!(
                            "{reason} The person asked declined, so nothing ran.{said} {INSTEAD}"
                        ))
                    }
                }
            }
        }
    }
}

impl BeforeToolCall for PolicyHook {
    fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext,
    ) -> BoxFuture<'_, Result<BeforeToolCallOutcome, ToolError>> {
        Box::pin(async move { Ok(self.decide(ctx).await) })
    }
}

impl std::fmt::Debug for PolicyHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyHook")
            .field("rules", &self.policy.rules.len())
            .field("approver", &self.approver.is_some())
            .finish_non_exhaustive()
    }
}

const INSTEAD: &str = "Do not retry it in another form: do what the policy allows instead, or \
                       ask the user to do this step themselves.";

fn block(reason: String) -> BeforeToolCallOutcome {
    BeforeToolCallOutcome::Block {
        reason: Some(reason),
    }
}

/// What decided: the part of a shell command, then the rule (or the default).
fn cause(policy: &Policy, verdict: &Verdict) -> String {
    let part = verdict
        .deciding_part()
        .map(|p| {
            let note = p
                .note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!("`{}`{note} ", p.text)
        })
        .unwrap_or_else(|| "this call ".to_owned());
    match verdict.rule.and_then(|i| policy.rule(i)) {
        Some(rule) => {
            let reason = rule
                .reason
                .as_deref()
                .map(|r| format!(" Its reason: {r}"))
                .unwrap_or_default();
            format!(
                "{part}is covered by the policy rule at {} ({}).{reason}",
                rule.position,
                rule.summary()
            )
        }
        None if verdict.deciding_part().is_some_and(|p| {
            p.note
                .as_deref()
                .is_some_and(|n| n.starts_with(super::OTHER_NAMES))
        }) =>
        {
            format!(
                "{part}writes a file that has other names, one of which a path rule may protect, so a person decides. Write to a new file of its own instead, or ask the user to make this change."
            )
        }
        None if verdict.deciding_part().is_some_and(|p| {
            p.note
                .as_deref()
                .is_some_and(|n| n.starts_with("unreadable"))
        }) =>
        {
            format!(
                "{part}cannot be read by the policy, so it counts as the strictest case. Write the command plainly (a literal command name, no code in strings) so each command can be checked."
            )
        }
        None => format!(
            "{part}is covered by no rule, and the policy's default is \"{}\".",
            policy.default
        ),
    }
}

/// The text of a denied call's error result.
pub fn denial(policy: &Policy, verdict: &Verdict) -> String {
    format!(
        "The policy denies this call, so nothing ran: {} {INSTEAD}",
        cause(policy, verdict)
    )
}

/// Why the policy asks a person about a call.
pub fn question(policy: &Policy, verdict: &Verdict) -> String {
    format!(
        "This call needs a person's approval: {}",
        cause(policy, verdict)
    )
}
