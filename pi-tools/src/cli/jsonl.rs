//! `pi-tools run --json`: every event as one JSON object a line on standard output (standard
//! error with `--dialect`, whose standard output is the provider's messages), then the
//! batch's end.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::core::{EventSink, ToolEvent};

/// Writes each event in its wire form as it arrives, flushing line by line so a reader sees
/// progress live. Once standard output is gone (the reader quit) further lines are dropped
/// and the batch still runs to its end.
#[derive(Debug)]
pub(super) struct JsonLines {
    closed: AtomicBool,
    /// Write to standard error instead of standard output.
    stderr: bool,
}

impl JsonLines {
    /// Lines on standard output (`false`) or standard error (`true`).
    pub(super) fn new(stderr: bool) -> Self {
        JsonLines {
            closed: AtomicBool::new(false),
            stderr,
        }
    }

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
        let written = if self.stderr {
            let mut out = std::io::stderr().lock();
            writeln!(out, "{line}").and_then(|()| out.flush())
        } else {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}").and_then(|()| out.flush())
        };
        if written.is_err() {
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
