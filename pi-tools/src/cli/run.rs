//! `pi-tools run`: executes one batch of tool calls and shows its events, for a person or
//! (`--json`) as JSON lines.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::core::execute_tool_calls;

use super::jsonl::JsonLines;
use super::live::LiveView;
use super::{Failure, RunArgs, input, setup};

/// The exit code after Ctrl-C (128 + SIGINT, as shells report it).
const INTERRUPTED: u8 = 130;

pub(super) async fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let calls = input::parse(&input::read(args.input.as_deref())?)?;
    let toolbox = setup::running_toolbox(args.config.config.as_deref(), &cwd)?;
    let runner_config = toolbox.runner_config();
    let cancel = CancellationToken::new();
    let interrupt = tokio::spawn(cancel_on_ctrl_c(cancel.clone()));
    if args.json {
        let sink = JsonLines::default();
        let outcome =
            execute_tool_calls(toolbox.tool_set(), &calls, &runner_config, &cancel, &sink).await;
        sink.batch_end(outcome.terminate);
    } else {
        let (view, ticker) = LiveView::start(toolbox.registered().to_vec());
        let outcome =
            execute_tool_calls(toolbox.tool_set(), &calls, &runner_config, &cancel, &*view).await;
        drop(ticker);
        view.finish(&outcome, cancel.is_cancelled());
    }
    interrupt.abort();
    Ok(if cancel.is_cancelled() {
        ExitCode::from(INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The first Ctrl-C cancels the batch (running calls get their cancellation and the batch
/// still ends with a result for every call); a second one quits at once.
async fn cancel_on_ctrl_c(cancel: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    eprintln!("Interrupted: cancelling the batch; press Ctrl-C again to quit at once.");
    cancel.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        std::process::exit(i32::from(INTERRUPTED));
    }
}
