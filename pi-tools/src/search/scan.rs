//! The content search behind grep: the calling thread walks the tree in sorted order and
//! hands files to a few searcher threads, and puts their results back in walk order as they
//! come.
//!
//! The order of the output therefore never depends on thread timing. The walk runs at most
//! [`WINDOW`] files ahead of the ordered results, which bounds memory whatever the size of
//! the tree, and everything stops once the limit of matches (plus one, to know that more
//! exist) or the output budget is reached.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;
use tokio_util::sync::CancellationToken;

pub(crate) use super::collect::Collector;
use super::collect::InOrder;
use super::one_file::{new_searcher, search_file};
use super::path_glob::PathGlob;
use super::skipped::Skipped;
use super::walk::{Kind, WalkBase, WalkEnd, walk_sorted};
use crate::env::local::{Last, Roots, open_beneath};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

/// How many files the walker may run ahead of the ordered results.
const WINDOW: u64 = 512;

/// Grep clips every output line to this many characters.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// What to search and when to stop.
pub(crate) struct SearchSpec {
    /// A directory to walk, or a single file.
    pub root: PathBuf,
    /// The environment's allowed roots, through which the search root and linked files are
    /// opened.
    pub roots: Arc<Roots>,
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

impl SearchSpec {
    /// How a single file searched on its own is shown: by its name.
    pub(crate) fn single_file_name(&self) -> String {
        self.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.root.to_string_lossy().into_owned())
    }
}

/// One output line: a match or a context line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitLine {
    /// 1-based line number.
    pub number: u64,
    /// The line without its terminator, clipped to 500 characters.
    pub text: String,
    /// A match line (else context).
    pub is_match: bool,
    /// The line was clipped.
    pub clipped: bool,
}

/// The lines to show for one file, in line order, overlapping context already merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHits {
    /// Path relative to the search directory (the file name for a single file).
    pub rel: String,
    /// Matches and context lines.
    pub lines: Vec<HitLine>,
}

/// The result of a search.
#[derive(Debug, Default)]
pub struct SearchOutcome {
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
    /// Files and directories that could not be read.
    pub skipped: Skipped,
    /// The search root itself could not be opened.
    pub failed: Option<io::Error>,
}

impl FileHits {
    pub(super) fn match_count(&self) -> usize {
        self.lines.iter().filter(|l| l.is_match).count()
    }

    /// Bytes and lines this file adds to the output (`rel:N: text\n`).
    pub(super) fn output_size(&self) -> (usize, usize) {
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
        let name = spec.single_file_name();
        let mut searcher = new_searcher(spec);
        match open_regular(spec.roots.open(
            &spec.root,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
            Last::Follow,
        )) {
            Ok(Some(file)) => {
                match search_file(&mut searcher, &mut Vec::new(), spec, file, rewind, name) {
                    Ok(Some(hits)) => collector.accept(hits),
                    Ok(None) => {}
                    Err(err) => collector.outcome.skipped.note(".", &reason(&err)),
                }
            }
            Ok(None) => {}
            Err(err) => collector.outcome.failed = Some(err),
        }
        collector.outcome.cancelled = cancel.is_cancelled();
        return collector.outcome;
    }

    let base = match WalkBase::open(&spec.roots, &spec.root) {
        Ok(base) => base,
        Err(err) => {
            collector.outcome.failed = Some(err);
            return collector.outcome;
        }
    };
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    search_tree(spec, &base, cancel, workers, collector)
}

/// Keeps a file handle only for a regular file (`Ok(None)`: anything else, or gone), so a
/// FIFO, socket or device is never read.
fn open_regular(opened: io::Result<OwnedFd>) -> io::Result<Option<File>> {
    let fd = match opened {
        Ok(fd) => fd,
        Err(err) if matches!(err.kind(), io::ErrorKind::NotFound) => return Ok(None),
        Err(err) if err.raw_os_error() == Some(Errno::LOOP.raw_os_error()) => return Ok(None),
        Err(err) => return Err(err),
    };
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Ok(None);
    }
    Ok(Some(File::from(fd)))
}

/// Opens a file the walk found: a plain file beneath the walk's root through no link; a
/// symbolic link through the allowed roots (followed only while it stays inside them).
fn open_entry(
    spec: &SearchSpec,
    base: &WalkBase,
    path: &Path,
    kind: Kind,
) -> io::Result<Option<File>> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
    match kind {
        Kind::File => {
            let rel = path.strip_prefix(&base.path).unwrap_or(path);
            open_regular(open_beneath(
                base.fd.as_fd(),
                rel,
                flags,
                Mode::empty(),
                true,
            ))
        }
        Kind::Link => open_regular(spec.roots.open(path, flags, Mode::empty(), Last::Follow)),
        Kind::Dir | Kind::Special => Ok(None),
    }
}

/// A few words on why a file could not be read, as a search result says it.
pub fn reason(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code)
            if code == Errno::ACCESS.raw_os_error() || code == Errno::PERM.raw_os_error() =>
        {
            "permission denied".into()
        }
        None if err.kind() == io::ErrorKind::PermissionDenied => {
            "it leads outside the allowed directories".into()
        }
        _ => {
            let text = err.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_lowercase(),
                None => text.to_lowercase(),
            }
        }
    }
}

/// Searches a directory with `workers` searcher threads (none: the calling thread searches
/// each file itself).
fn search_tree(
    spec: &SearchSpec,
    base: &WalkBase,
    cancel: &CancellationToken,
    workers: usize,
    collector: Collector<'_>,
) -> SearchOutcome {
    search_each(spec, base, cancel, workers, collector, |skipped, hand| {
        walk_sorted(base, cancel, 0, spec.glob.as_ref(), skipped, |entry| {
            if matches!(entry.kind, Kind::Dir | Kind::Special) {
                return ControlFlow::Continue(());
            }
            hand(entry.path(), entry.rel.to_owned(), entry.kind)
        })
    })
}

/// Searches the given files of the directory `base`, in their order, as a search of the
/// whole directory that found just these would (the index's candidates).
pub(crate) fn search_listed(
    spec: &SearchSpec,
    base: &WalkBase,
    cancel: &CancellationToken,
    files: Vec<(PathBuf, String, Kind)>,
) -> SearchOutcome {
    let workers = if files.len() < 4 {
        0
    } else {
        std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 8)
            .min(files.len() / 4)
    };
    let collector = Collector::new(spec);
    search_each(spec, base, cancel, workers, collector, |_, hand| {
        for (path, rel, kind) in files {
            if cancel.is_cancelled() {
                return WalkEnd::Cancelled;
            }
            if hand(path, rel, kind).is_break() {
                return WalkEnd::Stopped;
            }
        }
        WalkEnd::Completed
    })
}

/// Hands out to the searcher threads every file `feed` gives (it notes the directories it
/// could not read), and collects the results in the order given.
fn search_each(
    spec: &SearchSpec,
    base: &WalkBase,
    cancel: &CancellationToken,
    workers: usize,
    mut collector: Collector<'_>,
    feed: impl FnOnce(&mut Skipped, &mut dyn FnMut(PathBuf, String, Kind) -> ControlFlow<()>) -> WalkEnd,
) -> SearchOutcome {
    let (work_tx, work_rx) = crossbeam_channel::bounded::<(u64, PathBuf, String, Kind)>(256);
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<(u64, Searched)>();
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
                for (seq, path, rel, kind) in work_rx {
                    let hits = if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                        Ok(None)
                    } else {
                        search_entry(&mut searcher, &mut buffer, spec, base, &path, rel, kind)
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
        let mut skipped_dirs = Skipped::default();
        // The searchers keep the cores busy; the walk needs no helpers of its own.
        let end = feed(&mut skipped_dirs, &mut |path, rel, kind| {
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
            if let Some((searcher, buffer)) = &mut alone {
                let hits = search_entry(searcher, buffer, spec, base, &path, rel, kind);
                order.take((handed_out, hits), &mut collector);
            } else if work_tx.send((handed_out, path, rel, kind)).is_err() {
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
        // Directories first would be as good an order as any; these come after the files.
        for line in skipped_dirs.first {
            collector.outcome.skipped.first.push(line);
        }
        collector.outcome.skipped.count += skipped_dirs.count;
        collector.outcome.skipped.first.truncate(Skipped::SHOWN);
    });
    collector.outcome.cancelled = cancel.is_cancelled();
    collector.outcome
}

/// What searching one file gave: its hits (if any), or why it could not be read (the
/// relative path and the error).
pub(super) type Searched = Result<Option<FileHits>, (String, io::Error)>;

fn search_entry(
    searcher: &mut Searcher,
    buffer: &mut Vec<u8>,
    spec: &SearchSpec,
    base: &WalkBase,
    path: &Path,
    rel: String,
    kind: Kind,
) -> Searched {
    let file = match open_entry(spec, base, path, kind) {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(err) => return Err((rel, err)),
    };
    search_file(searcher, buffer, spec, file, rewind, rel.clone()).map_err(|err| (rel, err))
}

/// A local file, from its start again.
fn rewind(mut file: File) -> io::Result<File> {
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// Searches one file read from `file`, shown as `rel`, the way a local search does (a file
/// reached through an execution environment, read over the network); `rewind` gives it
/// from its start again, for a line too long to hold. `None` when it has no match.
pub(crate) fn search_reader<R: Read>(
    spec: &SearchSpec,
    file: R,
    rewind: impl FnOnce(R) -> io::Result<R>,
    rel: String,
) -> io::Result<Option<FileHits>> {
    search_file(
        &mut new_searcher(spec),
        &mut Vec::new(),
        spec,
        file,
        rewind,
        rel,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
            roots: Arc::new(Roots::default()),
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
                let base = WalkBase::open(&spec.roots, &spec.root).expect("open");
                let outcome = search_tree(
                    &spec,
                    &base,
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
}
