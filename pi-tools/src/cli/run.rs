//! `pi-tools run`: executes one batch of tool calls and shows its events, for a person or
//! (`--json`) as JSON lines. With `--dialect`, the batch is a provider's reply, and standard
//! output is the JSON to append to that provider's conversation (the events go to standard
//! error).
//!
//! SIGINT, SIGTERM and SIGHUP end the run as the end of the batch does: the first cancels
//! the running calls (their processes are killed) and lets the batch report; a second quits
//! at once. Either way the environment's session ends before the process exits, so no
//! process a call started (background jobs included) outlives `pi-tools run`.

use std::process::ExitCode;
use std::sync::Arc;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_util::sync::CancellationToken;

use serde_json::Value;

use crate::core::text::signal_name;
use crate::core::{BatchOutcome, EventSink, RunnerConfig, ToolCall, ToolSet, execute_tool_calls};
use crate::env::SearchIndex;
use crate::provider::Reply;
use crate::session::Session;

use crate::config::ConfigSource;

use super::color::{ColorChoice, Terminal};
use super::jsonl::JsonLines;
use super::live::LiveView;
use super::mounted::{self, Need};
use super::setup::Workspace;
use super::{Failure, RunArgs, emit, input, setup};
use crate::toolbox::Toolbox;

pub(super) async fn run(
    args: RunArgs,
    config: &ConfigSource,
    color: ColorChoice,
) -> Result<ExitCode, Failure> {
    let text = input::read(args.input.as_deref())?;
    let batch = match args.dialect {
        None => Batch::Calls(input::parse(&text)?),
        Some(dialect) => Batch::Reply(Box::new(input::reply(&text, dialect)?)),
    };
    // The calls hold all that is used of it.
    drop(text);
    let mut registered = setup::registered()?;
    let mut config = setup::config(config, &registered)?;
    let workspace = Workspace::open(&args.workspace, &mut config).await?;
    let mounts = mounted::mount(
        &config,
        &workspace.server_dir()?,
        &mut registered,
        Need::Calls(batch.calls()),
    )
    .await?;
    // One batch, then the process ends: an index is built only if the batch searches a
    // directory twice.
    let extensions = workspace.extensions(&config, SearchIndex::WhenReused)?;
    let toolbox = Toolbox::new(registered, &config, extensions);
    // A call the policy asks about is put to the person at the terminal, if there is one.
    let toolbox = match super::approve::TerminalApprover::open() {
        Some(approver) => toolbox.with_approver(std::sync::Arc::new(approver)),
        None => toolbox,
    };
    let runner_config = mounted::runner_config(toolbox.runner_config(), &mounts);
    let session = toolbox.session().clone();
    let mut signals = Signals::new(session.clone());
    let cancel = CancellationToken::new();
    let tools = toolbox.tool_set();
    // With a dialect, standard output is the provider's messages only.
    let on_stderr = args.dialect.is_some();
    let (outcome, caught) = if args.json {
        let sink = JsonLines::new(on_stderr);
        let (outcome, caught) = batch
            .run(tools, &runner_config, &cancel, &mut signals, &sink)
            .await;
        sink.batch_end(outcome.terminate);
        (outcome, caught)
    } else {
        let terminal = if on_stderr {
            Terminal::of_stderr(color)
        } else {
            Terminal::of_process(color)
        };
        let (view, ticker) = LiveView::start(toolbox.registered().to_vec(), terminal, on_stderr);
        let (outcome, caught) = batch
            .run(tools, &runner_config, &cancel, &mut signals, &*view)
            .await;
        drop(ticker);
        view.finish(&outcome, cancel.is_cancelled());
        (outcome, caught)
    };
    // Background jobs of the batch's calls, and mounted servers, must not outlive the run.
    session.end();
    mounts.end().await;
    if let Batch::Reply(reply) = &batch {
        emit::print(&next_request(reply, &outcome))?;
    }
    Ok(match caught {
        Some(signo) => ExitCode::from(exit_code(signo)),
        None => ExitCode::SUCCESS,
    })
}

/// What `run` executes: calls in the normalised form, or a provider's reply.
enum Batch {
    Calls(Vec<ToolCall>),
    Reply(Box<Reply>),
}

impl Batch {
    fn calls(&self) -> &[ToolCall] {
        match self {
            Batch::Calls(calls) => calls,
            Batch::Reply(reply) => &reply.calls,
        }
    }

    /// Runs the batch, its events going to `sink`, until it ends: with the signal that
    /// cancelled it if one did (see [`Signals::interruptible`]).
    async fn run<S: EventSink>(
        &self,
        tools: &ToolSet,
        config: &RunnerConfig,
        cancel: &CancellationToken,
        signals: &mut Signals,
        sink: &S,
    ) -> (BatchOutcome, Option<i32>) {
        let run = async {
            match self {
                Batch::Calls(calls) => execute_tool_calls(tools, calls, config, cancel, sink).await,
                Batch::Reply(reply) => reply.run(tools, config, cancel, sink).await,
            }
        };
        signals.interruptible(run, cancel).await
    }
}

/// The JSON to append to the conversation: an array for OpenAI's APIs (messages, items),
/// one object for Anthropic (a message) and Gemini (a content); `null` there when the reply
/// called no tool, as there is nothing to append.
fn next_request(reply: &Reply, outcome: &BatchOutcome) -> String {
    let results = reply.results(&outcome.messages);
    let value = if reply.results_are_one_entry() {
        if results.is_empty() {
            eprintln!("The reply calls no tool: there is nothing to append.");
        }
        results.into_iter().next().unwrap_or(Value::Null)
    } else {
        Value::Array(results)
    };
    serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string())
}

/// The exit code after a fatal signal, as shells report it: 128 + its number.
fn exit_code(signo: i32) -> u8 {
    u8::try_from(128 + signo).unwrap_or(u8::MAX)
}

/// The signals that end a run: SIGINT (Ctrl-C), SIGTERM and SIGHUP.
struct Signals {
    /// Each listener with its signal's number; empty where signals cannot be caught.
    listeners: Vec<(i32, Signal)>,
    /// The session to end (its processes) before quitting at once.
    session: Arc<Session>,
}

impl Signals {
    /// Installs the listeners, before any call starts.
    fn new(session: Arc<Session>) -> Self {
        let listeners = [
            (libc::SIGINT, SignalKind::interrupt()),
            (libc::SIGTERM, SignalKind::terminate()),
            (libc::SIGHUP, SignalKind::hangup()),
        ]
        .into_iter()
        .filter_map(|(signo, kind)| signal(kind).ok().map(|s| (signo, s)))
        .collect();
        Signals { listeners, session }
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
                self.session.end();
                std::process::exit(i32::from(exit_code(again)))
            }
        }
    }
}
