//! Running a command while its output streams in: every chunk goes to the [`OutputBuffer`],
//! and a progress update with the output's tail goes out at once after a quiet spell, then
//! at most every [`UPDATE_INTERVAL`], and once more at the end when output came after the
//! last one, so no output is left unreported.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::capture::OutputBuffer;
use super::stderr_lines::StderrLines;
use super::{OUTPUT_END_KEY, UPDATE_INTERVAL};
use crate::core::{ProgressUpdater, ToolContext, ToolError, ToolResult};
use crate::env::{ExecOutcome, ExecRequest, ExecutionEnv, OutputSink, ToolContextExt};

/// A command that ran to its end (or was killed): how it ended and all its output.
pub(crate) struct Finished {
    /// How the process ended.
    pub(crate) outcome: ExecOutcome,
    /// Everything it printed, kept as [`OutputBuffer`] keeps it.
    pub(crate) output: OutputBuffer,
}

/// The output as it arrives, shared by the chunk callback and the reporting loop.
struct Captured {
    output: OutputBuffer,
    /// Output came since the last progress update.
    unreported: bool,
}

struct Shared {
    captured: Mutex<Captured>,
    /// Woken by each chunk.
    arrived: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Captured> {
        self.captured.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs `request` in the call's environment, reporting its output as it comes. Stderr
/// lines become the call's log lines when a front end wants them.
pub(crate) async fn run_reporting(
    ctx: &ToolContext,
    request: ExecRequest,
    max_spill_bytes: u64,
) -> Result<Finished, ToolError> {
    let env = ctx.env();
    let cancel = ctx.cancellation().clone();
    let (outcome, output) = report_run(ctx, max_spill_bytes, |on_chunk| {
        if ctx.updater().wants_logs() {
            let mut lines = StderrLines::new(ctx.updater().clone());
            let on_stderr = Box::new(move |chunk: &[u8]| lines.push(chunk));
            env.exec_with_stderr(request, cancel, on_chunk, on_stderr)
        } else {
            env.exec(request, cancel, on_chunk)
        }
    })
    .await;
    let outcome = outcome.map_err(|e| exec_error(&e, env.as_ref()))?;
    Ok(Finished { outcome, output })
}

/// Runs what `start` makes of the output sink (a command, or a job until it is handed
/// back), reporting the output that reaches the sink as it comes; returns what it gave and
/// the output the sink got.
pub(crate) async fn report_run<'c, F>(
    ctx: &'c ToolContext,
    max_spill_bytes: u64,
    start: impl FnOnce(OutputSink) -> F,
) -> (F::Output, OutputBuffer)
where
    F: Future + 'c,
{
    let shared = Arc::new(Shared {
        captured: Mutex::new(Captured {
            output: OutputBuffer::with_max_spill_bytes(max_spill_bytes),
            unreported: false,
        }),
        arrived: Notify::new(),
    });
    let on_chunk = collect_into(Arc::clone(&shared), ctx.env());
    let outcome = report_until_done(ctx.updater(), &shared, start(on_chunk)).await;
    let output = std::mem::take(&mut shared.lock().output);
    (outcome, output)
}

/// The chunk callback: keeps the chunk and wakes the reporting loop. The spill file belongs
/// to the session: it is handed to the environment as soon as it exists, so it is deleted
/// when the session ends even if this call never returns.
fn collect_into(shared: Arc<Shared>, session: Arc<dyn ExecutionEnv>) -> OutputSink {
    let mut spill_handed = false;
    Box::new(move |chunk: &[u8]| {
        {
            let mut captured = shared.lock();
            captured.output.push(chunk);
            captured.unreported = true;
            if !spill_handed && let Some(path) = captured.output.spill_path() {
                spill_handed = true;
                session.remove_at_session_end(path.clone());
            }
        }
        shared.arrived.notify_one();
    })
}

/// Awaits `run`, sending a progress update after each arrival of output (coalescing those
/// within [`UPDATE_INTERVAL`]) and a last one for output not yet reported.
async fn report_until_done<F>(updater: &ProgressUpdater, shared: &Shared, run: F) -> F::Output
where
    F: Future,
{
    tokio::pin!(run);
    loop {
        tokio::select! {
            biased;
            outcome = &mut run => {
                report(updater, shared);
                return outcome;
            }
            () = shared.arrived.notified() => {
                report(updater, shared);
                tokio::select! {
                    biased;
                    outcome = &mut run => {
                        report(updater, shared);
                        return outcome;
                    }
                    () = tokio::time::sleep(UPDATE_INTERVAL) => {}
                }
            }
        }
    }
}

/// Sends the output's tail, with where it ends in the whole output (so a front end that
/// shows only what is new knows exactly what is), if output came since the last update.
fn report(updater: &ProgressUpdater, shared: &Shared) {
    let (text, end) = {
        let mut captured = shared.lock();
        if !captured.unreported {
            return;
        }
        captured.unreported = false;
        let shown = captured.output.truncated_tail();
        let end = captured.output.shown_end(&shown);
        (shown.content, end)
    };
    let mut partial = ToolResult::text(text);
    partial.details = serde_json::json!({ OUTPUT_END_KEY: end });
    updater.update(partial);
}

/// Why the command could not run, with what to do about it.
pub(crate) fn exec_error(error: &std::io::Error, env: &dyn ExecutionEnv) -> ToolError {
    // The sandbox's refusal is already a complete sentence with its fix.
    if error.kind() == std::io::ErrorKind::Unsupported && env.is_local() {
        return ToolError::new(error.to_string());
    }
    // Not the command's fault, nor the environment's: the server's descriptors ran out.
    if let Some(sentence) = crate::env::out_of_descriptors(error) {
        // The server's log says it too (only the MCP server has one).
        #[cfg(feature = "mcp")]
        tracing::warn!("a command could not be run: {sentence}");
        return ToolError::new(sentence);
    }
    let fix = match error.kind() {
        std::io::ErrorKind::InvalidInput => "Change the command and run it again.",
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
            "Check that the working directory exists."
        }
        _ => "Check that the environment can run processes.",
    };
    ToolError::new(format!("The command could not be run: {error}. {fix}"))
}
