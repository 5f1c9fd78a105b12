//! The client side of a mounted stdio server's transport: a writer of our own with a bounded
//! queue for what is sent, and a reader of our own for what comes back.
//!
//! rmcp reads a server's answer into `ServerResult`, an untagged union of nineteen result
//! types tried in turn, each through serde's buffered content; a `tools/call` result is the
//! sixteenth. That was the largest single cost of a call through the gateway. So the ids of
//! the `tools/call` requests sent are remembered, and an answer to one of them is read
//! straight into `CallToolResult`; every other line, or an answer that does not read as
//! one, goes rmcp's way.
//!
//! A server is cut off (its input closed, every call waiting on it failed at once with the
//! reason, the next call starting it again) when it sends a line longer than `[mcp]
//! max_message_bytes`, or one with more JSON values than decoding may take memory for (one
//! per [`BYTES_PER_VALUE`] bytes of the limit: a decoded value takes tens of bytes, so 40 MB
//! of `0,` would take GBs), or when it stops reading its input: more than [`MAX_QUEUED`]
//! messages or twice the limit in bytes waiting for it (a flood of pings it does not read
//! the answers of), or one write waiting [`STALL`], or more than [`MAX_QUEUED`] of its
//! requests waiting for an answer (rmcp starts a task for each request it reads; a server
//! that sends pings faster than they are answered would otherwise grow them without bound,
//! and with as many flooding servers as worker threads the answers never come).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::Transport;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
use tokio_util::sync::CancellationToken;

/// How many messages may wait to be written to a server before it counts as not reading.
pub(crate) const MAX_QUEUED: usize = 1024;

/// How long one write to a server may wait before it counts as not reading.
pub(crate) const STALL: Duration = Duration::from_secs(30);

/// A message may hold one JSON value for every this many bytes of `[mcp]
/// max_message_bytes`.
pub(crate) const BYTES_PER_VALUE: usize = 16;

/// The state a connection's reader, writer and owner share: what waits to be written, and
/// why the server was cut off.
#[derive(Default)]
pub(crate) struct Link {
    queued: AtomicUsize,
    queued_bytes: AtomicUsize,
    /// The server's requests read and not yet answered.
    unanswered: AtomicUsize,
    reason: Mutex<Option<String>>,
    cut: CancellationToken,
}

impl Link {
    /// Cuts the server off: the first reason given stays.
    fn cut_off(&self, reason: String) {
        let mut slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            tracing::warn!("a mounted server was cut off: {reason}");
            *slot = Some(reason);
        }
        self.cut.cancel();
    }

    /// Why the server was cut off, if it was.
    pub(crate) fn reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A stdio server's transport: `R` is its stdout; its stdin belongs to the writer task.
pub(crate) struct LineClient<R> {
    writer: Option<mpsc::UnboundedSender<Vec<u8>>>,
    lines: FramedRead<R, LinesCodec>,
    /// The `tools/call` requests sent and not yet answered.
    calls: Arc<Mutex<HashSet<RequestId>>>,
    max_message: usize,
    link: Arc<Link>,
}

impl<R: AsyncRead> LineClient<R> {
    /// The transport of a server whose messages may be up to `max_message` bytes; also the
    /// link that says why it was cut off.
    pub(crate) fn new<W>(stdout: R, stdin: W, max_message: usize) -> (Self, Arc<Link>)
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let link = Arc::new(Link::default());
        let (writer, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_all(stdin, queue, Arc::clone(&link), max_message));
        let client = LineClient {
            writer: Some(writer),
            lines: FramedRead::new(stdout, LinesCodec::new_with_max_length(max_message)),
            calls: Arc::default(),
            max_message,
            link: Arc::clone(&link),
        };
        (client, link)
    }
}

/// Writes the queued messages to the server's input, until the queue closes or the server
/// is cut off; a write that waits [`STALL`] cuts it off.
async fn write_all<W: AsyncWrite + Unpin>(
    mut stdin: W,
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
    link: Arc<Link>,
    max_message: usize,
) {
    loop {
        let bytes = tokio::select! {
            bytes = queue.recv() => bytes,
            () = link.cut.cancelled() => None,
        };
        let Some(bytes) = bytes else { break };
        let written = tokio::select! {
            written = tokio::time::timeout(STALL, stdin.write_all(&bytes)) => written,
            () = link.cut.cancelled() => break,
        };
        match written {
            Ok(Ok(())) => {}
            // The server closed its input: the reader sees it end.
            Ok(Err(_)) => break,
            Err(_) => {
                link.cut_off(not_reading(&link, max_message));
                break;
            }
        }
        link.queued.fetch_sub(1, Ordering::SeqCst);
        link.queued_bytes.fetch_sub(bytes.len(), Ordering::SeqCst);
    }
    // Dropping the input closes it: the server sees its input end.
}

/// The reason for a server that does not read its input.
fn not_reading(link: &Link, max_message: usize) -> String {
    format!(
        "it stopped reading its input ({} messages, {} bytes, were waiting for it; the gateway keeps at most {MAX_QUEUED} messages or {} bytes, and waits at most {} s for one write)",
        link.queued.load(Ordering::SeqCst),
        link.queued_bytes.load(Ordering::SeqCst),
        max_message.saturating_mul(2),
        STALL.as_secs()
    )
}

/// Why a message of `bytes` is not decoded when it has more JSON values than decoding may
/// take memory for, given `[mcp] max_message_bytes` of `max_message`.
pub(super) fn too_many_values(bytes: &[u8], max_message: usize) -> Option<String> {
    let most = (max_message / BYTES_PER_VALUE).max(1024);
    let values = values_in(bytes);
    (values > most).then(|| format!(
        "it sent a message of {values} JSON values; the gateway decodes at most {most} in one message (one per {BYTES_PER_VALUE} bytes of [mcp] max_message_bytes)"
    ))
}

/// How many JSON values `bytes` holds, counted without decoding it: each value begins at
/// the start, after `[`, `,` or `:` outside strings.
fn values_in(bytes: &[u8]) -> usize {
    let mut values = 1;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'[' | b',' | b':' => values += 1,
                _ => {}
            }
        }
    }
    values
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallAnswer<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    result: CallToolResult,
}

/// `line` as the answer to a `tools/call` request in `calls`, when it is one.
fn read_call_answer(line: &str, calls: &Mutex<HashSet<RequestId>>) -> Option<ServerJsonRpcMessage> {
    let (id, result) = call_answer(line.as_bytes())?;
    let mut calls = calls.lock().unwrap_or_else(|e| e.into_inner());
    calls
        .remove(&id)
        .then(|| ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), id))
}

/// `bytes` as an answer holding a `tools/call` result (its id and the result), read
/// straight into `CallToolResult`, when it reads as one.
pub(super) fn call_answer(bytes: &[u8]) -> Option<(RequestId, CallToolResult)> {
    let answer: CallAnswer<'_> = serde_json::from_slice(bytes).ok()?;
    (answer.jsonrpc == "2.0").then_some((answer.id, answer.result))
}

impl<R> Transport<RoleClient> for LineClient<R>
where
    R: AsyncRead + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        std::future::ready(self.queue(item))
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let next = tokio::select! {
                next = self.lines.next() => next?,
                () = self.link.cut.cancelled() => return None,
            };
            let line = match next {
                Ok(line) => line,
                Err(LinesCodecError::MaxLineLengthExceeded) => {
                    self.link.cut_off(format!(
                        "it sent a message longer than {} bytes, the limit of [mcp] max_message_bytes",
                        self.max_message
                    ));
                    return None;
                }
                Err(LinesCodecError::Io(err)) => {
                    tracing::debug!(%err, "reading a mounted server's output failed");
                    return None;
                }
            };
            let line = line.strip_prefix('\u{feff}').unwrap_or(&line).trim_end();
            if line.is_empty() {
                continue;
            }
            if let Some(why) = too_many_values(line.as_bytes(), self.max_message) {
                self.link.cut_off(why);
                return None;
            }
            if let Some(answer) = read_call_answer(line, &self.calls) {
                return Some(answer);
            }
            match serde_json::from_str::<ServerJsonRpcMessage>(line) {
                Ok(message) => {
                    if let ServerJsonRpcMessage::Request(_) = &message {
                        let unanswered = self.link.unanswered.fetch_add(1, Ordering::SeqCst) + 1;
                        if unanswered > MAX_QUEUED {
                            self.link.cut_off(format!(
                                "it stopped reading its input or sent requests faster than they could be answered (more than {MAX_QUEUED} of its requests were waiting for an answer)"
                            ));
                            return None;
                        }
                    } else if let ServerJsonRpcMessage::Response(r) = &message {
                        self.forget(&r.id);
                    } else if let ServerJsonRpcMessage::Error(e) = &message
                        && let Some(id) = &e.id
                    {
                        self.forget(id);
                    }
                    return Some(message);
                }
                Err(err) => {
                    tracing::debug!(%err, line, "a mounted server sent a line that is not a message; skipped");
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), std::io::Error> {
        // The writer ends once it has written what is queued, and closes the input.
        self.writer = None;
        Ok(())
    }
}

impl<R> LineClient<R> {
    fn forget(&self, id: &RequestId) {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.remove(id);
    }

    /// Queues `item` for the writer, or cuts the server off when too much waits for it.
    fn queue(&mut self, item: ClientJsonRpcMessage) -> std::io::Result<()> {
        let refused = |reason: String| std::io::Error::new(std::io::ErrorKind::BrokenPipe, reason);
        if let Some(reason) = self.link.reason() {
            return Err(refused(reason));
        }
        let Some(writer) = &self.writer else {
            return Err(refused("the connection is closing".to_owned()));
        };
        let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        let queued = self.link.queued.fetch_add(1, Ordering::SeqCst) + 1;
        let queued_bytes = self
            .link
            .queued_bytes
            .fetch_add(bytes.len(), Ordering::SeqCst)
            + bytes.len();
        if queued > MAX_QUEUED || queued_bytes > self.max_message.saturating_mul(2) {
            let reason = not_reading(&self.link, self.max_message);
            self.link.cut_off(reason.clone());
            return Err(refused(reason));
        }
        if matches!(
            item,
            ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_)
        ) {
            // An answer to one of its requests (one the server sent with a bad id counts
            // too, which can only lower the count).
            let _ = self
                .link
                .unanswered
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        }
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::CallToolRequest(_))
        {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            calls.insert(request.id.clone());
        }
        writer
            .send(bytes)
            .map_err(|_| refused("the connection is closed".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_answer_reads_as_rmcp_reads_it_and_only_for_a_call_sent() {
        let calls = Mutex::new(HashSet::from([RequestId::Number(3)]));
        let line = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: hi"}],"isError":false}}"#;
        let slow: ServerJsonRpcMessage = serde_json::from_str(line).unwrap();
        let fast = read_call_answer(line, &calls).expect("the answer to call 3");
        assert_eq!(
            serde_json::to_value(&fast).unwrap(),
            serde_json::to_value(&slow).unwrap()
        );
        assert!(matches!(
            slow,
            ServerJsonRpcMessage::Response(r) if matches!(r.result, ServerResult::CallToolResult(_))
        ));
        assert!(calls.lock().unwrap().is_empty());
        // Not a call sent (any more): rmcp's way.
        assert!(read_call_answer(line, &calls).is_none());
        // Another shape: rmcp's way.
        let calls = Mutex::new(HashSet::from([RequestId::Number(4)]));
        let other = r#"{"jsonrpc":"2.0","id":4,"result":{"content":[]},"extra":1}"#;
        assert!(read_call_answer(other, &calls).is_none());
        let error = r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"no"}}"#;
        assert!(read_call_answer(error, &calls).is_none());
    }
}
