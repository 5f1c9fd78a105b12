//! Searching the content of one file for grep: the searcher and its sink, the files read
//! whole or streamed, the long lines matched a window at a time so memory stays bounded,
//! and each output line clipped. [`super::scan`] runs this for every file of a search, on
//! its searcher threads, in walk order.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};

use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use super::scan::{FileHits, HitLine, MAX_LINE_CHARS, SearchSpec};

/// Files up to this size are read whole and searched in memory; bigger ones are streamed.
const READ_WHOLE: u64 = 1 << 20;

pub(super) fn new_searcher(spec: &SearchSpec) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .before_context(spec.context)
        .after_context(spec.context)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .heap_limit(Some(MAX_LINE_BYTES))
        .build()
}

/// Searches one open file; `None` when it has no match.
///
/// A file of up to [`READ_WHOLE`] bytes is read whole into `buffer` (two reads) and searched
/// there; a bigger one is streamed. Either way the searcher sees the same bytes and the same
/// rules: text with a UTF-16 byte-order mark is transcoded, and a NUL byte makes the file
/// binary, which stops the search there; a UTF-8 byte-order mark is dropped. A streamed file
/// with a line longer than [`MAX_LINE_BYTES`] (which the searcher would hold whole) is
/// searched again by [`search_by_windows`], so memory stays bounded whatever the lines.
pub(super) fn search_file<R: Read>(
    searcher: &mut Searcher,
    buffer: &mut Vec<u8>,
    spec: &SearchSpec,
    mut file: R,
    rewind: impl FnOnce(R) -> io::Result<R>,
    rel: String,
) -> io::Result<Option<FileHits>> {
    let new_sink = || Collect {
        lines: Vec::new(),
        matches: 0,
        // One more than the limit, so the ordered collector can tell that more exist.
        cap: spec.limit.saturating_add(1),
    };
    let mut sink = new_sink();
    buffer.clear();
    (&mut file).take(READ_WHOLE + 1).read_to_end(buffer)?;
    let searched = if buffer.len() as u64 > READ_WHOLE {
        let head = std::io::Cursor::new(&buffer[..]);
        let streamed = searcher.search_reader(&spec.matcher, head.chain(&mut file), &mut sink);
        if streamed.is_err() {
            let mut file = rewind(file)?;
            sink = new_sink();
            search_by_windows(&mut file, spec, &mut sink)?;
        }
        Ok(())
    } else if buffer.starts_with(&[0xFF, 0xFE])
        || buffer.starts_with(&[0xFE, 0xFF])
        || buffer.starts_with(&[0xEF, 0xBB, 0xBF])
        || memchr::memchr(0, buffer).is_some()
    {
        // The streaming path is the one that transcodes and stops at a NUL byte.
        searcher.search_reader(&spec.matcher, &buffer[..], &mut sink)
    } else {
        searcher.search_slice(&spec.matcher, buffer, &mut sink)
    };
    searched?;
    if sink.matches == 0 {
        return Ok(None);
    }
    Ok(Some(FileHits {
        rel,
        lines: sink.lines,
    }))
}

/// The longest line the searcher may hold whole (per searcher thread).
const MAX_LINE_BYTES: usize = 4 << 20;

/// How much of a long line each window repeats from the one before, so a match up to this
/// long is found wherever it falls.
const WINDOW_OVERLAP: usize = 64 << 10;

/// Bytes of a line kept for its output (enough for [`MAX_LINE_CHARS`] characters of any
/// width, and then some, so clipping still says the line was longer).
const LINE_HEAD: usize = 4 * MAX_LINE_CHARS + 8;

/// Searches a file whose lines may be of any length, line by line, holding at most
/// [`MAX_LINE_BYTES`] of a line: a longer line is matched window by window (each window
/// overlapping the last by [`WINDOW_OVERLAP`]). Only the first [`LINE_HEAD`] bytes of a line
/// are kept, as output is clipped anyway; context lines likewise. A NUL byte stops the
/// search there, as for other files.
fn search_by_windows<R: Read>(
    file: &mut R,
    spec: &SearchSpec,
    sink: &mut Collect,
) -> io::Result<()> {
    use grep_matcher::Matcher;
    let matcher = &spec.matcher;
    let mut reader = BufReader::with_capacity(64 << 10, file);
    let mut number = 1u64;
    let mut window: Vec<u8> = Vec::new();
    let mut head: Vec<u8> = Vec::new();
    let mut matched = false;
    let mut around = Around::new(spec.context);
    let is_match = |bytes: &[u8]| -> io::Result<bool> {
        matcher
            .is_match(bytes)
            .map_err(|e| io::Error::other(e.to_string()))
    };
    loop {
        let buf = reader.fill_buf()?;
        let binary = memchr::memchr(0, buf).is_some();
        if buf.is_empty() || binary {
            let line_left = !head.is_empty() || !window.is_empty();
            if !binary && line_left {
                matched = matched || is_match(&window)?;
                around.emit(sink, number, &head, matched);
            }
            return Ok(());
        }
        let (take, ends_line) = match memchr::memchr(b'\n', buf) {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        let chunk = &buf[..take];
        if head.len() < LINE_HEAD {
            head.extend_from_slice(&chunk[..chunk.len().min(LINE_HEAD - head.len())]);
        }
        if !matched {
            window.extend_from_slice(chunk);
            if window.len() >= MAX_LINE_BYTES {
                matched = is_match(&window)?;
                window.drain(..window.len() - WINDOW_OVERLAP);
            }
        }
        reader.consume(take);
        if ends_line {
            matched = matched || is_match(&window)?;
            around.emit(sink, number, &head, matched);
            if sink.matches >= sink.cap {
                return Ok(());
            }
            number += 1;
            (matched, window, head) = (false, Vec::new(), Vec::new());
        }
    }
}

/// The context lines around the matches of [`search_by_windows`]: those kept as possible
/// context before the next match, and how many after the last match are still to pass.
struct Around {
    /// How many context lines go before and after a match.
    context: usize,
    before: VecDeque<(u64, Vec<u8>)>,
    after_left: usize,
}

impl Around {
    fn new(context: usize) -> Self {
        Around {
            context,
            before: VecDeque::new(),
            after_left: 0,
        }
    }

    /// Passes line `number` (its kept `head`) to the sink as a match, as context after one,
    /// or keeps it as possible context before the next.
    fn emit(&mut self, sink: &mut Collect, number: u64, head: &[u8], matched: bool) {
        if matched {
            for (n, line) in self.before.drain(..) {
                sink.push(Some(n), &line, false);
            }
            sink.push(Some(number), head, true);
            sink.matches += 1;
            self.after_left = self.context;
        } else if self.after_left > 0 {
            sink.push(Some(number), head, false);
            self.after_left -= 1;
        } else if self.context > 0 {
            self.before.push_back((number, head.to_vec()));
            if self.before.len() > self.context {
                self.before.pop_front();
            }
        }
    }
}

/// A sink that keeps match and context lines.
struct Collect {
    lines: Vec<HitLine>,
    matches: usize,
    cap: usize,
}

impl Collect {
    fn push(&mut self, number: Option<u64>, bytes: &[u8], is_match: bool) {
        let (text, clipped) = clip_line(bytes);
        self.lines.push(HitLine {
            number: number.unwrap_or(0),
            text,
            is_match,
            clipped,
        });
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.push(mat.line_number(), mat.bytes(), true);
        self.matches += 1;
        Ok(self.matches < self.cap)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(ctx.line_number(), ctx.bytes(), false);
        Ok(true)
    }
}

/// Decodes a line (lossily), drops its terminator and carriage returns, and clips it to
/// [`MAX_LINE_CHARS`] characters.
pub(crate) fn clip_line(bytes: &[u8]) -> (String, bool) {
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let text = String::from_utf8_lossy(&bytes[..end]);
    let text = if text.contains('\r') {
        text.replace('\r', "")
    } else {
        text.into_owned()
    };
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => (format!("{}... [truncated]", &text[..cut]), true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_counts_characters_not_bytes() {
        let long = "é".repeat(600);
        let (text, clipped) = clip_line(long.as_bytes());
        assert!(clipped);
        assert_eq!(text, format!("{}... [truncated]", "é".repeat(500)));
        let (text, clipped) = clip_line(b"abc\r\n");
        assert_eq!((text.as_str(), clipped), ("abc", false));
    }
}
