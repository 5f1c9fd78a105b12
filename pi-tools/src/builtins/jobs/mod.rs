//! The job tools: `job_output`, `job_input`, `job_kill` and `job_list` work on the jobs of
//! the call's session (see [`Jobs`](crate::env::Jobs)), the commands bash handed back while
//! they run. They are off by default, like grep and find; with one of them active, bash
//! takes `background`, `yield` and `pty` (their role is [`ToolRole::Jobs`](crate::tool::ToolRole)).
//!
//! A session reaches only its own jobs: the store belongs to its environment.

pub mod input;
pub mod kill;
pub mod list;
pub mod output;
mod read;
pub(crate) mod terminal_text;

use std::sync::Arc;
use std::time::Duration;

use crate::core::{ToolContext, ToolError};
use crate::env::ToolContextExt;
use crate::env::jobs::Job;

/// The longest wait a call may ask for, in seconds.
pub const MAX_WAIT_SECS: f64 = 300.0;

/// Job `id` of the call's session, or the error that says why there is none.
pub(crate) fn find(ctx: &ToolContext, id: u64) -> Result<Arc<Job>, ToolError> {
    let env = ctx.env();
    let Some(jobs) = env.jobs() else {
        return Err(ToolError::new(
            "This environment keeps no jobs, so there is nothing to work on. Run commands with bash and without background or yield.",
        ));
    };
    jobs.get(id).ok_or_else(|| {
        let ids: Vec<String> = jobs.list().iter().map(|j| j.id().to_string()).collect();
        let known = if ids.is_empty() {
            "This session has no jobs.".to_owned()
        } else {
            format!("This session's jobs are {}.", ids.join(", "))
        };
        ToolError::new(format!(
            "There is no job {id} in this session. {known} Use an id that job_list shows (a job of another session cannot be reached)."
        ))
    })
}

/// A wait in seconds as a duration, refused with the fix when no clock can hold it, and
/// cut to what the call may take.
pub(crate) fn wait_of(secs: f64, ctx: &ToolContext) -> Result<Duration, ToolError> {
    if !(secs.is_finite() && (0.0..=MAX_WAIT_SECS).contains(&secs)) {
        return Err(ToolError::new(format!(
            "The wait {secs} is not a usable number of seconds. Give a number from 0 to {MAX_WAIT_SECS}, such as 5."
        )));
    }
    let wait = Duration::from_secs_f64(secs);
    // Leave the call a second to answer within its own limit.
    Ok(match ctx.time_limit() {
        Some(limit) => wait.min(limit.saturating_sub(Duration::from_secs(1))),
        None => wait,
    })
}
