//! A job's output: the last bytes it wrote, at most a fixed number, addressed by their
//! offset in everything it ever wrote. Past the bound the oldest bytes go, and a reader
//! asking for them is told how many it missed.

use std::collections::VecDeque;

/// The default bound of a job's kept output (1 MiB).
pub const DEFAULT_RING_BYTES: usize = 1024 * 1024;

/// The kept end of a job's output.
#[derive(Debug)]
pub(crate) struct Ring {
    bytes: VecDeque<u8>,
    max: usize,
    /// Bytes written since the start, kept or not.
    total: u64,
}

/// A piece read from a [`Ring`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slice {
    /// The bytes, from `start` on.
    pub(crate) bytes: Vec<u8>,
    /// Their offset in the whole output.
    pub(crate) start: u64,
    /// Bytes between the offset asked for and `start` that were dropped at the bound.
    pub(crate) dropped: u64,
}

impl Ring {
    /// An empty ring keeping at most `max` bytes (at least one).
    pub(crate) fn new(max: usize) -> Self {
        Ring {
            bytes: VecDeque::new(),
            max: max.max(1),
            total: 0,
        }
    }

    /// Appends `chunk`, dropping the oldest bytes past the bound.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let chunk = &chunk[chunk.len().saturating_sub(self.max)..];
        let over = (self.bytes.len() + chunk.len()).saturating_sub(self.max);
        self.bytes.drain(..over);
        self.bytes.extend(chunk);
    }

    /// Bytes written since the start.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The offset of the oldest kept byte.
    pub(crate) fn first_kept(&self) -> u64 {
        self.total - self.bytes.len() as u64
    }

    /// Up to `limit` bytes from `offset` on (from the oldest kept byte when `offset` was
    /// dropped; nothing when it is at or past the end).
    pub(crate) fn read(&self, offset: u64, limit: usize) -> Slice {
        let first = self.first_kept();
        let start = offset.clamp(first, self.total);
        let skip = usize::try_from(start - first).unwrap_or(usize::MAX);
        let bytes = self.bytes.iter().skip(skip).take(limit).copied().collect();
        Slice {
            bytes,
            start,
            dropped: first.saturating_sub(offset),
        }
    }

    /// The last `lines` lines (the last line may lack its end), for a job's end notice.
    pub(crate) fn last_lines(&self, lines: usize, max_bytes: usize) -> String {
        let tail: Vec<u8> = self
            .bytes
            .iter()
            .skip(self.bytes.len().saturating_sub(max_bytes))
            .copied()
            .collect();
        let text = String::from_utf8_lossy(&tail);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        let mut kept: Vec<&str> = text.rsplit('\n').take(lines).collect();
        kept.reverse();
        kept.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_bytes_go_and_the_reader_is_told_how_many() {
        let mut ring = Ring::new(8);
        ring.push(b"0123456789");
        ring.push(b"ab");
        assert_eq!(ring.total(), 12);
        assert_eq!(ring.first_kept(), 4);
        let read = ring.read(0, 100);
        assert_eq!(read.bytes, b"456789ab");
        assert_eq!((read.start, read.dropped), (4, 4));
        let read = ring.read(10, 1);
        assert_eq!(
            (read.bytes.as_slice(), read.start, read.dropped),
            (&b"a"[..], 10, 0)
        );
        assert!(ring.read(12, 5).bytes.is_empty());
        assert!(ring.read(99, 5).bytes.is_empty());
    }

    #[test]
    fn last_lines_are_the_end_of_the_output() {
        let mut ring = Ring::new(100);
        ring.push(b"one\ntwo\nthree\nfour\n");
        assert_eq!(ring.last_lines(2, 100), "three\nfour");
        assert_eq!(ring.last_lines(9, 100), "one\ntwo\nthree\nfour");
    }
}
