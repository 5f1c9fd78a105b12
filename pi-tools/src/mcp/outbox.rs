//! The writing side of the stdio transport: the lines waiting for the writer, in the order
//! they were sent, and the task that writes them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

/// A sender waits while more than this many bytes of lines wait for the writer (a client
/// that does not read its answers).
const MAX_QUEUED_BYTES: usize = 8 << 20;

/// The lines waiting for the writer. A line is queued the moment it is sent, so the order
/// of sends is the order on the wire (a call's progress notifications come before its
/// result, though the protocol library finishes each send in a task of its own); only the
/// wait for room is left to the sender's future.
#[derive(Clone)]
pub(super) struct Outbox {
    lines: mpsc::UnboundedSender<Vec<u8>>,
    pub(super) queue: Arc<Queued>,
}

/// The bytes queued, shared with the writer, which wakes waiting senders.
#[derive(Default)]
pub(super) struct Queued {
    bytes: AtomicUsize,
    drained: Notify,
}

impl Queued {
    /// Called by the writer for each line it takes.
    fn written(&self, bytes: usize) {
        let before = self.bytes.fetch_sub(bytes, Ordering::Relaxed);
        if before > MAX_QUEUED_BYTES && before - bytes <= MAX_QUEUED_BYTES {
            self.drained.notify_waiters();
        }
    }
}

impl Outbox {
    pub(super) fn new() -> (Outbox, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (lines, rx) = mpsc::unbounded_channel();
        let outbox = Outbox {
            lines,
            queue: Arc::default(),
        };
        (outbox, rx)
    }

    /// Queues a line; `false` once the writer is gone (the session is over).
    pub(super) fn push(&self, line: Vec<u8>) -> bool {
        self.queue.bytes.fetch_add(line.len(), Ordering::Relaxed);
        self.lines.send(line).is_ok()
    }

    /// Waits while the queue is over its bound.
    pub(super) async fn room(&self) {
        let over = || self.queue.bytes.load(Ordering::Relaxed) > MAX_QUEUED_BYTES;
        while over() && !self.lines.is_closed() {
            let drained = self.queue.drained.notified();
            if !over() {
                return;
            }
            drained.await;
        }
    }
}

/// Writes lines as they come, flushing when none is waiting, until every sender is gone;
/// drops them once `discard` is cancelled.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(
    writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    queue: Arc<Queued>,
    discard: CancellationToken,
) {
    let mut out = BufWriter::new(writer);
    while let Some(line) = lines.recv().await {
        queue.written(line.len());
        // A signal or a failed read ends the session with its calls cancelled: the client
        // is gone or going, and some clients (the Python SDK before 2.0) fail while
        // shutting down if an answer arrives anyway.
        if discard.is_cancelled() {
            continue;
        }
        if out.write_all(&line).await.is_err() {
            return;
        }
        if lines.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}
