//! The client end of the environment link (`env::link`): one long-lived `pi-tools
//! env-server` on the remote machine, started once over the master connection, serves
//! every command and beside-the-files tool call of the environment (and of its sessions)
//! over that one SSH session's stdin and stdout. No shell starts per call, so the remote
//! shell's startup files run once, when the server starts.
//!
//! A writer task owns the session's stdin and a reader task its stdout; replies go to the
//! call of their id. When the stream ends (the server died, the connection dropped) every
//! call in flight fails with an error naming the host and the link is dead: the next call
//! starts a new server. Dropping the last handle closes the server's stdin, and the server
//! then kills every process its commands left before it exits.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use openssh::ChildStdin;
use tokio::io::{AsyncRead, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::core::ToolResultMessage;
use crate::env::remote::link::{
    CallMessage, ExecMessage, FailureMessage, Frame, Kind, OutcomeMessage, SessionMessage,
};
use crate::env::{ExecOutcome, ExecRequest, OutputSink};

/// How long a call waits for its end after a cancellation or its timeout, before it gives
/// up on a server that does not answer.
const ANSWER_GRACE: Duration = Duration::from_secs(5);

/// The calls in flight, by id: where their replies go.
type Calls = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Frame>>>>;

/// A live link to a remote `pi-tools env-server`.
#[derive(Debug)]
pub(super) struct Served {
    host: String,
    to_server: mpsc::UnboundedSender<Vec<u8>>,
    calls: Calls,
    next_id: AtomicU64,
    alive: Arc<AtomicBool>,
}

impl Served {
    /// Takes over a started server's stdin and stdout (positioned after its hello line;
    /// `output` holds what was read past it first). `keep` lives as long as the link (the
    /// SSH child process).
    pub(super) fn start(
        host: String,
        mut stdin: ChildStdin,
        output: impl AsyncRead + Unpin + Send + 'static,
        keep: impl Send + 'static,
    ) -> Served {
        let (to_server, mut queue) = mpsc::unbounded_channel::<Vec<u8>>();
        let alive = Arc::new(AtomicBool::new(true));
        let calls: Calls = Arc::new(Mutex::new(HashMap::new()));
        tokio::spawn(async move {
            while let Some(bytes) = queue.recv().await {
                if stdin.write_all(&bytes).await.is_err() {
                    break;
                }
                if queue.is_empty() && stdin.flush().await.is_err() {
                    break;
                }
            }
            // The link is let go (or broken): closing stdin tells the server to end.
            let _ = stdin.shutdown().await;
        });
        let reader_calls = Arc::clone(&calls);
        let reader_alive = Arc::clone(&alive);
        tokio::spawn(async move {
            let _keep = keep;
            let mut output = output;
            while let Ok(Some(frame)) = Frame::read(&mut output).await {
                let calls = reader_calls.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(call) = calls.get(&frame.id) {
                    let _ = call.send(frame);
                }
            }
            reader_alive.store(false, Ordering::SeqCst);
            // Every call in flight sees its channel close.
            reader_calls
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        });
        Served {
            host,
            to_server,
            calls,
            next_id: AtomicU64::new(1),
            alive,
        }
    }

    /// Whether the server may still answer.
    pub(super) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst) && !self.to_server.is_closed()
    }

    /// Registers a new call and sends its request; its replies arrive on the receiver.
    fn begin(&self, kind: Kind, payload: &impl serde::Serialize) -> io::Result<Call<'_>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, tx);
        let call = Call {
            served: self,
            id,
            replies: rx,
            finished: false,
        };
        if !self.is_alive()
            || self
                .to_server
                .send(Frame::json(kind, id, payload).encode())
                .is_err()
        {
            return Err(self.lost("could not send the call"));
        }
        Ok(call)
    }

    fn cancel(&self, id: u64) {
        let _ = self.to_server.send(
            Frame {
                kind: Kind::Cancel,
                id,
                payload: Vec::new(),
            }
            .encode(),
        );
    }

    /// The error for a call whose link broke.
    pub(super) fn lost(&self, what: &str) -> io::Error {
        self.alive.store(false, Ordering::SeqCst);
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!(
                "the SSH connection to {} (or the pi-tools process serving it there) was lost \
                 while the call ran ({what}); its output so far is above. Retry the call, which \
                 connects again",
                self.host
            ),
        )
    }

    /// Runs a command on the remote machine, as [`ExecutionEnv::exec`] (with its stderr
    /// also handed to `on_stderr` when given).
    ///
    /// [`ExecutionEnv::exec`]: crate::env::ExecutionEnv::exec
    pub(super) async fn exec(
        &self,
        session: u64,
        request: ExecRequest,
        cancel: CancellationToken,
        mut on_chunk: OutputSink,
        mut on_stderr: Option<OutputSink>,
    ) -> io::Result<ExecOutcome> {
        let timeout = request.timeout;
        let message = ExecMessage {
            session,
            command: request.command,
            cwd: request.cwd,
            timeout_ms: timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            env: request.env,
            stderr: on_stderr.is_some(),
        };
        let mut call = self.begin(Kind::Exec, &message)?;
        // The server enforces the timeout; this only bounds the wait for a server that
        // stopped answering without the connection dropping.
        let give_up = async {
            match timeout.and_then(|t| tokio::time::Instant::now().checked_add(t + ANSWER_GRACE)) {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(give_up);
        let mut cancelled_at: Option<tokio::time::Instant> = None;
        loop {
            let after_cancel = async {
                match cancelled_at {
                    Some(at) => tokio::time::sleep_until(at + ANSWER_GRACE).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                frame = call.replies.recv() => {
                    let Some(frame) = frame else {
                        return Err(self.lost("the command's end never arrived"));
                    };
                    match frame.kind {
                        Kind::Output => on_chunk(&frame.payload),
                        Kind::Stderr => {
                            if let Some(sink) = on_stderr.as_mut() {
                                sink(&frame.payload);
                            }
                        }
                        Kind::Done => {
                            call.finished = true;
                            return Ok(frame.parse::<OutcomeMessage>()?.into());
                        }
                        Kind::Failed => {
                            call.finished = true;
                            return Err(frame.parse::<FailureMessage>()?.into());
                        }
                        _ => {}
                    }
                }
                () = cancel.cancelled(), if cancelled_at.is_none() => {
                    self.cancel(call.id);
                    cancelled_at = Some(tokio::time::Instant::now());
                }
                () = after_cancel => {
                    return Err(self.lost("it did not answer the cancellation"));
                }
                () = &mut give_up => {
                    self.cancel(call.id);
                    return Err(self.lost("it did not end the command at its timeout"));
                }
            }
        }
    }

    /// Runs a tool call on the remote machine (see `ExecutionEnv::run_beside_files`).
    pub(super) async fn call(
        &self,
        tool: &str,
        cwd: PathBuf,
        arguments: serde_json::Value,
        cancel: CancellationToken,
    ) -> io::Result<ToolResultMessage> {
        let message = CallMessage {
            tool: tool.to_owned(),
            cwd,
            arguments,
        };
        let mut call = self.begin(Kind::Call, &message)?;
        let mut cancelled = false;
        loop {
            tokio::select! {
                frame = call.replies.recv() => {
                    let Some(frame) = frame else {
                        return Err(self.lost("the result never arrived"));
                    };
                    match frame.kind {
                        Kind::Result => {
                            call.finished = true;
                            return frame.parse::<ToolResultMessage>();
                        }
                        Kind::Failed => {
                            call.finished = true;
                            return Err(frame.parse::<FailureMessage>()?.into());
                        }
                        _ => {}
                    }
                }
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    self.cancel(call.id);
                }
            }
        }
    }

    /// Ends `session`'s background jobs on the remote machine and waits (at most `wait`)
    /// until the server says they are gone.
    pub(super) async fn end_session(&self, session: u64, wait: Duration) {
        let Ok(mut call) = self.begin(Kind::EndSession, &SessionMessage { session }) else {
            return;
        };
        let _ = tokio::time::timeout(wait, call.replies.recv()).await;
        call.finished = true;
    }
}

/// A call in flight; dropping it forgets its id, and cancels it on the server when it has
/// not ended (the caller stopped waiting).
struct Call<'a> {
    served: &'a Served,
    id: u64,
    replies: mpsc::UnboundedReceiver<Frame>,
    finished: bool,
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.served.cancel(self.id);
        }
        self.served
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}
