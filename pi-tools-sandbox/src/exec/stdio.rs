//! A command's standard streams, for [`run`](super::run): pipes (stdout and stderr merged into
//! one unless stderr is wanted on its own; stdin a pipe for a job, else `/dev/null`), or,
//! for a job that asks for one, a pseudo-terminal serving all three (`super::pty`).

use std::io;
use std::os::fd::OwnedFd;

use tokio::io::AsyncRead;
use tokio::net::unix::pipe;

use super::TerminalSize;
use super::input::InputWriter;

/// Where the command's merged output is read from: a pipe, or a terminal's leader side.
pub(crate) type OutputReader = Box<dyn AsyncRead + Send + Unpin>;

/// The command's ends.
pub(crate) struct ChildEnds {
    /// `None` for `/dev/null`.
    pub(crate) stdin: Option<OwnedFd>,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
}

/// This process's ends, not yet registered with the runtime.
pub(crate) struct ParentEnds {
    output: OwnedFd,
    errors: Option<OwnedFd>,
    input: Option<OwnedFd>,
    terminal: bool,
}

/// This process's ends, registered: the output, stderr on its own when asked for, and the
/// command's input when it takes any.
pub(crate) type Registered = (OutputReader, Option<pipe::Receiver>, Option<InputWriter>);

/// New streams for one command.
pub(crate) fn open(
    split_stderr: bool,
    piped_stdin: bool,
    terminal: Option<TerminalSize>,
) -> io::Result<(ChildEnds, ParentEnds)> {
    if let Some(size) = terminal {
        let (leader, follower) = super::pty::open(size)?;
        let child = ChildEnds {
            stdin: Some(follower.try_clone()?),
            stdout: follower.try_clone()?,
            stderr: follower,
        };
        let parent = ParentEnds {
            input: Some(leader.try_clone()?),
            output: leader,
            errors: None,
            terminal: true,
        };
        return Ok((child, parent));
    }
    let (reader, writer) = io::pipe()?;
    let (errors, stderr) = if split_stderr {
        let (r, w) = io::pipe()?;
        (Some(r.into()), w.into())
    } else {
        (None, writer.try_clone()?.into())
    };
    let (stdin, input) = match piped_stdin {
        true => io::pipe().map(|(r, w)| (Some(r.into()), Some(w.into())))?,
        false => (None, None),
    };
    let child = ChildEnds {
        stdin,
        stdout: writer.into(),
        stderr,
    };
    let parent = ParentEnds {
        output: reader.into(),
        errors,
        input,
        terminal: false,
    };
    Ok((child, parent))
}

impl ParentEnds {
    /// Registers the ends with the runtime (inside it).
    pub(crate) fn register(self) -> io::Result<Registered> {
        if self.terminal {
            let output = Box::new(super::pty::Leader::new(self.output)?);
            let input = self
                .input
                .map(|fd| super::pty::Leader::new(fd).map(|l| Box::new(l) as InputWriter))
                .transpose()?;
            return Ok((output, None, input));
        }
        let output = Box::new(pipe::Receiver::from_owned_fd(self.output)?);
        let errors = self.errors.map(pipe::Receiver::from_owned_fd).transpose()?;
        let input = self
            .input
            .map(|fd| pipe::Sender::from_owned_fd(fd).map(|s| Box::new(s) as InputWriter))
            .transpose()?;
        Ok((output, errors, input))
    }
}

/// In a command's child before `exec`, on a terminal: a session of its own (so the group is
/// its pid, as for other commands) whose controlling terminal is its standard input.
pub(crate) fn take_terminal() -> io::Result<()> {
    // rustix's are the bare system calls (async-signal-safe, as after fork they must be).
    rustix::process::setsid()?;
    // SAFETY: 0 is the child's standard input, open (the terminal) until `exec`.
    let stdin = unsafe { std::os::fd::BorrowedFd::borrow_raw(0) };
    rustix::process::ioctl_tiocsctty(stdin)?;
    Ok(())
}
