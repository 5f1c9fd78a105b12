//! What is sent to a running command (a job) while it runs, and the receiving end
//! [`run`](super::run) takes.

use tokio::sync::mpsc;

/// One thing sent to a running command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Bytes for its standard input (or its terminal's keyboard, on a pseudo-terminal).
    Input(Vec<u8>),
    /// Closes its standard input, so a program reading to the end sees it.
    CloseInput,
    /// A signal for every process of its process group (its shell and what it started).
    Signal(i32),
}

/// A terminal's size, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalSize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

impl Default for TerminalSize {
    fn default() -> Self {
        TerminalSize { rows: 24, cols: 80 }
    }
}

/// How a command takes input while it runs: the channel [`Control`]s come on, and whether it
/// runs on a pseudo-terminal (of that size) instead of pipes.
#[derive(Debug)]
pub struct Input {
    /// What is sent to the command, in order.
    pub control: mpsc::UnboundedReceiver<Control>,
    /// `Some` to run the command on a pseudo-terminal of this size: standard input, output
    /// and error are the terminal, and the command is the leader of a session of its own.
    pub terminal: Option<TerminalSize>,
}
