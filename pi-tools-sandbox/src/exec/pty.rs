//! Pseudo-terminals for jobs that ask for one (`pty: true`): the command's standard input,
//! output and error are the terminal's follower side, and this process reads and writes the
//! leader side, through [`Leader`], which the runtime polls like a pipe. When every process
//! has closed the follower side, reading the leader fails with `EIO`: that is its end of
//! file.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::TerminalSize;

/// A new terminal of `size`: its leader side (non-blocking, for this process) and its
/// follower side (for the command).
pub(crate) fn open(size: TerminalSize) -> io::Result<(OwnedFd, OwnedFd)> {
    let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
    let leader = rustix::pty::openpt(flags)?;
    rustix::pty::grantpt(&leader)?;
    rustix::pty::unlockpt(&leader)?;
    let follower = match rustix::pty::ioctl_tiocgptpeer(&leader, flags) {
        Ok(fd) => fd,
        // Before Linux 4.13: by its name.
        Err(_) => {
            let name = rustix::pty::ptsname(&leader, Vec::new())?;
            let flags = OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC;
            rustix::fs::open(name.as_c_str(), flags, Mode::empty())?
        }
    };
    let winsize = rustix::termios::Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&follower, winsize)?;
    let flags = rustix::fs::fcntl_getfl(&leader)?;
    rustix::fs::fcntl_setfl(&leader, flags | OFlags::NONBLOCK)?;
    Ok((leader, follower))
}

/// The leader side of a terminal, read (the command's output) or written (its keyboard).
pub(crate) struct Leader(AsyncFd<OwnedFd>);

impl Leader {
    /// Registers `fd` (a non-blocking leader side) with the runtime.
    pub(crate) fn new(fd: OwnedFd) -> io::Result<Self> {
        // SAFETY: the Leader owns the descriptor, which stays open and the same until dropped.
        let registered = unsafe { AsyncFd::register(fd) };
        Ok(Leader(registered.map_err(io::Error::from)?))
    }
}

impl AsyncRead for Leader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard.try_io(|fd| Ok(rustix::io::read(fd.get_ref().as_fd(), &mut *unfilled)?)) {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                // Every process closed the follower side: the end of the output.
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Poll::Ready(Ok(())),
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

impl AsyncWrite for Leader {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.0.poll_write_ready(cx))?;
            match guard.try_io(|fd| Ok(rustix::io::write(fd.get_ref().as_fd(), data)?)) {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => {}
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
