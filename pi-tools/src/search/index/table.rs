//! The index's table: every file the search walk yields under the index's root, in walk
//! order, each with the file's identity when it was read (inode, size, change times) and
//! what the index knows of its content: its trigrams in the shared posting lists, a set of
//! its own (re-indexed since the lists were built), or nothing (it is scanned every time).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::ops::ControlFlow;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use tokio_util::sync::CancellationToken;

use super::postings::{Builder, Postings};
use super::trigrams::{Extractor, Trigram};
use crate::env::local::open_beneath;
use crate::search::skipped::Skipped;
use crate::search::walk::{Kind, WalkBase, WalkEnd, walk_sorted};

/// Files bigger than this are not indexed (they are scanned every time).
const MAX_INDEXED_FILE: u64 = 16 << 20;

/// A tree with more files than this gets no index (its file table alone would hold
/// hundreds of megabytes); its searches walk.
const MAX_FILES: usize = 2_000_000;

/// A file changed this recently may change again within the file system's time resolution
/// without its times showing it; without notifications, such a file is scanned until it is
/// older than this.
const RACY: Duration = Duration::from_secs(2);

/// What identifies a version of a file: a change of content changes one of these (given a
/// file system whose times are fine enough; see [`RACY`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sig {
    ino: u64,
    size: u64,
    mtime: (i64, u64),
    ctime: (i64, u64),
}

impl Sig {
    // The nanosecond fields' type differs between targets.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &rustix::fs::Stat) -> Sig {
        Sig {
            ino: st.st_ino,
            size: st.st_size as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec as u64),
            ctime: (st.st_ctime, st.st_ctime_nsec as u64),
        }
    }

    /// The identity of the file at `path` now (following links), if there is one.
    pub(crate) fn of_path(path: &Path) -> Option<Sig> {
        rustix::fs::stat(path).ok().map(|st| Sig::of(&st))
    }

    /// Whether the file changed less than [`RACY`] before `now`.
    fn is_recent(&self, now: SystemTime) -> bool {
        let at = |(s, ns): (i64, u64)| {
            SystemTime::UNIX_EPOCH
                + Duration::from_secs(u64::try_from(s).unwrap_or(0))
                + Duration::from_nanos(ns)
        };
        let newest = at(self.mtime).max(at(self.ctime));
        newest + RACY > now
    }
}

/// What the index knows of a file's content.
pub(crate) enum Content {
    /// Its trigrams are in the posting lists under this id.
    Base(u32),
    /// Its trigrams, read since the lists were built.
    Own(Box<[Trigram]>),
    /// Nothing: it is always a candidate (a link, a file too big or unreadable, or text
    /// the searcher transcodes).
    Scan,
    /// Nothing yet: it changed too recently to trust its times (without notifications), so
    /// it is a candidate until it is read again once settled.
    Unsettled,
}

/// One reader thread's share of a build: its files' posting lists, and what it read of each.
type Part = (Builder, Vec<(Option<Sig>, Content)>);

/// What reading a file gave the index.
pub(super) enum Got {
    Indexed(Box<[Trigram]>),
    Unsettled,
    Scan,
}

/// One entry of the walk.
pub(crate) struct Entry {
    /// Its path relative to the index's root.
    pub rel: Box<str>,
    /// Its path as the file system knows it.
    pub path: PathBuf,
    /// What it is (only plain files and links are searched).
    pub kind: Kind,
    /// What it was when read (none for a link or an unreadable file).
    pub(super) sig: Option<Sig>,
    /// What the index knows of its content.
    pub content: Content,
}

/// The walk's entries and what is known of the files among them.
#[derive(Default)]
pub(crate) struct Table {
    /// Entries in walk order (files, links, directories and special files).
    pub entries: Vec<Entry>,
    /// Where each relative path is in `entries`.
    pub(super) by_rel: HashMap<Box<str>, usize>,
    /// The directories the walk entered, relative to the root ("" for the root).
    pub dirs: HashSet<Box<str>>,
    /// Some directory could not be read: the walk's report of it cannot be reproduced.
    pub unreadable_dirs: bool,
    /// The posting lists of the files read when the table was built.
    pub postings: Postings,
    /// For each posting id, where its file is in `entries` (`usize::MAX`: changed since).
    pub base_pos: Vec<usize>,
    /// Bytes held by `Own` sets.
    pub own_bytes: usize,
}

/// A file as the walk found it.
struct Found {
    rel: String,
    path: PathBuf,
    kind: Kind,
}

/// Walks `base` as grep and find do (no glob), calling `on_dir` for each directory before it is
/// listed (so a watch set there sees every later change). `None` when cancelled.
fn walk_files(
    base: &WalkBase,
    cancel: &CancellationToken,
    mut on_dir: impl FnMut(&str, &Path),
) -> Option<(Vec<Found>, HashSet<Box<str>>, bool)> {
    let mut files = Vec::new();
    let mut dirs = HashSet::new();
    dirs.insert(Box::<str>::from(""));
    let mut skipped = Skipped::default();
    on_dir("", &base.path);
    let end = walk_sorted(base, cancel, 0, None, &mut skipped, |entry| {
        match entry.kind {
            Kind::Dir => {
                let path = entry.path();
                on_dir(entry.rel, &path);
                dirs.insert(entry.rel.into());
            }
            Kind::File | Kind::Link | Kind::Special => {}
        }
        // Every entry is kept, in walk order (find lists directories too).
        files.push(Found {
            rel: entry.rel.to_owned(),
            path: entry.path(),
            kind: entry.kind,
        });
        ControlFlow::Continue(())
    });
    (end == WalkEnd::Completed).then_some((files, dirs, skipped.count > 0))
}

/// Reads a file for the index: its identity and trigrams, or `Scan`.
pub(crate) struct Reader {
    /// Made at the first file read (it holds 2 MiB).
    extractor: Option<Extractor>,
    buffer: Vec<u8>,
    /// Whether times alone may be trusted (no notifications): then recent files are not.
    pub distrust_recent: bool,
}

impl Reader {
    pub(crate) fn new(distrust_recent: bool) -> Reader {
        Reader {
            extractor: None,
            buffer: Vec::new(),
            distrust_recent,
        }
    }

    /// What the index keeps of the file at `rel` beneath `base`.
    pub(super) fn read(&mut self, base: &WalkBase, rel: &Path, kind: Kind) -> (Option<Sig>, Got) {
        if kind != Kind::File {
            return (None, Got::Scan);
        }
        let now = SystemTime::now();
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        let Ok(fd) = open_beneath(base.fd.as_fd(), rel, flags, Mode::empty(), true) else {
            return (None, Got::Scan);
        };
        // The identity is taken before the content, so a change while reading shows later.
        let Ok(st) = rustix::fs::fstat(&fd) else {
            return (None, Got::Scan);
        };
        let sig = Sig::of(&st);
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
            || sig.size > MAX_INDEXED_FILE
        {
            return (Some(sig), Got::Scan);
        }
        if self.distrust_recent && sig.is_recent(now) {
            return (Some(sig), Got::Unsettled);
        }
        self.buffer.clear();
        let mut file = std::fs::File::from(fd);
        if (&mut file)
            .take(MAX_INDEXED_FILE + 1)
            .read_to_end(&mut self.buffer)
            .is_err()
            || self.buffer.len() as u64 > MAX_INDEXED_FILE
            // UTF-16 text is transcoded before it is matched: its bytes are not its text.
            || self.buffer.starts_with(&[0xFF, 0xFE])
            || self.buffer.starts_with(&[0xFE, 0xFF])
        {
            return (Some(sig), Got::Scan);
        }
        // The searcher stops at the first NUL byte: nothing after it can match.
        let text = match memchr::memchr(0, &self.buffer) {
            Some(at) => &self.buffer[..at],
            None => &self.buffer[..],
        };
        let extractor = self.extractor.get_or_insert_with(Extractor::default);
        (Some(sig), Got::Indexed(extractor.trigrams(text)))
    }
}

/// The identity of the file at `rel` beneath `base` now (not following a final link).
fn stat_now(base: &WalkBase, rel: &Path) -> Option<Sig> {
    rustix::fs::statat(base.fd.as_fd(), rel, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| Sig::of(&st))
}

pub(super) fn rel_path<'a>(base: &WalkBase, path: &'a Path) -> &'a Path {
    path.strip_prefix(&base.path).unwrap_or(path)
}

impl Table {
    /// Walks and reads the whole tree, with `threads` readers. `None` when cancelled.
    pub(crate) fn build(
        base: &WalkBase,
        cancel: &CancellationToken,
        threads: usize,
        on_dir: impl FnMut(&str, &Path),
        distrust_recent: impl FnOnce() -> bool,
    ) -> Option<Table> {
        let (found, dirs, unreadable_dirs) = walk_files(base, cancel, on_dir)?;
        if found.len() > MAX_FILES {
            return None;
        }
        // Decided after the walk: whether every directory could be watched.
        let distrust_recent = distrust_recent();
        let threads = threads.clamp(1, 8);
        let chunk = found.len().div_ceil(threads).max(1);
        let parts: Vec<Part> = std::thread::scope(|scope| {
            let handles: Vec<_> = found
                .chunks(chunk)
                .enumerate()
                .map(|(n, files)| {
                    scope.spawn(move || {
                        let mut reader = Reader::new(distrust_recent);
                        let mut builder = Builder::default();
                        let mut read = Vec::with_capacity(files.len());
                        for (i, f) in files.iter().enumerate() {
                            if cancel.is_cancelled() {
                                break;
                            }
                            let (sig, got) = reader.read(base, rel_path(base, &f.path), f.kind);
                            let content = match got {
                                Got::Indexed(t) => {
                                    let id = (n * chunk + i) as u32;
                                    builder.add(id, &t);
                                    Content::Base(id)
                                }
                                Got::Unsettled => Content::Unsettled,
                                Got::Scan => Content::Scan,
                            };
                            read.push((sig, content));
                        }
                        (builder, read)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        if cancel.is_cancelled() || parts.iter().map(|p| p.1.len()).sum::<usize>() != found.len() {
            return None;
        }
        let mut builder = Builder::default();
        let mut read = Vec::with_capacity(found.len());
        for (part, r) in parts {
            builder.append(part);
            read.extend(r);
        }
        let mut table = Table {
            dirs,
            unreadable_dirs,
            postings: builder.freeze(),
            ..Table::default()
        };
        for (i, (f, (sig, content))) in found.into_iter().zip(read).enumerate() {
            table.base_pos.push(i);
            table.push(f, sig, content);
        }
        Some(table)
    }

    fn push(&mut self, f: Found, sig: Option<Sig>, content: Content) {
        let rel: Box<str> = f.rel.into();
        self.by_rel.insert(rel.clone(), self.entries.len());
        self.entries.push(Entry {
            rel,
            path: f.path,
            kind: f.kind,
            sig,
            content,
        });
    }

    /// Whether `rel` is a file of the table.
    pub(crate) fn has_file(&self, rel: &str) -> bool {
        self.by_rel.contains_key(rel)
    }

    /// Reads the file at `rel` again (its content changed).
    pub(crate) fn reread(&mut self, base: &WalkBase, rel: &str, reader: &mut Reader) {
        let Some(&at) = self.by_rel.get(rel) else {
            return;
        };
        let entry = &self.entries[at];
        let (sig, got) = reader.read(base, rel_path(base, &entry.path), entry.kind);
        self.set(at, sig, got);
    }

    pub(super) fn set(&mut self, at: usize, sig: Option<Sig>, got: Got) {
        let entry = &mut self.entries[at];
        if let Content::Base(id) = entry.content {
            self.base_pos[id as usize] = usize::MAX;
        }
        if let Content::Own(old) = &entry.content {
            self.own_bytes -= old.len() * 4;
        }
        entry.sig = sig;
        entry.content = match got {
            Got::Indexed(t) => {
                self.own_bytes += t.len() * 4;
                Content::Own(t)
            }
            Got::Unsettled => Content::Unsettled,
            Got::Scan => Content::Scan,
        };
    }

    /// Reads again the files that changed too recently to be read before, once their
    /// times can be trusted.
    pub(crate) fn reread_settled(&mut self, base: &WalkBase, reader: &mut Reader) {
        let now = SystemTime::now();
        for i in 0..self.entries.len() {
            let e = &self.entries[i];
            if matches!(e.content, Content::Unsettled) && e.sig.is_none_or(|s| !s.is_recent(now)) {
                let (sig, got) = reader.read(base, rel_path(base, &e.path), e.kind);
                self.set(i, sig, got);
            }
        }
    }

    /// Walks the tree again: files whose identity is unchanged keep what the index knows of
    /// them, the others are read. `None` when cancelled.
    pub(crate) fn rescan(
        mut self,
        base: &WalkBase,
        cancel: &CancellationToken,
        reader: &mut Reader,
        on_dir: impl FnMut(&str, &Path),
    ) -> Option<Table> {
        let (found, dirs, unreadable_dirs) = walk_files(base, cancel, on_dir)?;
        let clock = SystemTime::now();
        let mut old = std::mem::take(&mut self.entries);
        let mut table = Table {
            dirs,
            unreadable_dirs,
            postings: std::mem::take(&mut self.postings),
            base_pos: vec![usize::MAX; self.base_pos.len()],
            ..Table::default()
        };
        for f in found {
            let now = stat_now(base, rel_path(base, &f.path));
            let kept = self.by_rel.get(f.rel.as_str()).and_then(|&at| {
                let e = &mut old[at];
                let same = e.kind == f.kind
                    && f.kind == Kind::File
                    && e.sig.is_some()
                    && e.sig == now
                    && matches!(e.content, Content::Base(_) | Content::Own(_))
                    && !(reader.distrust_recent && e.sig.is_some_and(|s| s.is_recent(clock)));
                same.then(|| std::mem::replace(&mut e.content, Content::Scan))
            });
            match kept {
                Some(content) => {
                    match &content {
                        Content::Base(id) => table.base_pos[*id as usize] = table.entries.len(),
                        Content::Own(t) => table.own_bytes += t.len() * 4,
                        Content::Scan | Content::Unsettled => {}
                    }
                    table.push(f, now, content);
                }
                None => {
                    let (sig, got) = reader.read(base, rel_path(base, &f.path), f.kind);
                    let at = table.entries.len();
                    table.push(f, None, Content::Scan);
                    table.set(at, sig, got);
                }
            }
        }
        Some(table)
    }

    /// Bytes the table holds, roughly.
    pub(crate) fn heap_bytes(&self) -> usize {
        let per_entry: usize = self
            .entries
            .iter()
            .map(|e| 2 * e.rel.len() + e.path.as_os_str().len() + 120)
            .sum();
        per_entry + self.postings.heap_bytes() + self.base_pos.len() * 8 + self.own_bytes
    }
}
