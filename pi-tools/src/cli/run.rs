//! `pi-tools run`: executes one batch of tool calls and shows its events, for a person or
//! (`--json`) as JSON lines.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::core::execute_tool_calls;

use crate::config::ConfigSource;

use super::color::{ColorChoice, Terminal};
use super::jsonl::JsonLines;
use super::live::LiveView;
use super::{Failure, RunArgs, input, setup};

/// The exit code after Ctrl-C (128 + SIGINT, as shells report it).
const INTERRUPTED: u8 = 130;

pub(super) async fn run(
    args: RunArgs,
    config: &ConfigSource,
    color: ColorChoice,
) -> Result<ExitCode, Failure> {
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let calls = input::parse(&input::read(args.input.as_deref())?)?;
    let toolbox = setup::running_toolbox(config, &cwd)?;
    let runner_config = toolbox.runner_config();
    let cancel = CancellationToken::new();
    let tools = toolbox.tool_set();
    if args.json {
        let sink = JsonLines::default();
        let batch = execute_tool_calls(tools, &calls, &runner_config, &cancel, &sink);
        let outcome = interruptible(batch, &cancel).await;
        sink.batch_end(outcome.terminate);
    } else {
        let terminal = Terminal::of_process(color);
        let (view, ticker) = LiveView::start(toolbox.registered().to_vec(), terminal);
        let batch = execute_tool_calls(tools, &calls, &runner_config, &cancel, &*view);
        let outcome = interruptible(batch, &cancel).await;
        drop(ticker);
        view.finish(&outcome, cancel.is_cancelled());
    }
    Ok(if cancel.is_cancelled() {
        ExitCode::from(INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Awaits `batch`. The first Ctrl-C cancels it (running calls get their cancellation and
/// the batch still ends with a result for every call); a second one quits at once.
///
/// The Ctrl-C listener is polled before the batch, on the same task, so it is in place
/// before any call starts.
async fn interruptible<F: Future>(batch: F, cancel: &CancellationToken) -> F::Output {
    let mut batch = std::pin::pin!(batch);
    tokio::select! {
        biased;
        signal = tokio::signal::ctrl_c() => {
            if signal.is_err() {
                // No signal handling on this platform: run without it.
                return batch.await;
            }
        }
        outcome = &mut batch => return outcome,
    }
    eprintln!("Interrupted: cancelling the batch; press Ctrl-C again to quit at once.");
    cancel.cancel();
    tokio::select! {
        outcome = &mut batch => outcome,
        Ok(()) = tokio::signal::ctrl_c() => std::process::exit(i32::from(INTERRUPTED)),
    }
}
