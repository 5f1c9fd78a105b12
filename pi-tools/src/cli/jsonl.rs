//! `pi-tools run --json`: every event as one JSON object a line on standard output, then
//! the batch's end.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::core::{EventSink, ToolEvent};

/// Writes each event in its wire form as it arrives, flushing line by line so a reader sees
/// progress live. Once standard output is gone (the reader quit) further lines are dropped
/// and the batch still runs to its end.
#[derive(Debug, Default)]
pub(super) struct JsonLines {
    closed: AtomicBool,
}

impl JsonLines {
    /// The last line: `{"type":"batch_end","terminate":…}`.
    pub(super) fn batch_end(&self, terminate: bool) {
        // Written by hand to keep `type` first, as in every event line.
        self.line(&format!(
            r#"{{"type":"batch_end","terminate":{terminate}}}"#
        ));
    }

    fn line(&self, line: &str) {
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            self.closed.store(true, Ordering::Relaxed);
        }
    }
}

impl EventSink for JsonLines {
    async fn emit(&self, event: ToolEvent) {
        match serde_json::to_string(&event) {
            Ok(line) => self.line(&line),
            // The event types serialise infallibly; say so loudly if that ever changes.
            Err(e) => eprintln!("error: cannot serialise a {} event ({e})", event.kind()),
        }
    }
}
