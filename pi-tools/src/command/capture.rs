//! What bash keeps of a command's output: a bounded, UTF-8-decoded rolling tail in memory,
//! and, once the output passes the limits, the full raw bytes in a spill file.
//!
//! # Spill files
//! They live in one directory, `pi-tools-bash` under the system's temporary directory, named
//! `bash-<pid>-<n>.log`. A spill file never grows past its cap (`[tool.bash]
//! max_spill_bytes`): when the next bytes would pass it, the file keeps only the last half
//! of the cap and goes on, so it always ends with the end of the output. bash hands each
//! spill file to its execution environment, which deletes it when the session ends
//! ([`ExecutionEnv::end_session`](crate::env::ExecutionEnv::end_session)). What a session
//! could not delete (its process was killed) goes later: the first spill of a process
//! deletes the files of processes that have ended once they are [`SPILL_KEEP_AFTER_EXIT`]
//! old, and any file older than [`SPILL_MAX_AGE`].

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, truncate_tail};

/// Spill files older than this are deleted at the next spill, whoever wrote them.
pub const SPILL_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Spill files of a process that has ended are deleted at the next spill once this old.
pub const SPILL_KEEP_AFTER_EXIT: Duration = Duration::from_secs(60 * 60);

/// The default cap of one spill file (64 MiB).
pub const DEFAULT_MAX_SPILL_BYTES: u64 = 64 * 1024 * 1024;

/// The rolling tail is cut back to this many bytes once it reaches twice as much; it always
/// holds well over the byte limit, so truncating it gives what truncating the whole output
/// would.
const TAIL_KEEP: usize = 2 * DEFAULT_MAX_BYTES;

/// Output collected so far.
#[derive(Debug, Default)]
pub struct OutputBuffer {
    /// Decoded text: all of it until it grows past [`TAIL_KEEP`] × 2, then a suffix.
    tail: String,
    /// Up to three bytes of a UTF-8 sequence split across chunks.
    pending: Vec<u8>,
    /// Raw bytes kept until the spill file exists (then written there).
    raw: Vec<u8>,
    spill: Option<Spill>,
    spill_error: Option<String>,
    /// The cap of the spill file; 0 keeps no spill file.
    max_spill_bytes: u64,
    total_bytes: u64,
    /// Bytes of decoded text so far: where the tail ends in the whole decoded output.
    text_end: u64,
    newlines: u64,
    /// Bytes since the last newline, and the length of the line the last newline ended.
    current_line: u64,
    previous_line: u64,
    last_byte: Option<u8>,
}

/// The spill file: its path, its length and the bytes of the output's start it dropped.
#[derive(Debug)]
struct Spill {
    path: PathBuf,
    file: File,
    len: u64,
    dropped: u64,
}

impl Spill {
    /// Appends `data`; when that would pass `cap`, keeps only the last half of the cap
    /// (moved to the start of the file) so the file always ends with the output's end.
    fn append(&mut self, data: &[u8], cap: u64) -> io::Result<()> {
        let size = data.len() as u64;
        if self.len + size > cap {
            let keep = (cap / 2).max(1);
            if size >= keep {
                let tail = &data[data.len() - keep as usize..];
                self.file.set_len(0)?;
                self.file.write_all_at(tail, 0)?;
                self.dropped += self.len + size - keep;
                self.len = keep;
                return Ok(());
            }
            let from_file = keep - size;
            self.move_to_start(self.len - from_file)?;
            self.dropped += self.len - from_file;
            self.len = from_file;
            self.file.set_len(from_file)?;
        }
        self.file.write_all_at(data, self.len)?;
        self.len += size;
        Ok(())
    }

    /// Copies the file's bytes from `from` to its end to its start. `from` is at least as
    /// far as what is copied, so no byte is overwritten before it was read.
    fn move_to_start(&mut self, from: u64) -> io::Result<()> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut read = from;
        let mut written = 0;
        while read < self.len {
            let n = (buf.len() as u64).min(self.len - read) as usize;
            self.file.read_exact_at(&mut buf[..n], read)?;
            self.file.write_all_at(&buf[..n], written)?;
            read += n as u64;
            written += n as u64;
        }
        Ok(())
    }
}

impl OutputBuffer {
    /// An empty buffer whose spill file holds at most [`DEFAULT_MAX_SPILL_BYTES`].
    #[cfg(test)]
    pub fn new() -> Self {
        OutputBuffer::with_max_spill_bytes(DEFAULT_MAX_SPILL_BYTES)
    }

    /// An empty buffer whose spill file holds at most `max` bytes (0: no spill file).
    pub fn with_max_spill_bytes(max: u64) -> Self {
        OutputBuffer {
            max_spill_bytes: max,
            ..OutputBuffer::default()
        }
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
        let cap = self.max_spill_bytes;
        if let Some(spill) = &mut self.spill {
            if let Err(e) = spill.append(chunk, cap) {
                self.spill_error = Some(e.to_string());
                self.spill = None;
            }
            return;
        }
        if self.spill_error.is_some() || cap == 0 {
            return;
        }
        self.raw.extend_from_slice(chunk);
        if self.total_bytes > DEFAULT_MAX_BYTES as u64
            || self.total_lines() > DEFAULT_MAX_LINES as u64
        {
            let raw = std::mem::take(&mut self.raw);
            let opened = open_spill_file().and_then(|(path, file)| {
                let mut spill = Spill {
                    path,
                    file,
                    len: 0,
                    dropped: 0,
                };
                spill.append(&raw, cap).map(|()| spill)
            });
            match opened {
                Ok(spill) => self.spill = Some(spill),
                Err(e) => self.spill_error = Some(e.to_string()),
            }
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
                    self.push_text(text);
                    return;
                }
                Err(e) => {
                    let (valid, rest) = bytes.split_at(e.valid_up_to());
                    // `valid_up_to` guarantees this prefix decodes.
                    self.push_text(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        None => {
                            self.pending = rest.to_vec();
                            return;
                        }
                        Some(len) => {
                            self.push_text("\u{FFFD}");
                            bytes = &rest[len..];
                        }
                    }
                }
            }
        }
    }

    /// Ends the output: a split sequence left at the very end becomes U+FFFD.
    pub fn finish(&mut self) {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.push_text("\u{FFFD}");
        }
    }

    fn push_text(&mut self, text: &str) {
        self.tail.push_str(text);
        self.text_end += text.len() as u64;
    }

    /// Where `shown` (a [`truncated_tail`](Self::truncated_tail) of the tail as it is now)
    /// ends in the whole decoded output, in bytes: what follows it in a later one is new.
    pub fn shown_end(&self, shown: &Truncation) -> u64 {
        // A cut tail loses its final newline; everything else ends where the tail does.
        let lost_newline = self.tail.ends_with('\n') && !shown.content.ends_with('\n');
        self.text_end - u64::from(lost_newline)
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
        self.spill.as_ref().map(|spill| &spill.path)
    }

    /// How many bytes of the output's start the spill file dropped to stay under its cap.
    pub fn spill_dropped_bytes(&self) -> u64 {
        self.spill.as_ref().map_or(0, |spill| spill.dropped)
    }

    /// The cap of the spill file (0: no spill file is kept).
    pub fn max_spill_bytes(&self) -> u64 {
        self.max_spill_bytes
    }

    /// Why the full output could not be saved, if it could not.
    pub fn spill_error(&self) -> Option<&str> {
        self.spill_error.as_deref()
    }
}

fn open_spill_file() -> io::Result<(PathBuf, File)> {
    static CLEANUP: Once = Once::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = crate::env::spill_dir();
    std::fs::create_dir_all(&dir)?;
    CLEANUP.call_once(|| remove_old_spills(&dir));
    let pid = std::process::id();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("bash-{pid}-{n}.log"));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
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
        let Some(writer) = name
            .to_str()
            .and_then(|n| n.strip_prefix("bash-"))
            .and_then(|n| n.strip_suffix(".log"))
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let Some(age) = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
        else {
            continue;
        };
        if age > SPILL_MAX_AGE || (age > SPILL_KEEP_AFTER_EXIT && !process_alive(writer)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this pid exists (it may be another process that reused the pid;
/// its files then wait for [`SPILL_MAX_AGE`]).
fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
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

    #[test]
    fn the_spill_file_keeps_the_tail_under_its_cap() {
        let cap = 10_000;
        let mut out = OutputBuffer::with_max_spill_bytes(cap);
        let mut whole = Vec::new();
        for i in 0..40_000 {
            let line = format!("line {i}\n");
            whole.extend_from_slice(line.as_bytes());
            out.push(line.as_bytes());
        }
        out.finish();
        let spill = out.spill_path().expect("spilled").clone();
        let kept = std::fs::read(&spill).expect("spill file");
        let _ = std::fs::remove_file(&spill);
        assert!(
            kept.len() as u64 <= cap && kept.len() as u64 >= cap / 2,
            "{}",
            kept.len()
        );
        assert!(whole.ends_with(&kept));
        assert_eq!(out.spill_dropped_bytes(), (whole.len() - kept.len()) as u64);
    }

    #[test]
    fn a_chunk_larger_than_the_cap_keeps_its_end() {
        let mut out = OutputBuffer::with_max_spill_bytes(1000);
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        out.push(&big);
        let spill = out.spill_path().expect("spilled").clone();
        let kept = std::fs::read(&spill).expect("spill file");
        let _ = std::fs::remove_file(&spill);
        assert_eq!(kept, big[big.len() - 500..]);
        assert_eq!(out.spill_dropped_bytes(), 200_000 - 500);
    }

    #[test]
    fn a_zero_cap_keeps_no_spill_file() {
        let mut out = OutputBuffer::with_max_spill_bytes(0);
        out.push(&vec![b'x'; 200_000]);
        assert_eq!(out.spill_path(), None);
        assert_eq!(out.spill_error(), None);
    }
}
