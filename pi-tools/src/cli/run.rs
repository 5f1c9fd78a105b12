//! `pi-tools run`: executes one batch of tool calls and shows its events, for a person or
//! (`--json`) as JSON lines.
//!
//! SIGINT, SIGTERM and SIGHUP end the run as the end of the batch does: the first cancels
//! the running calls (their processes are killed) and lets the batch report; a second quits
//! at once. Either way the environment's session ends before the process exits, so no
//! process a call started (background jobs included) outlives `pi-tools run`.

use std::process::ExitCode;
use std::sync::Arc;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::core::execute_tool_calls;
use crate::core::text::signal_name;
use crate::env::ExecutionEnv;

use crate::config::ConfigSource;

use super::color::{ColorChoice, Terminal};
use super::jsonl::JsonLines;
use super::live::LiveView;
use super::setup::Workspace;
use super::{Failure, RunArgs, input, setup};
use crate::toolbox::Toolbox;

pub(super) async fn run(
    args: RunArgs,
    config: &ConfigSource,
    color: ColorChoice,
) -> Result<ExitCode, Failure> {
    let calls = input::parse(&input::read(args.input.as_deref())?)?;
    let registered = setup::registered()?;
    let mut config = setup::config(config, &registered)?;
    let workspace = Workspace::open(&args.workspace, &mut config).await?;
    let toolbox = Toolbox::new(registered, &config, workspace.extensions(&config)?);
    let runner_config = toolbox.runner_config();
    let env = runner_config
        .extensions
        .get::<Arc<dyn ExecutionEnv>>()
        .cloned();
    let mut signals = Signals::new(env.clone());
    let cancel = CancellationToken::new();
    let tools = toolbox.tool_set();
    let caught = if args.json {
        let sink = JsonLines::default();
        let batch = execute_tool_calls(tools, &calls, &runner_config, &cancel, &sink);
        let (outcome, caught) = signals.interruptible(batch, &cancel).await;
        sink.batch_end(outcome.terminate);
        caught
    } else {
        let terminal = Terminal::of_process(color);
        let (view, ticker) = LiveView::start(toolbox.registered().to_vec(), terminal);
        let batch = execute_tool_calls(tools, &calls, &runner_config, &cancel, &*view);
        let (outcome, caught) = signals.interruptible(batch, &cancel).await;
        drop(ticker);
        view.finish(&outcome, cancel.is_cancelled());
        caught
    };
    // Background jobs of the batch's calls must not outlive the run.
    if let Some(env) = &env {
        env.end_session();
    }
    Ok(match caught {
        Some(signo) => ExitCode::from(exit_code(signo)),
        None => ExitCode::SUCCESS,
    })
}

/// The exit code after a fatal signal, as shells report it: 128 + its number.
fn exit_code(signo: i32) -> u8 {
    u8::try_from(128 + signo).unwrap_or(u8::MAX)
}

/// The signals that end a run: SIGINT (Ctrl-C), SIGTERM and SIGHUP.
struct Signals {
    /// Each listener with its signal's number; empty where signals cannot be caught.
    listeners: Vec<(i32, Signal)>,
    /// Whose processes to end before quitting at once.
    env: Option<Arc<dyn ExecutionEnv>>,
}

impl Signals {
    /// Installs the listeners, before any call starts.
    fn new(env: Option<Arc<dyn ExecutionEnv>>) -> Self {
        let listeners = [
            (libc::SIGINT, SignalKind::interrupt()),
            (libc::SIGTERM, SignalKind::terminate()),
            (libc::SIGHUP, SignalKind::hangup()),
        ]
        .into_iter()
        .filter_map(|(signo, kind)| signal(kind).ok().map(|s| (signo, s)))
        .collect();
        Signals { listeners, env }
    }

    /// The number of the next signal to arrive (never, without listeners).
    async fn next(&mut self) -> i32 {
        if self.listeners.is_empty() {
            return std::future::pending().await;
        }
        let waits = self
            .listeners
            .iter_mut()
            .map(|(signo, listener)| {
                let signo = *signo;
                Box::pin(async move {
                    listener.recv().await;
                    signo
                })
            })
            .collect::<Vec<_>>();
        futures::future::select_all(waits).await.0
    }

    /// Awaits `batch`, with the signal that cancelled it if one did. The first signal
    /// cancels the batch (running calls get their cancellation and the batch still ends
    /// with a result for every call); a second one ends the session's processes and quits.
    async fn interruptible<F: Future>(
        &mut self,
        batch: F,
        cancel: &CancellationToken,
    ) -> (F::Output, Option<i32>) {
        let mut batch = std::pin::pin!(batch);
        let signo = tokio::select! {
            outcome = &mut batch => return (outcome, None),
            signo = self.next() => signo,
        };
        eprintln!(
            "Interrupted by {}: cancelling the batch; a second signal (Ctrl-C) quits at once.",
            signal_name(signo).unwrap_or("a signal")
        );
        cancel.cancel();
        tokio::select! {
            outcome = &mut batch => (outcome, Some(signo)),
            again = self.next() => {
                if let Some(env) = &self.env {
                    env.end_session();
                }
                std::process::exit(i32::from(exit_code(again)))
            }
        }
    }
}

