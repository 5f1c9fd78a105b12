//! A reply that cannot be read: which wire format, where in it, and why.

use crate::dialect::Dialect;

/// A provider reply (or event stream) that cannot be read as a whole: the JSON is broken, a
/// field the provider always sends is missing or of another type, a block has a type nobody
/// knows, or the stream ended before the reply did.
///
/// A problem that concerns one call only (its arguments are not a JSON object) is not this
/// error: that call gets a failed result instead (see [`Reply::unreadable`]).
///
/// Its `Debug` is its `Display`, so `main` returning it with `?` prints the sentence.
///
/// [`Reply::unreadable`]: super::Reply::unreadable
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ReplyError {
    /// The wire format the reply was read as.
    pub dialect: Dialect,
    /// Whether the reply was an event stream.
    pub streamed: bool,
    /// Where the problem is: a JSON path into the reply (`choices[0].message.tool_calls[1].id`),
    /// for a stream into the reply rebuilt from its events, or the event (`event 7`); empty
    /// for the reply as a whole.
    pub path: String,
    /// What is wrong, and what to do about it.
    pub reason: String,
}

// Debug is the sentence (as `ConfigError`'s), so `main` returning it with `?` prints that.
impl std::fmt::Debug for ReplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl ReplyError {
    pub(crate) fn new(
        dialect: Dialect,
        path: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        ReplyError {
            dialect,
            streamed: false,
            path: path.into(),
            reason: reason.into(),
        }
    }

    fn describe(&self) -> String {
        let what = if self.streamed {
            "event stream"
        } else {
            "reply"
        };
        if self.path.is_empty() {
            format!(
                "cannot read the {} {what}: {}",
                self.dialect.api(),
                self.reason
            )
        } else {
            format!(
                "cannot read the {} {what} at `{}`: {}",
                self.dialect.api(),
                self.path,
                self.reason
            )
        }
    }
}
