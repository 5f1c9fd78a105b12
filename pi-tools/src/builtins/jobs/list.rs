//! `job_list`: the session's jobs with their state, exit status and run time.

use crate::core::{ToolContext, ToolError};
use crate::env::ToolContextExt;
use crate::env::jobs::{JobState, run_time_text};
use crate::tool;
use crate::truncate::format_size;

/// Lists the jobs. Registered as a built-in tool by `#[tool]` (off by default).
#[tool(
    name = "job_list",
    label = "Job list",
    description = "List this session's background jobs, one a line: id, whether it runs or how it ended (exit code or signal), run time, command, and how much of its output is unread.",
    snippet = "List the background jobs",
    role = jobs,
    read_only
)]
pub async fn job_list(ctx: &ToolContext) -> Result<String, ToolError> {
    let env = ctx.env();
    let jobs = env.jobs().map(|j| j.list()).unwrap_or_default();
    if jobs.is_empty() {
        return Ok("No jobs in this session.".to_owned());
    }
    let lines: Vec<String> = jobs
        .iter()
        .map(|job| {
            let state = match job.state() {
                JobState::Running => "running".to_owned(),
                JobState::Ended(outcome) => match (outcome.exit_code, outcome.signal) {
                    (Some(code), _) => format!("exited {code}"),
                    (None, Some(signal)) => format!("killed by signal {signal}"),
                    (None, None) => "ended".to_owned(),
                },
                JobState::Failed(_) => "could not run".to_owned(),
            };
            let pty = if job.on_terminal() { ", pty" } else { "" };
            format!(
                "{}\t{state}\t{}\t`{}`\t({} unread{pty})",
                job.id(),
                run_time_text(job.run_time()),
                job.command().lines().next().unwrap_or_default(),
                format_size(job.unread())
            )
        })
        .collect();
    Ok(format!("id\tstate\ttime\tcommand\n{}", lines.join("\n")))
}
