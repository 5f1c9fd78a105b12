//! The content search behind grep: the calling thread walks the tree in sorted order and
//! hands files to a few searcher threads, and puts their results back in walk order as they
//! come.
//!
//! The order of the output therefore never depends on thread timing. The walk runs at most
//! [`WINDOW`] files ahead of the ordered results, which bounds memory whatever the size of
//! the tree, and everything stops once the limit of matches (plus one, to know that more
//! exist) or the output budget is reached.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use tokio_util::sync::CancellationToken;

use super::path_glob::PathGlob;
use super::walk::{WalkEnd, walk_sorted};

/// How many files the walker may run ahead of the ordered results.
const WINDOW: u64 = 512;

/// Files up to this size are read whole and searched in memory; bigger ones are streamed.
const READ_WHOLE: u64 = 1 << 20;

/// Grep clips every output line to this many characters.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// What to search and when to stop.
pub(crate) struct SearchSpec {
    /// A directory to walk, or a single file.
    pub root: PathBuf,
    /// Whether `root` is a single file (shown by its name, searched even if ignored).
    pub single_file: bool,
    /// The compiled pattern.
    pub matcher: RegexMatcher,
    /// Only files whose relative path matches this glob are searched.
    pub glob: Option<PathGlob>,
    /// Lines of context before and after each match.
    pub context: usize,
    /// Matches to return at most.
    pub limit: usize,
    /// Stop collecting once the formatted output would have more lines than this…
    pub max_lines: usize,
    /// …or more bytes than this.
    pub max_bytes: usize,
}

/// One output line: a match or a context line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HitLine {
    /// 1-based line number.
    pub number: u64,
    /// The line without its terminator, clipped to [`MAX_LINE_CHARS`].
    pub text: String,
    /// A match line (else context).
    pub is_match: bool,
    /// The line was clipped.
    pub clipped: bool,
}

/// The lines to show for one file, in line order, overlapping context already merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileHits {
    /// Path relative to the search directory (the file name for a single file).
    pub rel: String,
    /// Matches and context lines.
    pub lines: Vec<HitLine>,
}

/// The result of a search.
#[derive(Debug, Default)]
pub(crate) struct SearchOutcome {
    /// Files with matches, in walk order, cut to the limit.
    pub files: Vec<FileHits>,
    /// Matches in `files`.
    pub matches: usize,
    /// At least one more match exists beyond the limit.
    pub more_matches: bool,
    /// Collecting stopped because the output budget was exceeded.
    pub output_full: bool,
    /// The search was cancelled before it finished.
    pub cancelled: bool,
}

impl FileHits {
    fn match_count(&self) -> usize {
        self.lines.iter().filter(|l| l.is_match).count()
    }

    /// Bytes and lines this file adds to the output (`rel:N: text\n`).
    fn output_size(&self) -> (usize, usize) {
        let bytes = self
            .lines
            .iter()
            .map(|l| self.rel.len() + digits(l.number) + 3 + l.text.len() + 1)
            .sum();
        (bytes, self.lines.len())
    }
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Runs the search on the current thread (call it from a blocking thread).
pub(crate) fn search(spec: &SearchSpec, cancel: &CancellationToken) -> SearchOutcome {
    let mut collector = Collector::new(spec);
    if spec.single_file {
        let name = spec
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| spec.root.to_string_lossy().into_owned());
        let mut searcher = new_searcher(spec);
        if let Some(hits) = search_file(&mut searcher, &mut Vec::new(), spec, &spec.root, name) {
            collector.accept(hits);
        }
        collector.outcome.cancelled = cancel.is_cancelled();
        return collector.outcome;
    }

    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    search_tree(spec, cancel, workers, collector)
}

/// Searches a directory with `workers` searcher threads (none: the calling thread searches
/// each file itself).
fn search_tree(
    spec: &SearchSpec,
    cancel: &CancellationToken,
    workers: usize,
    mut collector: Collector<'_>,
) -> SearchOutcome {
    let (work_tx, work_rx) = crossbeam_channel::bounded::<(u64, PathBuf, String)>(256);
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<(u64, Option<FileHits>)>();
    let stop = AtomicBool::new(false);

    std::thread::scope(|scope| {
        let mut spawned = 0;
        for _ in 0..workers {
            let work_rx = work_rx.clone();
            let done_tx = done_tx.clone();
            let stop = &stop;
            let worker = move || {
                let mut searcher = new_searcher(spec);
                let mut buffer = Vec::with_capacity(64 * 1024);
                for (seq, path, rel) in work_rx {
                    let hits = if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                        None
                    } else {
                        search_file(&mut searcher, &mut buffer, spec, &path, rel)
                    };
                    if done_tx.send((seq, hits)).is_err() {
                        break;
                    }
                }
            };
            // Without threads to spare (a process limit), the search goes on with fewer.
            if std::thread::Builder::new()
                .name("pi-tools-grep".into())
                .spawn_scoped(scope, worker)
                .is_ok()
            {
                spawned += 1;
            }
        }
        // With none at all, this thread searches each file itself as it hands it out.
        let mut alone = (spawned == 0).then(|| (new_searcher(spec), Vec::new()));
        drop(work_rx);
        drop(done_tx);

        // This thread walks, hands files out, and puts the results back in order as they
        // come, never more than WINDOW files ahead of them.
        let mut order = InOrder::default();
        let mut handed_out = 0u64;
        // The searchers keep the cores busy; the walk needs no helpers of its own.
        let end = walk_sorted(&spec.root, cancel, 0, spec.glob.as_ref(), |entry| {
            if entry.is_dir {
                return ControlFlow::Continue(());
            }
            while handed_out >= order.next + WINDOW && !collector.done {
                match done_rx.recv() {
                    Ok(result) => order.take(result, &mut collector),
                    Err(_) => return ControlFlow::Break(()),
                }
            }
            while let Ok(result) = done_rx.try_recv() {
                order.take(result, &mut collector);
            }
            if collector.done {
                return ControlFlow::Break(());
            }
            let (path, rel) = (entry.path(), entry.rel.to_owned());
            if let Some((searcher, buffer)) = &mut alone {
                let hits = search_file(searcher, buffer, spec, &path, rel);
                order.take((handed_out, hits), &mut collector);
            } else if work_tx.send((handed_out, path, rel)).is_err() {
                return ControlFlow::Break(());
            }
            handed_out += 1;
            ControlFlow::Continue(())
        });
        if end != WalkEnd::Completed || collector.done {
            stop.store(true, Ordering::Relaxed);
        }
        drop(work_tx);
        while order.next < handed_out && !collector.done {
            match done_rx.recv() {
                Ok(result) => order.take(result, &mut collector),
                Err(_) => break,
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    collector.outcome.cancelled = cancel.is_cancelled();
    collector.outcome
}

/// Puts file results together in order and decides when enough has been seen.
struct Collector<'a> {
    spec: &'a SearchSpec,
    outcome: SearchOutcome,
    bytes: usize,
    lines: usize,
    done: bool,
}

impl<'a> Collector<'a> {
    fn new(spec: &'a SearchSpec) -> Self {
        Collector {
            spec,
            outcome: SearchOutcome::default(),
            bytes: 0,
            lines: 0,
            done: false,
        }
    }

    fn accept(&mut self, mut hits: FileHits) {
        let found = hits.match_count();
        if found == 0 {
            return;
        }
        let room = self.spec.limit - self.outcome.matches;
        if room == 0 {
            self.outcome.more_matches = true;
            self.done = true;
            return;
        }
        if found > room {
            trim_after_match(&mut hits, room, self.spec.context);
            self.outcome.more_matches = true;
            self.done = true;
        }
        self.outcome.matches += found.min(room);
        let (bytes, lines) = hits.output_size();
        self.bytes += bytes;
        self.lines += lines;
        self.outcome.files.push(hits);
        if self.bytes > self.spec.max_bytes || self.lines > self.spec.max_lines {
            self.outcome.output_full = true;
            self.done = true;
        }
    }
}

/// Keeps the first `keep` matches and the context after the last of them, dropping the rest
/// (including context that only belongs to the dropped matches).
fn trim_after_match(hits: &mut FileHits, keep: usize, context: usize) {
    let mut seen = 0;
    let mut last_kept = 0u64;
    let mut cut = hits.lines.len();
    for (i, line) in hits.lines.iter().enumerate() {
        if line.is_match {
            if seen == keep {
                cut = i;
                break;
            }
            seen += 1;
            last_kept = line.number;
        }
    }
    hits.lines.truncate(cut);
    let last_line = last_kept.saturating_add(context as u64);
    hits.lines.retain(|l| l.number <= last_line);
}

fn new_searcher(spec: &SearchSpec) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .before_context(spec.context)
        .after_context(spec.context)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build()
}

/// Searches one file; `None` when it has no match or cannot be read.
///
/// A file of up to [`READ_WHOLE`] bytes is read whole into `buffer` (two reads) and searched
/// there; a bigger one is streamed. Either way the searcher sees the same bytes and the same
/// rules: text with a UTF-16 byte-order mark is transcoded, and a NUL byte makes the file
/// binary, which stops the search there; a UTF-8 byte-order mark is dropped.
fn search_file(
    searcher: &mut Searcher,
    buffer: &mut Vec<u8>,
    spec: &SearchSpec,
    path: &Path,
    rel: String,
) -> Option<FileHits> {
    let mut sink = Collect {
        lines: Vec::new(),
        matches: 0,
        // One more than the limit, so the ordered collector can tell that more exist.
        cap: spec.limit.saturating_add(1),
    };
    let mut file = File::open(path).ok()?;
    buffer.clear();
    (&mut file).take(READ_WHOLE + 1).read_to_end(buffer).ok()?;
    let searched = if buffer.len() as u64 > READ_WHOLE {
        let head = std::io::Cursor::new(&buffer[..]);
        searcher.search_reader(&spec.matcher, head.chain(file), &mut sink)
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
    if searched.is_err() || sink.matches == 0 {
        return None;
    }
    Some(FileHits {
        rel,
        lines: sink.lines,
    })
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

/// Files' results as they arrive, released to the collector in walk order.
#[derive(Default)]
struct InOrder {
    /// The number of the next file the collector is owed.
    next: u64,
    /// Results of files `next`, `next + 1`, … that arrived early (`None` slots: not yet).
    early: VecDeque<Option<Option<FileHits>>>,
}

impl InOrder {
    fn take(&mut self, (seq, hits): (u64, Option<FileHits>), collector: &mut Collector<'_>) {
        let Some(slot) = seq.checked_sub(self.next).map(|s| s as usize) else {
            return;
        };
        if self.early.len() <= slot {
            self.early.resize_with(slot + 1, || None);
        }
        self.early[slot] = Some(hits);
        while let Some(Some(hits)) = self.early.front_mut().map(Option::take) {
            self.early.pop_front();
            self.next += 1;
            if let Some(hits) = hits
                && !collector.done
            {
                collector.accept(hits);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(number: u64, is_match: bool) -> HitLine {
        HitLine {
            number,
            text: format!("l{number}"),
            is_match,
            clipped: false,
        }
    }

    #[test]
    fn every_worker_count_finds_the_same_in_the_same_order() {
        let top = tempfile::tempdir().expect("tempdir");
        for d in 0..7 {
            for f in 0..40 {
                let text = format!("a\nneedle {d} {f}\nb\n{}\n", "needle ".repeat(f % 3));
                let dir = top.path().join(format!("d{d}"));
                std::fs::create_dir_all(&dir).expect("mkdir");
                std::fs::write(dir.join(format!("f{f:02}.txt")), text).expect("write");
            }
        }
        let spec = |limit| SearchSpec {
            root: top.path().to_path_buf(),
            single_file: false,
            matcher: RegexMatcher::new("needle").expect("regex"),
            glob: None,
            context: 1,
            limit,
            max_lines: usize::MAX,
            max_bytes: usize::MAX,
        };
        for limit in [1, 50, 333, 10_000] {
            let spec = spec(limit);
            let run = |workers| {
                let outcome = search_tree(
                    &spec,
                    &CancellationToken::new(),
                    workers,
                    Collector::new(&spec),
                );
                (outcome.files, outcome.matches, outcome.more_matches)
            };
            let alone = run(0);
            // Per file: line 2, and line 4 when f % 3 > 0 (26 of 40 files): 7 × 66 lines.
            assert_eq!(alone.1, limit.min(462));
            assert_eq!(alone.2, limit < 462);
            for workers in [1, 3] {
                assert_eq!(run(workers), alone, "{workers} workers, limit {limit}");
            }
        }
    }

    #[test]
    fn trimming_keeps_only_the_kept_matches_context() {
        let mut hits = FileHits {
            rel: "a".into(),
            lines: vec![
                line(9, false),
                line(10, true),
                line(11, false),
                line(12, false),
                line(18, false),
                line(19, false),
                line(20, true),
                line(21, false),
            ],
        };
        trim_after_match(&mut hits, 1, 2);
        let kept: Vec<u64> = hits.lines.iter().map(|l| l.number).collect();
        assert_eq!(kept, vec![9, 10, 11, 12]);
    }

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
