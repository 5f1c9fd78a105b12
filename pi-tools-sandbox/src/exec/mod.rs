//! Running a shell command on this machine: what to run ([`ExecRequest`]), how it ended
//! ([`ExecOutcome`]), where its output goes ([`OutputSink`]) and what a job sends it while it
//! runs ([`Input`]); with the `process` feature, `run` runs it, confined by a [`Sandbox`]
//! when given one and tracked by a `procs::Tracker`.
//!
//! [`Sandbox`]: crate::Sandbox

mod control;
#[cfg(feature = "process")]
mod input;
#[cfg(all(unix, feature = "process"))]
mod pty;
#[cfg(feature = "process")]
mod run;
#[cfg(all(target_os = "linux", feature = "process"))]
mod spawn;
#[cfg(feature = "process")]
mod stdio;

use std::path::PathBuf;
use std::time::Duration;

pub use control::{Control, Input, TerminalSize};
#[cfg(feature = "process")]
pub use run::{PIPE_GRACE, run, shell};

/// A shell command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The shell command line.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Kill the command and every process it started after this long (a timeout too long
    /// for the clock to hold means none).
    pub timeout: Option<Duration>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExecOutcome {
    /// The exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// It was killed because the request's timeout passed.
    pub timed_out: bool,
    /// It was killed because the cancellation token fired.
    pub aborted: bool,
}

/// Receives a running process's output, chunk by chunk, as it arrives.
pub type OutputSink = Box<dyn FnMut(&[u8]) + Send>;
