//! `pi-tools policy check TOOL ARGS…`: what `[policy]` decides for one call, the rule that
//! decides it, and for a shell command each simple command and file written with its own
//! decision; and the one-line summary `pi-tools check` prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::config::ConfigSource;
use crate::policy::{Decision, Policy, Verdict};

use super::{Failure, emit, setup};

/// `pi-tools policy …`.
#[derive(Debug, Args)]
pub(super) struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Print what the policy decides for a call, and why. The arguments are one JSON
    /// object, or else a command line for a shell tool: `policy check bash 'git push'`.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The tool's name.
    tool: String,
    /// A JSON object of arguments, or the words of a shell command (`{"command": …}`).
    #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
    args: Vec<String>,
    /// The directory relative paths are resolved against (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

pub(super) fn policy(args: PolicyArgs, source: &ConfigSource) -> Result<ExitCode, Failure> {
    let PolicyCommand::Check(args) = args.command;
    let registered = setup::registered()?;
    let config = setup::config(source, &registered)?;
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let joined = args.args.join(" ");
    let call: Value = if joined.trim_start().starts_with('{') {
        serde_json::from_str(&joined).map_err(|e| {
            Failure::usage(format!(
                "the arguments are not a JSON object ({e}); pass one object such as '{{\"path\": \"a.txt\"}}', or a shell command's words"
            ))
        })?
    } else {
        json!({ "command": joined })
    };
    let verdict = config.policy.check(&args.tool, &call, &cwd);
    emit::print(&report(&config.policy, &verdict))?;
    Ok(ExitCode::SUCCESS)
}

/// The decision, its rule and reason, then each part of a shell command.
fn report(policy: &Policy, verdict: &Verdict) -> String {
    let mut lines = vec![format!("decision: {}", verdict.decision)];
    match verdict.rule.and_then(|i| policy.rule(i)) {
        Some(rule) => {
            lines.push(format!("rule: {} ({})", rule.position, rule.summary()));
            if let Some(reason) = &rule.reason {
                lines.push(format!("reason: {reason}"));
            }
        }
        None => lines.push(
            match verdict
                .parts
                .iter()
                .find(|p| p.decision == verdict.decision && p.rule.is_none() && p.note.is_some())
                .and_then(|p| p.note.as_deref())
            {
                Some(note) if note.starts_with("unreadable") => {
                    "rule: none (a command the policy cannot read)".to_owned()
                }
                // A write to a file with other names: its note says why.
                Some(_) => "rule: none (see the part's note)".to_owned(),
                None => format!("rule: none (the default, \"{}\")", policy.default),
            },
        ),
    }
    if !verdict.parts.is_empty() {
        lines.push("commands:".to_owned());
        for part in &verdict.parts {
            let unreadable = part
                .note
                .as_deref()
                .is_some_and(|n| n.starts_with("unreadable"));
            let by = match part.rule.and_then(|i| policy.rule(i)) {
                Some(rule) => rule.position.clone(),
                None if unreadable => "unreadable".to_owned(),
                None => "default".to_owned(),
            };
            let note = part
                .note
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            lines.push(format!(
                "  {:<5} {}  [{by}]{note}",
                part.decision, part.text
            ));
        }
    }
    lines.join("\n")
}

/// `pi-tools check`'s line about the policy.
pub(super) fn summary(policy: &Policy) -> String {
    if policy.rules.is_empty() && policy.default == Decision::Allow {
        return "policy: none (every call allowed)".to_owned();
    }
    let count = |d: Decision| policy.rules.iter().filter(|r| r.decision == d).count();
    format!(
        "policy: default {}, {} rules ({} deny, {} ask, {} allow)",
        policy.default,
        policy.rules.len(),
        count(Decision::Deny),
        count(Decision::Ask),
        count(Decision::Allow)
    )
}
