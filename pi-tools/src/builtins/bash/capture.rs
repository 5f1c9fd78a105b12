//! What bash keeps of a command's output: a bounded, UTF-8-decoded rolling tail in memory,
//! and, once the output passes the limits, the full raw bytes in a spill file.
//!
//! # Spill files
//! They live in one directory, `pi-tools-bash` under the system's temporary directory, named
//! `bash-<pid>-<n>.log`. The first spill of a process deletes the files there that are older
//! than [`SPILL_MAX_AGE`], so they are kept long enough for the model (or a person) to read
//! them after the call, and never pile up.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::builtins::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, truncate_tail};

/// Spill files older than this are deleted at the next spill.
pub const SPILL_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The rolling tail is cut back to this many bytes once it reaches twice as much; it always
/// holds well over the byte limit, so truncating it gives what truncating the whole output
/// would.
const TAIL_KEEP: usize = 2 * DEFAULT_MAX_BYTES;

/// The directory spill files go to.
pub fn spill_dir() -> PathBuf {
    std::env::temp_dir().join("pi-tools-bash")
}

/// Output collected so far.
#[derive(Debug, Default)]
pub struct OutputBuffer {
    /// Decoded text: all of it until it grows past [`TAIL_KEEP`] × 2, then a suffix.
    tail: String,
    /// Up to three bytes of a UTF-8 sequence split across chunks.
    pending: Vec<u8>,
    /// Raw bytes kept until the spill file exists (then written there).
    raw: Vec<u8>,
    spill: Option<(PathBuf, File)>,
    spill_error: Option<String>,
    total_bytes: u64,
    newlines: u64,
    /// Bytes since the last newline, and the length of the line the last newline ended.
    current_line: u64,
    previous_line: u64,
    last_byte: Option<u8>,
}

impl OutputBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        OutputBuffer::default()
    }

    /// Takes one chunk of raw output.
    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.total_bytes += chunk.len() as u64;
        for &b in chunk {
            if b == b'\n' {
                self.newlines += 1;
                self.previous_line = self.current_line;
                self.current_line = 0;
            } else {
                self.current_line += 1;
            }
        }
        self.last_byte = chunk.last().copied();
        self.record_raw(chunk);
        self.decode(chunk);
        if self.tail.len() >= 2 * TAIL_KEEP {
            let mut cut = self.tail.len() - TAIL_KEEP;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.tail.drain(..cut);
        }
    }

    fn record_raw(&mut self, chunk: &[u8]) {
        if let Some((_, file)) = &mut self.spill {
            if let Err(e) = file.write_all(chunk) {
                self.spill_error = Some(e.to_string());
                self.spill = None;
            }
            return;
        }
        if self.spill_error.is_some() {
            return;
        }
        self.raw.extend_from_slice(chunk);
        if self.total_bytes > DEFAULT_MAX_BYTES as u64
            || self.total_lines() > DEFAULT_MAX_LINES as u64
        {
            match open_spill_file() {
                Ok((path, mut file)) => match file.write_all(&self.raw) {
                    Ok(()) => self.spill = Some((path, file)),
                    Err(e) => self.spill_error = Some(e.to_string()),
                },
                Err(e) => self.spill_error = Some(e.to_string()),
            }
            self.raw = Vec::new();
        }
    }

    /// Decodes as much as forms whole characters; invalid bytes become U+FFFD.
    fn decode(&mut self, chunk: &[u8]) {
        let owned;
        let mut bytes: &[u8] = if self.pending.is_empty() {
            chunk
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(chunk);
            owned = joined;
            &owned
        };
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    self.tail.push_str(text);
                    return;
                }
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    // `valid_up_to` guarantees this prefix decodes.
                    self.tail
                        .push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        None => {
                            self.pending = rest.to_vec();
                            return;
                        }
                        Some(len) => {
                            self.tail.push('\u{FFFD}');
                            bytes = &rest[len..];
                        }
                    }
                }
            }
        }
    }

    /// Ends the output: a split sequence left at the very end becomes U+FFFD, and the spill
    /// file is flushed.
    pub fn finish(&mut self) {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.tail.push('\u{FFFD}');
        }
        if let Some((_, file)) = &mut self.spill {
            let _ = file.flush();
        }
    }

    /// Lines so far; a trailing newline does not start another line.
    pub fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Bytes so far.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// The byte length of the last line (without its newline).
    pub fn last_line_bytes(&self) -> u64 {
        if self.last_byte == Some(b'\n') {
            self.previous_line
        } else {
            self.current_line
        }
    }

    /// The tail cut to the output limits (its totals describe the tail, not the whole output).
    pub fn truncated_tail(&self) -> Truncation {
        truncate_tail(&self.tail, Default::default())
    }

    /// Where the full output is, once it passed the limits.
    pub fn spill_path(&self) -> Option<&PathBuf> {
        self.spill.as_ref().map(|(path, _)| path)
    }

    /// Why the full output could not be saved, if it could not.
    pub fn spill_error(&self) -> Option<&str> {
        self.spill_error.as_deref()
    }
}

fn open_spill_file() -> io::Result<(PathBuf, File)> {
    static CLEANUP: Once = Once::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = spill_dir();
    std::fs::create_dir_all(&dir)?;
    CLEANUP.call_once(|| remove_old_spills(&dir));
    let pid = std::process::id();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("bash-{pid}-{n}.log"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            // A file of an earlier process with the same pid: take the next number.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn remove_old_spills(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with("bash-") && name.ends_with(".log")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > SPILL_MAX_AGE);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_chunks_is_decoded_whole() {
        let text = "héllo wörld ✓\n";
        let bytes = text.as_bytes();
        let mut out = OutputBuffer::new();
        for b in bytes {
            out.push(std::slice::from_ref(b));
        }
        out.finish();
        assert_eq!(out.truncated_tail().content, text);
        assert_eq!(out.total_lines(), 1);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut out = OutputBuffer::new();
        out.push(b"a\xffb\xe2\x9c");
        out.finish();
        assert_eq!(out.truncated_tail().content, "a\u{FFFD}b\u{FFFD}");
    }

    #[test]
    fn lines_and_last_line_length() {
        let mut out = OutputBuffer::new();
        out.push(b"ab\ncde\n");
        assert_eq!((out.total_lines(), out.last_line_bytes()), (2, 3));
        out.push(b"f");
        assert_eq!((out.total_lines(), out.last_line_bytes()), (3, 1));
    }

    #[test]
    fn the_tail_stays_bounded_and_matches_the_whole() {
        let mut out = OutputBuffer::new();
        let mut whole = String::new();
        for i in 0..50_000 {
            let line = format!("line {i}\n");
            whole.push_str(&line);
            out.push(line.as_bytes());
        }
        out.finish();
        assert!(out.tail.len() < 2 * TAIL_KEEP);
        let expected = truncate_tail(&whole, Default::default());
        assert_eq!(out.truncated_tail().content, expected.content);
        let spill = out.spill_path().expect("spilled").clone();
        assert_eq!(std::fs::read_to_string(&spill).expect("spill file"), whole);
        let _ = std::fs::remove_file(spill);
    }
}
