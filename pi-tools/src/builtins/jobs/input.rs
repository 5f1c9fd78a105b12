//! `job_input`: write to a job's standard input (or its terminal), then read what it answers.

use crate::core::{ToolContext, ToolError};
use crate::env::jobs::{JobControl, JobState};
use crate::tool;

use super::{find, read, wait_of};

/// Writes to a job's input. Registered as a built-in tool by `#[tool]` (off by default).
#[tool(
    name = "job_input",
    label = "Job input",
    examples = [r#"{"job": 1, "input": "print(6 * 7)\n"}"#, r#"{"job": 2, "input": "y\n"}"#],
    description = "Write text to the standard input of a background job (its keyboard, for one on a pty), then wait up to wait seconds for its answer and return its new output as job_output does. The text is sent exactly as given: end a line with \\n to press Enter; on a pty, \\u0003 is Ctrl-C and \\u0004 Ctrl-D. Give close: true to close its input after the text (end of file).",
    snippet = "Write to a background job's input",
    role = jobs
)]
pub async fn job_input(
    ctx: &ToolContext,
    /// The job's id, as bash gave it.
    job: u64,
    /// The text to write, exactly; end it with \n to press Enter.
    #[default = String::new()]
    input: String,
    /// Close the job's input after the text, so a program reading to the end of its input finishes.
    #[default = false]
    close: bool,
    /// Seconds to wait for the job's answer before returning its new output.
    #[default = 1.0]
    wait: f64,
) -> Result<String, ToolError> {
    let found = find(ctx, job)?;
    let wait = wait_of(wait, ctx)?;
    if let Some(how) = found.end_sentence() {
        return Err(ToolError::new(format!(
            "Job {job} {how}, so it takes no input. Read the rest of its output with job_output, or start the command again with bash."
        )));
    }
    let mut sent = input.is_empty() || found.send(JobControl::Input(input.into_bytes()));
    if close {
        sent &= found.send(JobControl::CloseInput);
    }
    if !sent && found.state() == JobState::Running {
        return Err(ToolError::new(format!(
            "Job {job} runs in an environment that cannot pass input to a running command, so nothing was written. Give the input in the command itself (a here-document or a pipe), and start it again."
        )));
    }
    tokio::select! {
        () = read::settle(&found, wait, read::QUIET_AFTER_INPUT) => {}
        () = ctx.cancellation().cancelled() => {}
    }
    Ok(read::new_output(&found, None))
}
