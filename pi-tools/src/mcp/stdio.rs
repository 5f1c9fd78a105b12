//! The process's stdin and stdout as the byte streams of the stdio transport.
//!
//! Tokio's `stdin()` and `stdout()` hand every read and every write to a thread of the
//! blocking pool (the descriptors could be files or terminals, which cannot be polled): two
//! thread hand-offs per request, a large part of a small call's time. MCP clients start
//! their servers with pipes (or a socket pair), which can be polled, so those are read and
//! written by the runtime itself; anything else keeps tokio's streams. Polling needs the
//! descriptions in non-blocking mode; their flags are put back when the streams are dropped,
//! so a shell script that goes on using the same pipe after the server ends is not left with
//! non-blocking I/O.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// The read side of the stdio transport (see [`stdio`]).
pub type StdinStream = Box<dyn AsyncRead + Send + Unpin>;
/// The write side of the stdio transport (see [`stdio`]).
pub type StdoutStream = Box<dyn AsyncWrite + Send + Unpin>;

/// The process's stdin and stdout for [`serve_split`](super::serve_split): polled by the
/// runtime when they are pipes or sockets (as an MCP client starts its server), otherwise
/// tokio's own streams.
pub fn stdio() -> (StdinStream, StdoutStream) {
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let input = polled(stdin.as_fd(), None);
    // A socket pair's one end is often both stdin and stdout: one description, whose flags
    // go back only when both streams are gone.
    let shared = input.as_ref().map(|p| (p.object, Arc::clone(&p.guard)));
    let output = polled(stdout.as_fd(), shared);
    let reader: StdinStream = match input {
        Some(Polled {
            fd,
            kind: FileType::Fifo,
            guard,
            ..
        }) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(pipe) => Box::new(Restoring {
                inner: pipe,
                _guard: guard,
            }),
            Err(_) => Box::new(tokio::io::stdin()),
        },
        Some(Polled { fd, guard, .. }) => match socket(fd) {
            Some(socket) => Box::new(Restoring {
                inner: socket,
                _guard: guard,
            }),
            None => Box::new(tokio::io::stdin()),
        },
        None => Box::new(tokio::io::stdin()),
    };
    let writer: StdoutStream = match output {
        Some(Polled {
            fd,
            kind: FileType::Fifo,
            guard,
            ..
        }) => match pipe::Sender::from_owned_fd(fd) {
            Ok(pipe) => Box::new(Restoring {
                inner: pipe,
                _guard: guard,
            }),
            Err(_) => Box::new(tokio::io::stdout()),
        },
        Some(Polled { fd, guard, .. }) => match socket(fd) {
            Some(socket) => Box::new(Restoring {
                inner: socket,
                _guard: guard,
            }),
            None => Box::new(tokio::io::stdout()),
        },
        None => Box::new(tokio::io::stdout()),
    };
    (reader, writer)
}

/// A standard stream the runtime can poll: a copy of its descriptor, what it is (a pipe or
/// a socket), which object it is (device and inode), and the guard of its flags.
struct Polled {
    fd: OwnedFd,
    kind: FileType,
    object: (u64, u64),
    guard: Arc<FlagsGuard>,
}

/// What `fd` can be polled as; `None` for anything else (a file, a terminal), or when a step
/// fails (the caller then uses tokio's blocking-pool stream). `shared` is the other
/// stream's object and guard, reused when `fd` is the same object.
fn polled(fd: BorrowedFd<'_>, shared: Option<((u64, u64), Arc<FlagsGuard>)>) -> Option<Polled> {
    let stat = rustix::fs::fstat(fd).ok()?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if !matches!(kind, FileType::Fifo | FileType::Socket) {
        return None;
    }
    let object = (stat.st_dev, stat.st_ino);
    let guard = match shared {
        Some((other, guard)) if other == object => guard,
        _ => Arc::new(FlagsGuard {
            flags: rustix::fs::fcntl_getfl(fd).ok()?,
            fd: fd.try_clone_to_owned().ok()?,
        }),
    };
    Some(Polled {
        fd: fd.try_clone_to_owned().ok()?,
        kind,
        object,
        guard,
    })
}

/// A socket descriptor as a stream the runtime polls.
fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
    let socket = std::os::unix::net::UnixStream::from(fd);
    socket.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(socket).ok()
}

/// Puts a description's original flags back (its blocking mode) when the last stream on it
/// is dropped.
struct FlagsGuard {
    fd: OwnedFd,
    flags: OFlags,
}

impl Drop for FlagsGuard {
    fn drop(&mut self) {
        let _ = rustix::fs::fcntl_setfl(&self.fd, self.flags);
    }
}

/// A polled stream and the guard of its description's flags.
struct Restoring<T> {
    inner: T,
    _guard: Arc<FlagsGuard>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Restoring<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Restoring<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
