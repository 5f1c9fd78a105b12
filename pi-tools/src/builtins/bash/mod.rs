//! The `bash` tool: run a shell command in the working directory and return its output.
//!
//! The command runs through the execution environment's `exec`: in its own process group,
//! with stdout and stderr merged in arrival order. The model sees the tail of the output
//! (2000 lines or 50KB); past that, the full output is saved to a file whose path the notice
//! gives (the file keeps at most `[tool.bash] max_spill_bytes`, the output's end). Progress
//! updates with the current tail go out as output arrives, at most every 100 ms, and a last
//! one for output that came after the previous; each says where its tail ends in the whole
//! output. When the front end wants log lines (an MCP client), each stderr line is also
//! logged, as a `warning` from `bash`.
//!
//! `capture.rs` keeps the output, `stream.rs` runs the command and reports its progress,
//! `report.rs` words the result and `render.rs` draws calls and results for a person.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::core::{ToolContext, ToolError};
use crate::env::{ExecRequest, ToolContextExt};
use crate::text::seconds_text;
use crate::tool;
use crate::tool::ToolOutput;
mod job;
mod render;
pub use render::BashRenderer;

use crate::builtins::results::BashResult;
/// What a bash result tells a user interface: the details of any command run as bash runs
/// one ([`run_command`]).
pub use crate::command::CommandDetails as BashDetails;
pub use crate::command::{DEFAULT_MAX_SPILL_BYTES, UPDATE_INTERVAL, run_command};
pub use job::JobArgs;

/// The longest timeout a call may give, in seconds (a day).
pub const MAX_TIMEOUT_SECS: u32 = 86_400;

/// bash's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct BashArgs {
    /// The command line to run, e.g. `cargo test 2>&1 | tail -20`.
    pub command: String,
    /// Seconds after which the command is killed (default: the configured timeout, if any).
    #[serde(default)]
    #[schemars(range(min = 0, max = MAX_TIMEOUT_SECS))]
    pub timeout: Option<f64>,
    /// Job mode (`background`, `yield`, `pty`): in the schema only when the job tools are
    /// active (see `job.rs`).
    #[serde(flatten)]
    #[schemars(skip)]
    pub job: job::JobArgs,
}

impl BashArgs {
    /// Runs `command` with the configured timeout (set `timeout` on the result for another).
    pub fn new(command: impl Into<String>) -> Self {
        BashArgs {
            command: command.into(),
            timeout: None,
            job: job::JobArgs::default(),
        }
    }
}

/// bash's own configuration (`[tool.bash]` in the TOML file).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashConfig {
    /// Seconds after which a command is killed when the call gives no `timeout`; 0 means
    /// none (a whole number, as `[tools] timeout_secs` is).
    #[serde(default)]
    pub timeout_secs: u64,
    /// The most bytes a command's spill file (its full output) keeps; past it, the file
    /// keeps the output's end. 0 keeps no spill file.
    #[serde(default = "default_max_spill_bytes")]
    pub max_spill_bytes: u64,
    /// Seconds after which a command still running is handed back to the model as a job
    /// when the call gives neither `yield` nor `background`; 0 or absent means none (the
    /// default). Set it with the job tools active: they read and end such jobs.
    #[serde(default)]
    pub yield_secs: Option<u64>,
}

impl Default for BashConfig {
    fn default() -> Self {
        BashConfig {
            timeout_secs: 0,
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
            yield_secs: None,
        }
    }
}

fn default_max_spill_bytes() -> u64 {
    DEFAULT_MAX_SPILL_BYTES
}

/// Runs a command. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "bash",
    examples = [r#"{"command": "cargo test --quiet 2>&1 | tail -n 20", "timeout": 300}"#],
    label = "Bash",
    description = "Run a shell command with bash in the current working directory \
and return its combined stdout and stderr. Only the last 2000 lines or 50KB of output are \
returned; when there is more, the full output is saved to a file whose path is given. A non-zero \
exit status is reported as an error together with the output. Optionally give a timeout in \
seconds, after which the command and every process it started are killed.",
    snippet = "Run shell commands (build, test, git, and file operations)",
    guidelines = ["Give long-running commands a timeout, and start servers or watchers in the background with their output redirected to a file."],
    renderer = BashRenderer,
    output = BashResult,
    config = BashConfig,
    role = shell,
    destructive
)]
pub async fn bash(
    ctx: &ToolContext,
    #[config] config: &BashConfig,
    #[args] args: BashArgs,
) -> Result<ToolOutput<BashDetails>, ToolError> {
    let ask = job::JobAsk::of(&args.job, config, ctx)?;
    // A job's timeout bounds the job, not the call.
    let limit = ctx.time_limit().filter(|_| ask.is_none());
    let timeout = command_timeout(args.timeout, config, limit)?;
    let request = exec_request(ctx, args.command, timeout)?;
    let started = std::time::Instant::now();
    let output = match ask {
        Some(ask) => job::run_as_job(ctx, request, ask, config.max_spill_bytes).await?,
        None => run_command(ctx, request, config.max_spill_bytes, &[0]).await?,
    };
    let result = bash_result(output.details.as_ref(), started.elapsed());
    output.with_structured(&result)
}

/// The typed result of a command, from its details: finished, or handed back as a job.
fn bash_result(details: Option<&BashDetails>, ran: Duration) -> BashResult {
    let details = details.cloned().unwrap_or_default();
    BashResult {
        exit_code: details.exit_code,
        signal: details.signal,
        truncated: details.truncated_by.is_some(),
        full_output_path: details.full_output_path,
        duration_ms: u64::try_from(ran.as_millis()).unwrap_or(u64::MAX),
        job: details.job,
    }
}

/// The command's timeout: the call's own, else the configured default; `None` for none.
/// Checked before anything runs, so from here on it is a `Duration` (whose deadline exec
/// adds with a checked add), never a float a conversion could panic on.
fn command_timeout(
    asked: Option<f64>,
    config: &BashConfig,
    limit: Option<Duration>,
) -> Result<Option<Duration>, ToolError> {
    let timeout = match asked {
        Some(secs) => Duration::from_secs_f64(checked_timeout(secs)?),
        None => Duration::from_secs(config.timeout_secs),
    };
    if let (Some(limit), Some(secs)) = (limit, asked)
        && timeout > limit
    {
        return Err(ToolError::new(format!(
            "The timeout {secs} is longer than the {} every call is given (`[tools] timeout_secs` in the configuration), so the command would be cancelled first. Give a timeout of at most {}, or split the work into smaller steps.",
            seconds_text(limit.as_secs_f64()),
            limit.as_secs_f64()
        )));
    }
    Ok(Some(timeout).filter(|t| !t.is_zero()))
}

/// The command to run in the working directory, refused when no command line can carry it.
fn exec_request(
    ctx: &ToolContext,
    command: String,
    timeout: Option<Duration>,
) -> Result<ExecRequest, ToolError> {
    if command.contains('\0') {
        return Err(ToolError::new(
            "The command contains a NUL byte (\\0), which no command line can carry. Remove it; to print one, write printf '\\0'.",
        ));
    }
    Ok(ExecRequest {
        command,
        cwd: ctx.env().cwd().to_path_buf(),
        timeout,
        env: Vec::new(),
    })
}

/// A call's timeout in seconds, refused with the fix when it is not one a clock can hold:
/// negative, not finite or past [`MAX_TIMEOUT_SECS`]. (The schema says the same, so a
/// validated call never gets here with one; a direct caller of [`bash`] may.)
fn checked_timeout(secs: f64) -> Result<f64, ToolError> {
    if secs.is_finite() && (0.0..=f64::from(MAX_TIMEOUT_SECS)).contains(&secs) {
        return Ok(secs);
    }
    Err(ToolError::new(format!(
        "The timeout {secs} is not a usable number of seconds. Give a number from 0 to {MAX_TIMEOUT_SECS} (a day), such as 60, or leave it out."
    )))
}
