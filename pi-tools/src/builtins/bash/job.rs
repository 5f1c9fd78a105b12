//! bash's job mode: a command the call hands back while it runs. With `background` the call
//! returns at once, with `yield` after that many seconds (and `[tool.bash] yield_secs` gives
//! a default); until then the call reports the output as any command's, and a command that
//! ends in time is answered exactly as without a yield. One still running becomes a job of
//! the session ([`Jobs`](crate::env::Jobs)): the result gives its id and the output so far,
//! and the job tools take it from there.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{BashConfig, BashDetails, MAX_TIMEOUT_SECS};
use crate::builtins::jobs::terminal_text::clean;
use crate::command::{
    Finished, OutputBuffer, exec_error, report_run, shown_output, truncation_notice,
};
use crate::core::{ToolContext, ToolError};
use crate::env::jobs::{Job, JobState, TerminalSize, run_time_text};
use crate::env::{ExecOutcome, ExecRequest, ToolContextExt};
use crate::tool::ToolOutput;

/// How long a command on a pseudo-terminal is waited for when the call gives neither
/// `background` nor `yield`: long enough for a program's first prompt.
const PTY_YIELD: Duration = Duration::from_secs(2);

/// The arguments that start a job (offered in the schema only with a job tool active).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct JobArgs {
    /// Return at once with a job id; the command goes on as a job.
    #[serde(default)]
    pub background: bool,
    /// Seconds to wait before handing the command back as a job.
    #[serde(default, rename = "yield")]
    pub yield_secs: Option<f64>,
    /// Run on a pseudo-terminal.
    #[serde(default)]
    pub pty: bool,
    /// The pseudo-terminal's rows.
    #[serde(default)]
    pub rows: Option<u16>,
    /// The pseudo-terminal's columns.
    #[serde(default)]
    pub cols: Option<u16>,
}

/// A call's request to run as a job: how long to wait, and on what terminal.
#[derive(Debug, Clone, Copy)]
pub(super) struct JobAsk {
    wait: Duration,
    terminal: Option<TerminalSize>,
}

impl JobAsk {
    /// What the call asks for, `None` for an ordinary command. The configured default
    /// yield applies only where the session keeps jobs.
    pub(super) fn of(
        args: &JobArgs,
        config: &BashConfig,
        ctx: &ToolContext,
    ) -> Result<Option<JobAsk>, ToolError> {
        let terminal = args.pty.then(|| {
            let size = TerminalSize::default();
            TerminalSize {
                rows: args.rows.filter(|&r| r > 0).unwrap_or(size.rows),
                cols: args.cols.filter(|&c| c > 0).unwrap_or(size.cols),
            }
        });
        let asked = match args.yield_secs {
            Some(secs) => Some(Duration::from_secs_f64(checked_yield(secs)?)),
            None => None,
        };
        let wait = if args.background {
            Some(Duration::ZERO)
        } else if asked.is_some() {
            asked
        } else if terminal.is_some() {
            Some(PTY_YIELD)
        } else if ctx.env().jobs().is_some_and(|jobs| jobs.accepts_new()) {
            config
                .yield_secs
                .filter(|&secs| secs > 0)
                .map(Duration::from_secs)
        } else {
            None
        };
        Ok(wait.map(|wait| JobAsk { wait, terminal }))
    }
}

/// A yield in seconds, refused with the fix when no clock can hold it.
fn checked_yield(secs: f64) -> Result<f64, ToolError> {
    if secs.is_finite() && (0.0..=f64::from(MAX_TIMEOUT_SECS)).contains(&secs) {
        return Ok(secs);
    }
    Err(ToolError::new(format!(
        "The yield {secs} is not a usable number of seconds. Give a number from 0 to {MAX_TIMEOUT_SECS}, such as 10, or use background: true to return at once."
    )))
}

/// How the wait for a job's command ended.
enum Waited {
    /// It ended in time (or the call was cancelled and it was killed): the job is done.
    Ended,
    /// It still runs: the job goes on without the call.
    Running,
}

/// Runs `request` as a job: reports its output like any command's until the yield, then
/// answers as bash does for a command that ended, or with the job's id when it still runs.
pub(super) async fn run_as_job(
    ctx: &ToolContext,
    request: ExecRequest,
    ask: JobAsk,
    max_spill_bytes: u64,
) -> Result<ToolOutput<BashDetails>, ToolError> {
    let env = ctx.env();
    let Some(jobs) = env.jobs() else {
        return Err(ToolError::new(
            "This environment keeps no jobs, so the command cannot run in the background. Run it without background, yield and pty, and give it a timeout instead.",
        ));
    };
    let timeout = request.timeout;
    let cancel = ctx.cancellation().clone();
    let (waited, output) = report_run(ctx, max_spill_bytes, |sink| async {
        let job = jobs.start(env.clone(), request, ask.terminal, sink)?;
        // A yield past the call's own time limit would see the call cancelled (and the
        // job with it): the call hands the job back a second before.
        let wait = match ctx.time_limit() {
            Some(limit) => ask.wait.min(limit.saturating_sub(Duration::from_secs(1))),
            None => ask.wait,
        };
        let deadline = tokio::time::Instant::now() + wait;
        tokio::select! {
            biased;
            () = cancel.cancelled() => {
                job.kill();
                job.ended_by(tokio::time::Instant::now() + Duration::from_secs(5)).await;
            }
            _ = job.ended_by(deadline) => {}
        }
        let waited = if job.detach() {
            Waited::Running
        } else {
            Waited::Ended
        };
        Ok::<_, String>((job, waited))
    })
    .await;
    let (job, waited) = waited.map_err(ToolError::new)?;
    match waited {
        Waited::Ended => {
            jobs.forget(job.id());
            let outcome = match job.state() {
                JobState::Ended(outcome) => outcome,
                JobState::Failed(why) => {
                    let error = std::io::Error::other(why);
                    return Err(exec_error(&error, env.as_ref()));
                }
                JobState::Running => ExecOutcome::default(),
            };
            let terminal = ask.terminal.is_some();
            match crate::command::answer(Finished { outcome, output }, timeout, &[0]) {
                Ok(out) => Ok(as_text(out, terminal)),
                Err(e) if terminal => {
                    let mut cleaned =
                        ToolError::new(clean(e.message())).with_details(e.details().clone());
                    for link in e.links() {
                        cleaned = cleaned.with_link(link.clone());
                    }
                    Err(cleaned)
                }
                Err(e) => Err(e),
            }
        }
        Waited::Running => Ok(as_text(still_running(&job, output), ask.terminal.is_some())),
    }
}

/// A terminal's output as text: control sequences removed, rewritten lines in their last
/// state (see `terminal_text.rs`); other output as it is.
fn as_text(mut out: ToolOutput<BashDetails>, terminal: bool) -> ToolOutput<BashDetails> {
    if terminal {
        for block in &mut out.content {
            if let Some(text) = block.as_text() {
                *block = crate::core::ContentBlock::text(clean(text));
            }
        }
    }
    out
}

/// The answer for a command handed back while it runs: its output so far (truncated as any
/// command's), then the job's id and what to do with it.
fn still_running(job: &Job, mut output: OutputBuffer) -> ToolOutput<BashDetails> {
    output.finish();
    let shown = output.truncated_tail();
    let mut text = shown_output(&shown);
    if shown.truncated {
        text.push_str(&format!("\n\n[{}]", truncation_notice(&output, &shown)));
    }
    let id = job.id();
    text.push_str(&format!(
        "\n\n[Job {id} is still running after {}. Read its new output with job_output {{\"job\": {id}}}, write to its input with job_input, and stop it with job_kill; you will be told when it ends.]",
        run_time_text(job.run_time())
    ));
    let details = BashDetails {
        total_lines: output.total_lines(),
        total_bytes: output.total_bytes(),
        truncated_by: shown.truncated_by.filter(|_| shown.truncated),
        full_output_path: output.spill_path().map(|p| p.display().to_string()),
        spill_dropped_bytes: output.spill_dropped_bytes(),
        job: Some(id),
        ..BashDetails::default()
    };
    let out = ToolOutput::text(text).with_details(details);
    match crate::command::spill_link(&output) {
        Some(link) => out.with_link(link),
        None => out,
    }
}
