//! `job_output`: a job's new output since the last read.

use crate::core::{ToolContext, ToolError};
use crate::tool;

use super::{find, read, wait_of};

/// Reads a job's output. Registered as a built-in tool by `#[tool]` (off by default).
#[tool(
    name = "job_output",
    label = "Job output",
    examples = [r#"{"job": 1}"#, r#"{"job": 2, "wait": 10}"#],
    description = "Read the new output of a background job (one that bash started with background, yield or pty) since the last read, at most 2000 lines or 50KB at a time, and whether it is still running or how it ended. Give offset to read from a byte offset of its whole output instead (a job keeps its last 1MB). Give wait in seconds to wait for output to come, or for the job to end, first.",
    snippet = "Read the new output of a background job",
    guidelines = ["Check on background jobs with job_output instead of sleeping in bash."],
    role = jobs,
    read_only
)]
pub async fn job_output(
    ctx: &ToolContext,
    /// The job's id, as bash gave it.
    job: u64,
    /// Read from this byte offset of the job's whole output instead of from where the last read ended.
    offset: Option<u64>,
    /// Seconds to wait for output (or for the job to end) when there is none yet; 0 reads at once.
    #[default = 0.0]
    wait: f64,
) -> Result<String, ToolError> {
    let job = find(ctx, job)?;
    let wait = wait_of(wait, ctx)?;
    if offset.is_none() {
        tokio::select! {
            () = read::settle(&job, wait, read::QUIET) => {}
            () = ctx.cancellation().cancelled() => {}
        }
    }
    Ok(read::new_output(&job, offset))
}
