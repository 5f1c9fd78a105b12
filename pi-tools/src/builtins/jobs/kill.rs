//! `job_kill`: signal a job's processes, or end it.

use std::time::Duration;

use crate::core::{ToolContext, ToolError};
use crate::env::jobs::{JobControl, JobState};
use crate::tool;

use super::{find, read};

/// How long a job gets to end after the signal before every process of it is killed.
const GRACE: Duration = Duration::from_secs(2);

/// The signals a model may name.
const SIGNALS: [(&str, i32); 9] = [
    ("TERM", libc::SIGTERM),
    ("INT", libc::SIGINT),
    ("HUP", libc::SIGHUP),
    ("QUIT", libc::SIGQUIT),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("USR2", libc::SIGUSR2),
    ("STOP", libc::SIGSTOP),
    ("CONT", libc::SIGCONT),
];

/// Signals or ends a job. Registered as a built-in tool by `#[tool]` (off by default).
#[tool(
    name = "job_kill",
    label = "Job kill",
    examples = [r#"{"job": 1}"#, r#"{"job": 2, "signal": "INT", "end": false}"#],
    description = "Stop a background job: send its processes a signal (TERM unless signal says otherwise: INT, HUP, QUIT, KILL, USR1, USR2, STOP, CONT) and, unless end is false, kill every process it started if it has not ended 2 seconds later. Returns its last output and how it ended.",
    snippet = "Stop a background job or send it a signal",
    role = jobs,
    destructive
)]
pub async fn job_kill(
    ctx: &ToolContext,
    /// The job's id, as bash gave it.
    job: u64,
    /// The signal's name, such as TERM, INT or KILL.
    #[default = "TERM".to_owned()]
    signal: String,
    /// Make sure the job ends: kill every process it started if the signal did not end it within 2 seconds.
    #[default = true]
    end: bool,
) -> Result<String, ToolError> {
    let found = find(ctx, job)?;
    let name = signal.trim().trim_start_matches("SIG").to_ascii_uppercase();
    let Some(&(_, number)) = SIGNALS.iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = SIGNALS.iter().map(|(n, _)| *n).collect();
        return Err(ToolError::new(format!(
            "{signal:?} is not a signal job_kill sends. Name one of {}.",
            names.join(", ")
        )));
    };
    if found.state() == JobState::Running {
        if number == libc::SIGKILL || !found.send(JobControl::Signal(number)) {
            // Every process it started, those that left its process group too.
            found.kill();
        }
        let deadline = tokio::time::Instant::now() + GRACE;
        if !found.ended_by(deadline).await && end {
            found.kill();
            found.ended_by(tokio::time::Instant::now() + GRACE).await;
        }
    }
    Ok(read::new_output(&found, None))
}
