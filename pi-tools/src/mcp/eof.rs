//! End of input: a reader that tells the server when its input has ended, and a writer that
//! stops writing then.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::CancellationToken;

/// Wraps the session's input and cancels `ended` at end of input (or on a read error), so
/// calls in flight are cancelled at once instead of running on for a client that is gone.
pub(crate) struct EofSignal<R> {
    inner: R,
    ended: CancellationToken,
}

impl<R> EofSignal<R> {
    pub(crate) fn new(inner: R, ended: CancellationToken) -> Self {
        EofSignal { inner, ended }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => self.ended.cancel(),
            Poll::Ready(Err(_)) => self.ended.cancel(),
            _ => {}
        }
        polled
    }
}

/// Wraps the session's output and drops whatever is written once `ended` is cancelled.
///
/// Closing the server's input is how an MCP client ends a stdio session; answers to calls
/// cancelled by it have no reader left, and some clients (the Python SDK before 2.0) fail
/// while shutting down if one arrives anyway.
pub(crate) struct QuietAfterEnd<W> {
    inner: W,
    ended: CancellationToken,
}

impl<W> QuietAfterEnd<W> {
    pub(crate) fn new(inner: W, ended: CancellationToken) -> Self {
        QuietAfterEnd { inner, ended }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for QuietAfterEnd<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.ended.is_cancelled() {
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.ended.is_cancelled() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn cancels_only_once_the_input_has_ended() {
        let (mut writer, reader) = tokio::io::duplex(64);
        let ended = CancellationToken::new();
        let mut reader = EofSignal::new(reader, ended.clone());
        writer.write_all(b"line\n").await.expect("the pipe is open");
        let mut buf = [0u8; 16];
        let n = reader.read(&mut buf).await.expect("bytes are waiting");
        assert_eq!(&buf[..n], b"line\n");
        assert!(!ended.is_cancelled());
        drop(writer);
        assert_eq!(reader.read(&mut buf).await.expect("end of input"), 0);
        assert!(ended.is_cancelled());
    }

    #[tokio::test]
    async fn writes_nothing_once_the_input_has_ended() {
        let (writer, mut reader) = tokio::io::duplex(64);
        let ended = CancellationToken::new();
        let mut writer = QuietAfterEnd::new(writer, ended.clone());
        writer.write_all(b"before\n").await.expect("written");
        ended.cancel();
        writer.write_all(b"after\n").await.expect("dropped quietly");
        writer.shutdown().await.expect("closed");
        let mut out = String::new();
        reader.read_to_string(&mut out).await.expect("readable");
        assert_eq!(out, "before\n");
    }
}
