//! The environment link: how one long-lived `pi-tools env-server` on another machine serves
//! an environment's commands and calls over a byte stream (the stdin and stdout of one SSH
//! session), so no shell starts per call.
//!
//! A small framed protocol rather than MCP or JSON-RPC: a command's output is raw bytes that
//! must arrive as they are written (no base64, no line framing), a call in flight must be
//! cancellable, and many calls share the stream at once. Each frame is
//!
//! ```text
//! u32 length (big-endian, of what follows) | u8 kind | u64 call id | payload
//! ```
//!
//! where the payload is JSON for requests and results and raw bytes for output. Before its
//! first frame the server prints [`HELLO`] on a line of its own, so the client can skip what
//! the remote shell's startup files printed.
//!
//! Requests (client to server): [`Kind::Exec`] (an [`ExecMessage`]), [`Kind::Cancel`] (the
//! call of the same id), [`Kind::Call`] (a [`CallMessage`]: a tool call to run beside the
//! files), [`Kind::EndSession`] (a [`SessionMessage`]: end its background jobs). Replies
//! (server to client, same id): [`Kind::Output`] and [`Kind::Stderr`] chunks, then one of
//! [`Kind::Done`] (an [`OutcomeMessage`]), [`Kind::Result`] (a tool result message),
//! [`Kind::Failed`] (a [`FailureMessage`]) or [`Kind::Ended`].

// The frames are what the SSH environment's client and the binary's `env-server` speak.
#[cfg(any(feature = "ssh", feature = "cli"))]
mod frame;
// Only the binary's `env-server` serves the link.
#[cfg(feature = "cli")]
pub(crate) mod server;

#[cfg(any(feature = "ssh", feature = "cli"))]
pub(crate) use frame::*;
