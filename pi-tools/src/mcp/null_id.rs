//! A writer that gives `"id": null` to error answers written without an id.
//!
//! JSON-RPC 2.0 says an error answer to a request whose id could not be read ("Invalid
//! request") carries `"id": null`; the protocol library leaves the member out, and strict
//! clients reject such a message. The session's output is one JSON message per line, so
//! this writer passes lines through, adding the member to the lines that are an error
//! without an id.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// How an error answer without an id starts, as the library serialises it.
const ID_LESS_ERROR: &[u8] = br#"{"jsonrpc":"2.0","error":"#;
const WITH_NULL_ID: &[u8] = br#"{"jsonrpc":"2.0","id":null,"error":"#;

/// Output at most buffered before a write waits for the inner writer.
const HIGH_WATER: usize = 1 << 20;

pub(crate) struct NullIdOnErrors<W> {
    inner: W,
    /// The start of a line not yet complete.
    line: Vec<u8>,
    /// Complete lines, ready for the inner writer.
    out: Vec<u8>,
    /// How much of `out` the inner writer has taken.
    written: usize,
}

impl<W> NullIdOnErrors<W> {
    pub(crate) fn new(inner: W) -> Self {
        NullIdOnErrors {
            inner,
            line: Vec::new(),
            out: Vec::new(),
            written: 0,
        }
    }

    fn take_line(&mut self, line: &[u8]) {
        match line.strip_prefix(ID_LESS_ERROR) {
            Some(rest) => {
                self.out.extend_from_slice(WITH_NULL_ID);
                self.out.extend_from_slice(rest);
            }
            None => self.out.extend_from_slice(line),
        }
    }
}

impl<W: AsyncWrite + Unpin> NullIdOnErrors<W> {
    /// Hands buffered lines to the inner writer until it has them all or would block.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.out.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.out[self.written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => self.written += n,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.out.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for NullIdOnErrors<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.out.len() - this.written >= HIGH_WATER {
            match this.drain(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let mut rest = buf;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(end + 1);
            if this.line.is_empty() {
                this.take_line(head);
            } else {
                let mut line = std::mem::take(&mut this.line);
                line.extend_from_slice(head);
                this.take_line(&line);
                line.clear();
                this.line = line;
            }
            rest = tail;
        }
        this.line.extend_from_slice(rest);
        // Whatever the inner writer takes now is out; the rest goes at the next flush.
        if let Poll::Ready(Err(err)) = this.drain(cx) {
            return Poll::Ready(Err(err));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.line.is_empty() {
            // A flush in the middle of a line: pass the part written so far through as is.
            let line = std::mem::take(&mut this.line);
            this.out.extend_from_slice(&line);
        }
        match this.drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.as_mut().poll_flush(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.inner).poll_shutdown(cx),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn error_lines_without_an_id_get_a_null_one_and_the_rest_pass_unchanged() {
        let (writer, mut reader) = tokio::io::duplex(16);
        let mut writer = NullIdOnErrors::new(writer);
        let lines = concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}"#,
            "\n",
        );
        let reading = tokio::spawn(async move {
            let mut out = String::new();
            reader.read_to_string(&mut out).await.map(|_| out)
        });
        // In awkward pieces, through a pipe that takes 16 bytes at a time.
        for piece in lines.as_bytes().chunks(7) {
            writer.write_all(piece).await.expect("written");
        }
        writer.shutdown().await.expect("flushed and closed");
        let out = reading.await.expect("joined").expect("read");
        assert_eq!(
            out,
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}"#,
                "\n",
            )
        );
    }
}
