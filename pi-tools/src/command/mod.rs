//! Running a command as a tool does: in the call's environment, its output streamed as
//! progress, the model shown its tail with the whole output spilled to a file, and a
//! sentence when it failed. bash runs its commands through [`run_command`], and so do the
//! tools a configuration declares; neither knows the other.
//!
//! `capture.rs` keeps the output, `stream.rs` runs the command and reports its progress,
//! `report.rs` words the result and `stderr_lines.rs` logs stderr lines for a front end
//! that wants them.

use std::time::Duration;

use serde::Serialize;

use crate::core::OUTPUT_END_DETAIL as OUTPUT_END_KEY;
use crate::core::{ToolContext, ToolError};
use crate::env::ExecRequest;
use crate::text::{seconds_text, signal_name};
use crate::tool::ToolOutput;
use crate::truncate::TruncatedBy;

mod capture;
mod report;
mod stderr_lines;
mod stream;

pub use capture::DEFAULT_MAX_SPILL_BYTES;
// The parts bash's job mode puts together its own way (a command handed back running).
#[cfg(feature = "builtins")]
pub(crate) use capture::OutputBuffer;
#[cfg(feature = "builtins")]
pub(crate) use report::{answer, shown_output, spill_link, truncation_notice};
#[cfg(feature = "builtins")]
pub(crate) use stream::{Finished, exec_error, report_run};

/// How often, at most, a running command reports its output.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

/// What the result of a command tells a user interface (bash's details, and a declared
/// tool's).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandDetails {
    /// The exit code, when the shell exited normally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed the shell, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The command was killed because its timeout passed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The command was killed because the call was cancelled.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// Lines of the whole output.
    pub total_lines: u64,
    /// Bytes of the whole output.
    pub total_bytes: u64,
    /// Which limit cut the shown output, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<TruncatedBy>,
    /// The file holding the whole output, once it passed the limits; deleted when the
    /// session ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Bytes of the output's start the file dropped to stay under `max_spill_bytes`.
    #[serde(skip_serializing_if = "is_zero")]
    pub spill_dropped_bytes: u64,
    /// The job the command became, when it was handed back still running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Runs `request` in the call's environment as bash runs a command: its output streamed as
/// progress, the result its last 2000 lines or 50KB with the whole output spilled to a file
/// (at most `max_spill_bytes`) past those, killed with every process it started at the
/// request's timeout or when the call is cancelled. An exit code in `success_codes` is a
/// success; any other code, a signal, a timeout or a cancellation is a failure whose text
/// says which. Tools declared in the configuration run their commands through it.
pub async fn run_command(
    ctx: &ToolContext,
    request: ExecRequest,
    max_spill_bytes: u64,
    success_codes: &[i32],
) -> Result<ToolOutput<CommandDetails>, ToolError> {
    let timeout = request.timeout;
    let finished = stream::run_reporting(ctx, request, max_spill_bytes).await?;
    report::answer(finished, timeout, success_codes)
}
