//! The client side of a mounted stdio server's transport: rmcp's line transport for what is
//! sent, and a reader of our own for what comes back.
//!
//! rmcp reads a server's answer into `ServerResult`, an untagged union of nineteen result
//! types tried in turn, each through serde's buffered content; a `tools/call` result is the
//! sixteenth. That was the largest single cost of a call through the gateway. So the ids of
//! the `tools/call` requests sent are remembered, and an answer to one of them is read
//! straight into `CallToolResult`; every other line, or an answer that does not read as
//! one, goes rmcp's way.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

/// The longest line read from a server (a larger one is skipped, with a warning).
const MAX_LINE: usize = 64 << 20;

/// A stdio server's transport: `W` is its stdin, `R` its stdout.
pub(crate) struct LineClient<R, W: AsyncWrite + Send + Unpin + 'static> {
    send: AsyncRwTransport<RoleClient, tokio::io::Empty, W>,
    lines: FramedRead<R, LinesCodec>,
    /// The `tools/call` requests sent and not yet answered.
    calls: Arc<Mutex<HashSet<RequestId>>>,
}

impl<R: AsyncRead, W: AsyncWrite + Send + Unpin + 'static> LineClient<R, W> {
    pub(crate) fn new(stdout: R, stdin: W) -> Self {
        LineClient {
            send: AsyncRwTransport::new(tokio::io::empty(), stdin),
            lines: FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE)),
            calls: Arc::default(),
        }
    }
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
    let answer: CallAnswer<'_> = serde_json::from_str(line).ok()?;
    if answer.jsonrpc != "2.0" {
        return None;
    }
    let mut calls = calls.lock().unwrap_or_else(|e| e.into_inner());
    calls.remove(&answer.id).then(|| {
        ServerJsonRpcMessage::response(ServerResult::CallToolResult(answer.result), answer.id)
    })
}

impl<R, W> Transport<RoleClient> for LineClient<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::CallToolRequest(_))
        {
            let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            calls.insert(request.id.clone());
        }
        self.send.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let line = match self.lines.next().await? {
                Ok(line) => line,
                Err(LinesCodecError::MaxLineLengthExceeded) => {
                    tracing::warn!(
                        "a mounted server sent a line longer than {MAX_LINE} bytes; it was skipped"
                    );
                    continue;
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
            if let Some(answer) = read_call_answer(line, &self.calls) {
                return Some(answer);
            }
            match serde_json::from_str::<ServerJsonRpcMessage>(line) {
                Ok(message) => {
                    if let ServerJsonRpcMessage::Response(r) = &message {
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
        self.send.close().await
    }
}

impl<R, W: AsyncWrite + Send + Unpin + 'static> LineClient<R, W> {
    fn forget(&self, id: &RequestId) {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.remove(id);
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
