//! A reader that tells the server when its input has ended.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
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
}
