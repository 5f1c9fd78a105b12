//! The `bash` tool: run a shell command in the working directory and return its output.
//!
//! The command runs through the execution environment's `exec`: in its own process group,
//! with stdout and stderr merged in arrival order. The model sees the tail of the output
//! (2000 lines or 50KB); past that, the full output is saved to a file whose path the notice
//! gives (the file keeps at most `[tool.bash] max_spill_bytes`, the output's end). Progress
//! updates with the current tail go out about every 100 ms. When the front end wants log
//! lines (an MCP client), each stderr line is also logged, as a `warning` from `bash`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{ExecRequest, ToolContextExt};
use crate::text::{seconds_text, signal_name};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};
mod capture;
mod stderr_lines;

use crate::builtins::preview::arg_str;
use crate::builtins::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, format_size};
pub use capture::DEFAULT_MAX_SPILL_BYTES;
use capture::OutputBuffer;
use stderr_lines::StderrLines;

/// How often, at most, a running command reports its output.
pub const UPDATE_INTERVAL: Duration = Duration::from_millis(100);

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
}

impl Default for BashConfig {
    fn default() -> Self {
        BashConfig {
            timeout_secs: 0,
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
        }
    }
}

fn default_max_spill_bytes() -> u64 {
    DEFAULT_MAX_SPILL_BYTES
}

/// What a bash result tells a user interface.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BashDetails {
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
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    config = BashConfig,
    role = shell,
    destructive
)]
pub async fn bash(
    ctx: &ToolContext,
    #[config] config: &BashConfig,
    #[args] args: BashArgs,
) -> Result<ToolOutput<BashDetails>, ToolError> {
    let env = ctx.env();
    // Checked before anything runs; from here on the timeout is a Duration (whose deadline
    // exec adds with a checked add), never a float a conversion could panic on.
    let timeout = match args.timeout {
        Some(secs) => Duration::from_secs_f64(checked_timeout(secs)?),
        None => Duration::from_secs(config.timeout_secs),
    };
    let timeout = Some(timeout).filter(|t| !t.is_zero());
    if args.command.contains('\0') {
        return Err(ToolError::new(
            "The command contains a NUL byte (\\0), which no command line can carry. Remove it; to print one, write printf '\\0'.",
        ));
    }
    let request = ExecRequest {
        command: args.command.clone(),
        cwd: env.cwd().to_path_buf(),
        timeout,
        env: Vec::new(),
    };

    let buffer = Arc::new(Mutex::new(OutputBuffer::with_max_spill_bytes(
        config.max_spill_bytes,
    )));
    let on_chunk = {
        let buffer = Arc::clone(&buffer);
        let updater = ctx.updater().clone();
        let mut last_update: Option<Instant> = None;
        // The spill file belongs to the session: handed to the environment as soon as it
        // exists, so it is deleted when the session ends even if this call never returns.
        let session = Arc::clone(&env);
        let mut spill_handed = false;
        Box::new(move |chunk: &[u8]| {
            let Ok(mut out) = buffer.lock() else { return };
            out.push(chunk);
            if !spill_handed && let Some(path) = out.spill_path() {
                spill_handed = true;
                session.remove_at_session_end(path.clone());
            }
            let now = Instant::now();
            if last_update.is_none_or(|t| now.duration_since(t) >= UPDATE_INTERVAL) {
                last_update = Some(now);
                let tail = out.truncated_tail().content;
                drop(out);
                updater.update(ToolResult::text(tail));
            }
        }) as Box<dyn FnMut(&[u8]) + Send>
    };
    // Stderr lines become the call's log lines, when a front end wants them.
    let run = if ctx.updater().wants_logs() {
        let mut lines = StderrLines::new(ctx.updater().clone());
        let on_stderr = Box::new(move |chunk: &[u8]| lines.push(chunk));
        env.exec_with_stderr(request, ctx.cancellation().clone(), on_chunk, on_stderr)
    } else {
        env.exec(request, ctx.cancellation().clone(), on_chunk)
    };
    let outcome = run.await.map_err(|e| {
        // The sandbox's refusal is already a complete sentence with its fix.
        if e.kind() == std::io::ErrorKind::Unsupported && env.is_local() {
            return ToolError::new(e.to_string());
        }
        let fix = match e.kind() {
            std::io::ErrorKind::InvalidInput => "Change the command and run it again.",
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                "Check that the working directory exists."
            }
            _ => "Check that the environment can run processes.",
        };
        ToolError::new(format!("The command could not be run: {e}. {fix}"))
    })?;

    let mut out = buffer
        .lock()
        .map_err(|_| ToolError::new("The command's output was lost; run it again."))?;
    out.finish();
    let shown = out.truncated_tail();
    let mut details = BashDetails {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        timed_out: outcome.timed_out,
        aborted: outcome.aborted,
        total_lines: out.total_lines(),
        total_bytes: out.total_bytes(),
        truncated_by: shown.truncated_by,
        full_output_path: out.spill_path().map(|p| p.display().to_string()),
        spill_dropped_bytes: out.spill_dropped_bytes(),
    };
    // The final newline ends the last line; it is not part of what the model needs to see.
    let body = shown.content.strip_suffix('\n').unwrap_or(&shown.content);
    let mut text = if body.is_empty() {
        "(no output)".to_string()
    } else {
        body.to_string()
    };
    if shown.truncated {
        let full = match (out.spill_path(), out.spill_error()) {
            (Some(path), _) if out.spill_dropped_bytes() > 0 => format!(
                "Output's last {} (the first {} were dropped at the {} spill limit): {}",
                format_size(out.total_bytes() - out.spill_dropped_bytes()),
                format_size(out.spill_dropped_bytes()),
                format_size(out.max_spill_bytes()),
                path.display()
            ),
            (Some(path), _) => format!("Full output: {}", path.display()),
            (None, Some(err)) => format!("The full output could not be saved: {err}"),
            (None, None) => "The full output was not saved".to_string(),
        };
        let total = out.total_lines();
        let end = total;
        let start = (total + 1).saturating_sub(shown.output_lines as u64);
        let notice = if shown.last_line_partial {
            format!(
                "Showing the last {} of line {end} (the line is {}). {full}",
                format_size(shown.output_bytes as u64),
                format_size(out.last_line_bytes())
            )
        } else if shown.truncated_by == Some(TruncatedBy::Lines) {
            format!("Showing lines {start}-{end} of {total}. {full}")
        } else {
            format!(
                "Showing lines {start}-{end} of {total} ({} limit). {full}",
                format_size(DEFAULT_MAX_BYTES as u64)
            )
        };
        text.push_str(&format!("\n\n[{notice}]"));
    } else {
        details.truncated_by = None;
    }
    drop(out);

    let failure = if outcome.timed_out {
        Some(format!(
            "Command timed out after {}",
            seconds_text(timeout.unwrap_or_default().as_secs_f64())
        ))
    } else if outcome.aborted {
        Some("Command aborted".to_string())
    } else if let Some(signal) = outcome.signal {
        Some(format!(
            "Command was killed by signal {signal}{}",
            signal_name(signal)
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ))
    } else {
        match outcome.exit_code {
            Some(0) | None => None,
            Some(code) => Some(format!("Command exited with code {code}")),
        }
    };
    if let Some(failure) = failure {
        text.push_str(&format!("\n\n{failure}"));
        let details = serde_json::to_value(&details).unwrap_or(Value::Null);
        return Err(ToolError::new(text).with_details(details));
    }
    Ok(ToolOutput::text(text).with_details(details))
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

/// Lines of output a rendered bash result shows.
const RENDER_TAIL_LINES: usize = 20;

/// Draws bash calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct BashRenderer;

impl crate::tool::ToolRenderer for BashRenderer {
    /// How a bash call looks to a person: `$ command`.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push("$ ", Style::fg(Color::Cyan).bold());
        out.add(arg_str(args, "command").unwrap_or(""), Style::PLAIN.bold());
        if let Some(t) = args.get("timeout").and_then(Value::as_f64) {
            out.add(
                format!(" (timeout {})", seconds_text(t)),
                Style::fg(Color::Gray),
            );
        }
        out
    }

    /// How a bash result looks to a person: the last lines of output, the status in colour.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        let text = result.text_content();
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Styled::new();
        if lines.len() > RENDER_TAIL_LINES {
            out.add(
                format!("… {} earlier lines\n", lines.len() - RENDER_TAIL_LINES),
                Style::fg(Color::Gray),
            );
        }
        let start = lines.len().saturating_sub(RENDER_TAIL_LINES);
        for (i, line) in lines[start..].iter().enumerate() {
            let last = start + i + 1 == lines.len();
            let style = if last && is_error {
                Style::fg(Color::Red)
            } else if line.starts_with('[') {
                Style::fg(Color::Yellow)
            } else {
                Style::PLAIN
            };
            out.add(*line, style);
            if !last {
                out.add("\n", Style::PLAIN);
            }
        }
        out
    }
}
