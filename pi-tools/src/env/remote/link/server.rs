//! The serving end of the environment link: runs on the machine that holds the files, reads
//! requests from its input and answers on its output.
//!
//! Commands run in the environment the caller makes for each client session (the binary
//! makes a `LocalEnv`, so they run exactly as they would here: their own process group,
//! tracked in a cgroup or through `/proc`, the same timeout, cancellation, background jobs
//! and kill), one per session so ending a session ends only its own jobs. Tool calls
//! go to the runner the caller supplies (the binary's registered tools). When the input
//! ends (the client went away, or the connection dropped), every call is cancelled and
//! every session's processes are killed before [`serve`] returns. What a server killed
//! outright left running is killed by its guard (`env/guard/`), or else when the next
//! one starts (`env/guard/leftovers.rs`).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    CallMessage, ExecMessage, FailureMessage, Frame, HELLO, Kind, OutcomeMessage, SessionMessage,
};
use crate::core::{BoxFuture, ToolResultMessage};
use crate::env::guard::{Guard, leftovers};
use crate::env::{ExecRequest, ExecutionEnv};

/// Runs one tool call (tool name, working directory, arguments) and returns its result
/// message, or why it could not run.
pub(crate) type CallRunner = Arc<
    dyn Fn(
            String,
            PathBuf,
            serde_json::Value,
            CancellationToken,
        ) -> BoxFuture<'static, Result<ToolResultMessage, String>>
        + Send
        + Sync,
>;

/// Makes the environment of one client session, on its working directory. The link knows
/// no implementation of its own: the binary hands it the local one.
pub(crate) type SessionMaker = Arc<dyn Fn(&Path) -> Arc<dyn ExecutionEnv> + Send + Sync>;

/// Frames waiting for the output; a command's output waits for room (backpressure).
const QUEUE: usize = 64;

/// What the requests in flight share.
struct State {
    out: mpsc::Sender<Vec<u8>>,
    /// This server's mark, in every command's environment.
    mark: String,
    sessions: Mutex<HashMap<u64, Arc<dyn ExecutionEnv>>>,
    calls: Mutex<HashMap<u64, CancellationToken>>,
    run_call: CallRunner,
    make_session: SessionMaker,
}

impl State {
    fn session(&self, id: u64, cwd: &Path) -> Arc<dyn ExecutionEnv> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            sessions
                .entry(id)
                .or_insert_with(|| (self.make_session)(cwd)),
        )
    }

    fn begin(&self, id: u64) -> CancellationToken {
        let token = CancellationToken::new();
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, token.clone());
        token
    }

    fn finish(&self, id: u64) {
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    async fn send(&self, frame: Frame) {
        let _ = self.out.send(frame.encode()).await;
    }
}

/// Sends `frame` from synchronous code (an output sink), waiting for room in the queue.
fn send_now(out: &mpsc::Sender<Vec<u8>>, frame: &Frame) {
    match out.try_send(frame.encode()) {
        Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
        Err(mpsc::error::TrySendError::Full(bytes)) => {
            // The output is slower than the command: hold the command's reader up (the
            // pipe then holds the command up), as a local terminal would.
            let _ = tokio::task::block_in_place(|| out.blocking_send(bytes));
        }
    }
}

/// Serves requests from `input`, answering on `output`, until `input` ends; then ends every
/// session. Each session's commands run in the environment `make_session` makes for it.
/// Needs the multi-threaded Tokio runtime.
pub(crate) async fn serve(
    mut input: impl AsyncRead + Unpin,
    mut output: impl AsyncWrite + Unpin + Send + 'static,
    run_call: CallRunner,
    make_session: SessionMaker,
) -> io::Result<()> {
    let _ = tokio::task::spawn_blocking(leftovers::kill_orphans).await;
    let mark = leftovers::own_mark();
    // Ends what the commands left should this process be killed (dropped at the end).
    // Started before the hello, so that no command runs unguarded, and so that once the
    // client sees the server, the guard is its own process (spawn returns after its exec).
    let guard = Guard::start(&mark);
    output.write_all(HELLO).await?;
    output.flush().await?;
    let (out, mut queue) = mpsc::channel::<Vec<u8>>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(bytes) = queue.recv().await {
            if output.write_all(&bytes).await.is_err() {
                break;
            }
            // Flush once the queue is empty: a burst goes out in one write.
            if queue.is_empty() && output.flush().await.is_err() {
                break;
            }
        }
    });
    let state = Arc::new(State {
        out,
        mark,
        sessions: Mutex::new(HashMap::new()),
        calls: Mutex::new(HashMap::new()),
        run_call,
        make_session,
    });
    let result = read_requests(&mut input, &state).await;

    // The client is gone: nothing may outlive it.
    let tokens: Vec<CancellationToken> = state
        .calls
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain()
        .map(|(_, t)| t)
        .collect();
    for token in tokens {
        token.cancel();
    }
    let sessions: Vec<Arc<dyn ExecutionEnv>> = state
        .sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .drain()
        .map(|(_, s)| s)
        .collect();
    let _ = tokio::task::spawn_blocking(move || {
        for session in sessions {
            session.end_session();
        }
    })
    .await;
    // Let cancelled commands report (they are killed by now), without waiting on a writer
    // whose reader is gone.
    drop(state);
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    let _ = tokio::task::spawn_blocking(move || drop(guard)).await;
    result
}

async fn read_requests(input: &mut (impl AsyncRead + Unpin), state: &Arc<State>) -> io::Result<()> {
    while let Some(frame) = Frame::read(input).await? {
        let id = frame.id;
        match frame.kind {
            Kind::Exec => {
                let message: ExecMessage = frame.parse()?;
                let token = state.begin(id);
                tokio::spawn(exec(Arc::clone(state), id, message, token));
            }
            Kind::Call => {
                let message: CallMessage = frame.parse()?;
                let token = state.begin(id);
                let state = Arc::clone(state);
                tokio::spawn(async move {
                    let result =
                        (state.run_call)(message.tool, message.cwd, message.arguments, token).await;
                    state.finish(id);
                    state
                        .send(match result {
                            Ok(message) => Frame::json(Kind::Result, id, &message),
                            Err(text) => Frame::json(
                                Kind::Failed,
                                id,
                                &FailureMessage::from(&io::Error::other(text)),
                            ),
                        })
                        .await;
                });
            }
            Kind::Cancel => {
                if let Some(token) = state
                    .calls
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&id)
                {
                    token.cancel();
                }
            }
            Kind::EndSession => {
                let message: SessionMessage = frame.parse()?;
                let session = state
                    .sessions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&message.session);
                let state = Arc::clone(state);
                tokio::spawn(async move {
                    if let Some(session) = session {
                        let _ = tokio::task::spawn_blocking(move || session.end_session()).await;
                    }
                    state
                        .send(Frame {
                            kind: Kind::Ended,
                            id,
                            payload: Vec::new(),
                        })
                        .await;
                });
            }
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("the environment link got a {other:?} frame as a request"),
                ));
            }
        }
    }
    Ok(())
}

/// Runs one command and reports its output and end.
async fn exec(state: Arc<State>, id: u64, message: ExecMessage, cancel: CancellationToken) {
    let env = state.session(message.session, &message.cwd);
    let mut vars = message.env;
    vars.push((leftovers::SERVER_VAR.to_owned(), state.mark.clone()));
    let request = ExecRequest {
        command: message.command,
        cwd: message.cwd,
        timeout: message.timeout_ms.map(Duration::from_millis),
        env: vars,
    };
    let merged = state.out.clone();
    let on_chunk = Box::new(move |chunk: &[u8]| {
        send_now(
            &merged,
            &Frame {
                kind: Kind::Output,
                id,
                payload: chunk.to_vec(),
            },
        );
    });
    let result = if message.stderr {
        let errors = state.out.clone();
        let on_stderr = Box::new(move |chunk: &[u8]| {
            send_now(
                &errors,
                &Frame {
                    kind: Kind::Stderr,
                    id,
                    payload: chunk.to_vec(),
                },
            );
        });
        env.exec_with_stderr(request, cancel, on_chunk, on_stderr)
            .await
    } else {
        env.exec(request, cancel, on_chunk).await
    };
    state.finish(id);
    state
        .send(match result {
            Ok(outcome) => Frame::json(Kind::Done, id, &OutcomeMessage::from(outcome)),
            Err(err) => Frame::json(Kind::Failed, id, &FailureMessage::from(&err)),
        })
        .await;
}
