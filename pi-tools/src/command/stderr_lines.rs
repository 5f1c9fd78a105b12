//! A command's stderr, line by line, as the call's log lines (`warning`, logger `bash`), for
//! front ends that want them: an MCP client gets them as `notifications/message`.

use crate::core::{LogLevel, ProgressUpdater};

/// The longest log line; a longer one is sent in pieces of this size (or a few bytes less,
/// to keep characters whole).
pub(super) const MAX_LINE_BYTES: usize = 4096;

/// Cuts stderr chunks into lines and logs each complete one; the last, unfinished line is
/// logged when the splitter is dropped (once the command has ended).
pub(super) struct StderrLines {
    pending: Vec<u8>,
    updater: ProgressUpdater,
}

impl StderrLines {
    pub(super) fn new(updater: ProgressUpdater) -> Self {
        StderrLines {
            pending: Vec::new(),
            updater,
        }
    }

    pub(super) fn push(&mut self, mut chunk: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', chunk) {
            self.append(&chunk[..end]);
            self.flush();
            chunk = &chunk[end + 1..];
        }
        self.append(chunk);
    }

    /// Adds to the line being read, sending it on in pieces while it is longer than
    /// [`MAX_LINE_BYTES`], however the command's writes were cut into chunks.
    fn append(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while self.pending.len() > MAX_LINE_BYTES {
            // Cut before a UTF-8 continuation byte, so no character is split in two.
            let mut cut = MAX_LINE_BYTES;
            while cut > MAX_LINE_BYTES - 3 && self.pending[cut] & 0xC0 == 0x80 {
                cut -= 1;
            }
            let rest = self.pending.split_off(cut);
            self.flush();
            self.pending = rest;
        }
    }

    fn flush(&mut self) {
        let line = String::from_utf8_lossy(&self.pending);
        let line = line.strip_suffix('\r').unwrap_or(&line);
        self.updater.log(LogLevel::Warning, "bash", line);
        self.pending.clear();
    }
}

impl Drop for StderrLines {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            self.flush();
        }
    }
}
