//! The search index: a trigram index of the files grep searches under a working directory,
//! so a search for a rare name reads only the few files that can hold it.
//!
//! The index keeps the walk's list of files (the same walk grep and find make: ignore
//! rules, hidden files, `.git` skipped) and, for each file, the trigrams of its content
//! ([`table`], [`postings`]). A pattern gives a query over trigrams ([`query`]); the files
//! that satisfy it are the candidates, and grep searches exactly those, in walk order, with
//! its ordinary matcher, so its result is the one a full scan gives. A pattern that gives no
//! query (`.`, `ab`, `\w+`) is searched by the full scan.
//!
//! Never stale: before each search the index brings itself up to date ([`Index::prepare`]).
//! With kernel notifications ([`watch`]) it re-reads the files that changed, lists again the
//! directories where names appeared, vanished or moved ([`relist`]), and walks the tree
//! again when directories or ignore files changed; without them (or when they
//! overflowed) it walks the tree and compares every file's identity (inode, size, times)
//! before each search. A file the index is unsure of is always a candidate.
//!
//! One index per directory serves every session of the process (the registry keeps a few,
//! the most recently used). It is built only where it will be used ([`for_search`], by the
//! environment's [`SearchIndex`] setting): from the first search of a long-lived session, or
//! once a directory is searched a second time, never for a one-shot search. The build runs on
//! a thread of its own at idle priority, so the search that started it (a full scan) never
//! waits on it, and it holds no process open: its threads end with the process.

mod mounts;
mod postings;
mod query;
mod relist;
mod table;
mod trigrams;
mod watch;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

pub(crate) use query::query_for;
use table::{Content, Reader, Sig, Table};
pub(crate) use trigrams::Query;
use watch::Watcher;

use super::path_glob::PathGlob;
use super::walk::{Kind, WalkBase, spare_cores};
use crate::env::SearchIndex;
use crate::env::local::Roots;

/// More directories than this with names changed since the last search, and the index walks
/// the whole tree rather than listing each again.
const MAX_RELISTS: usize = 16;

/// A query that more than one file in this many may satisfy is left to the full scan…
const DENSE: usize = 16;
/// …once that is more than this many files.
const MIN_DENSE: usize = 256;

/// How many indexes the process keeps (one per directory searched).
const MAX_INDEXES: usize = 4;

/// A file to search: its path, its path as shown (relative to the search's root), and what
/// it is.
pub(crate) type Candidate = (PathBuf, String, Kind);

/// The index of one directory.
pub(crate) struct Index {
    root: PathBuf,
    inner: Mutex<Inner>,
    /// Stops the build when the index is dropped.
    cancel: CancellationToken,
    /// Searches answered from the index.
    narrowed: AtomicU64,
    /// Walks of the whole tree since the build (the files' names changed, or nothing said
    /// what changed).
    rescans: AtomicU64,
}

struct Inner {
    /// `None` while building, or when the build failed.
    table: Option<Table>,
    /// `None` without notifications: every search then walks the tree.
    watcher: Option<Watcher>,
    /// The ignore files above the root, and what they were when last looked at.
    rule_files: Vec<(PathBuf, Option<Sig>)>,
    /// The mount points beneath the root when last looked at (see [`mounts`]).
    mounts: Option<Vec<PathBuf>>,
    /// When the build took, for the benchmark.
    built_in: Option<std::time::Duration>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What an index is, once built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStats {
    /// How long the build took: the walk, and reading every file.
    pub build_time: std::time::Duration,
    /// Bytes the index holds, roughly: posting lists, the file table, and the trigram
    /// sets of files read again since the build.
    pub bytes: usize,
    /// Files in the index (the files a search of the whole directory walks).
    pub files: usize,
    /// Whether kernel notifications keep it up to date (else each search walks the tree).
    pub watched: bool,
    /// Searches it has answered with candidates.
    pub searches_narrowed: u64,
    /// Walks of the whole tree it made to catch up (names created, removed or moved).
    pub rescans: u64,
}

/// The indexes of the process, most recently used last.
static REGISTRY: Mutex<Vec<Arc<Index>>> = Mutex::new(Vec::new());

/// The directories searched once without an index, most recent last: a second search of
/// one of them starts its index ([`SearchIndex::WhenReused`]).
static SEARCHED_ONCE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// How many directories searched once the process remembers.
const MAX_SEARCHED_ONCE: usize = 64;

/// The index a search of the directory `root` uses, by the environment's setting `when`:
/// the one there is, else one started now (`Always`, or `WhenReused` when `root` was
/// searched before); `None` when this search goes without. `roots` are the allowed roots the
/// search goes through.
pub(crate) fn for_search(root: &Path, roots: &Arc<Roots>, when: SearchIndex) -> Option<Arc<Index>> {
    match when {
        SearchIndex::Off => None,
        SearchIndex::Always => Some(for_root(root, roots)),
        SearchIndex::WhenReused => {
            if exists(root) {
                return Some(for_root(root, roots));
            }
            let mut once = lock(&SEARCHED_ONCE);
            if let Some(at) = once.iter().position(|dir| dir == root) {
                once.remove(at);
                drop(once);
                return Some(for_root(root, roots));
            }
            once.push(root.to_path_buf());
            if once.len() > MAX_SEARCHED_ONCE {
                once.remove(0);
            }
            None
        }
    }
}

/// Whether the process holds an index of `root`, built or being built.
pub(crate) fn exists(root: &Path) -> bool {
    lock(&REGISTRY).iter().any(|i| i.root == root)
}

/// The index of `root`, started (on a thread of its own) if there is none yet; `roots`
/// are the allowed roots the first search of it went through.
fn for_root(root: &Path, roots: &Arc<Roots>) -> Arc<Index> {
    let mut all = lock(&REGISTRY);
    if let Some(at) = all.iter().position(|i| i.root == root) {
        let index = all.remove(at);
        all.push(Arc::clone(&index));
        return index;
    }
    let index = Index::start(root.to_path_buf(), Arc::clone(roots), true);
    all.push(Arc::clone(&index));
    if all.len() > MAX_INDEXES {
        all.remove(0);
    }
    index
}

/// Lowers the calling thread to the least priority, so that the build takes only time no
/// search wants; the threads it starts inherit it. Linux keeps a nice value per thread;
/// elsewhere it is the process's, so it is left alone there.
fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        // Best effort: at normal priority the build is only slower to yield.
        let _ = rustix::process::setpriority_process(None, 19);
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The ignore files in the directories above `root` (and git's exclude file at `root`),
/// which the walk reads but no watch covers.
fn rule_files(root: &Path) -> Vec<(PathBuf, Option<Sig>)> {
    let mut files = Vec::new();
    for dir in root.ancestors() {
        if dir != root {
            files.push(dir.join(".ignore"));
            files.push(dir.join(".gitignore"));
        }
        files.push(dir.join(".git/info/exclude"));
    }
    files
        .into_iter()
        .map(|f| {
            let sig = Sig::of_path(&f);
            (f, sig)
        })
        .collect()
}

impl Index {
    /// Starts building the index of `root` on a thread of its own; `watch`: with kernel
    /// notifications where the system has them.
    fn start(root: PathBuf, roots: Arc<Roots>, watch: bool) -> Arc<Index> {
        let index = Arc::new(Index {
            root,
            inner: Mutex::new(Inner {
                table: None,
                watcher: None,
                rule_files: Vec::new(),
                mounts: None,
                built_in: None,
            }),
            cancel: CancellationToken::new(),
            narrowed: AtomicU64::new(0),
            rescans: AtomicU64::new(0),
        });
        let weak = Arc::downgrade(&index);
        let (root, cancel) = (index.root.clone(), index.cancel.clone());
        let spawned = std::thread::Builder::new()
            .name("pi-tools-index".into())
            .spawn(move || {
                idle_priority();
                let started = Instant::now();
                let Ok(base) = WalkBase::open(&roots, &root) else {
                    return;
                };
                let watcher = if watch { Watcher::start() } else { None };
                let rules = rule_files(&root);
                let mounted = mounts::beneath(&root);
                let unwatched = Cell::new(watcher.is_none());
                let table = Table::build(
                    &base,
                    &cancel,
                    spare_cores() + 1,
                    |rel, path| {
                        if let Some(w) = &watcher
                            && !unwatched.get()
                            && w.watch(rel, path).is_err()
                        {
                            unwatched.set(true);
                        }
                    },
                    || unwatched.get(),
                );
                let (Some(table), Some(index)) = (table, weak.upgrade()) else {
                    return;
                };
                let mut inner = lock(&index.inner);
                inner.table = Some(table);
                inner.watcher = watcher.filter(|_| !unwatched.get());
                inner.rule_files = rules;
                inner.mounts = mounted;
                inner.built_in = Some(started.elapsed());
            });
        if spawned.is_err() {
            index.cancel.cancel();
        }
        index
    }

    /// Waits up to `timeout` for the index to be built; what it is then.
    pub(crate) fn wait_ready(&self, timeout: std::time::Duration) -> Option<IndexStats> {
        let until = Instant::now() + timeout;
        loop {
            if let Some(stats) = self.stats() {
                return Some(stats);
            }
            if Instant::now() >= until || self.cancel.is_cancelled() {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// What the index is, once built.
    pub(crate) fn stats(&self) -> Option<IndexStats> {
        let inner = lock(&self.inner);
        let table = inner.table.as_ref()?;
        Some(IndexStats {
            build_time: inner.built_in?,
            bytes: table.heap_bytes(),
            files: table
                .entries
                .iter()
                .filter(|e| matches!(e.kind, Kind::File | Kind::Link))
                .count(),
            watched: inner.watcher.is_some(),
            searches_narrowed: self.narrowed.load(Ordering::Relaxed),
            rescans: self.rescans.load(Ordering::Relaxed),
        })
    }

    /// The files under `search_root` (the index's root or a directory the walk enters)
    /// that may hold a match of `query`, in walk order, shown relative to `search_root`
    /// and filtered by `glob`; `None` when the index cannot answer (not built yet, the
    /// query narrows nothing, the directory is not covered), and the search must walk.
    ///
    /// The index is brought up to date first: the answer is never stale.
    pub(crate) fn candidates(
        &self,
        search_root: &Path,
        query: &Query,
        glob: Option<&PathGlob>,
    ) -> Option<Vec<Candidate>> {
        if matches!(query, Query::All) {
            return None;
        }
        {
            // A pattern whose trigrams are in many files has dense matches: the full scan
            // finds the limit's worth in the first few files and stops, sooner than the
            // index could make its list. Judged from the lists' sizes alone.
            let inner = lock(&self.inner);
            let table = inner.table.as_ref()?;
            let files = table.base_pos.len();
            if table.postings.bound(query, files) > (files / DENSE).max(MIN_DENSE) {
                return None;
            }
        }
        let (inner, prefix) = self.ready_for(search_root)?;
        let table = inner.table.as_ref()?;
        let hits = table.postings.eval(query, table.base_pos.len() as u32)?;
        let mut picked: Vec<usize> = hits
            .into_iter()
            .map(|id| table.base_pos[id as usize])
            .filter(|&at| at != usize::MAX)
            .collect();
        for (at, e) in table.entries.iter().enumerate() {
            let take = match &e.content {
                _ if matches!(e.kind, Kind::Dir | Kind::Special) => false,
                Content::Base(_) => false,
                Content::Own(t) => query.admits(t),
                Content::Scan | Content::Unsettled => true,
            };
            if take {
                picked.push(at);
            }
        }
        picked.sort_unstable();
        picked.dedup();
        let mut out = Vec::with_capacity(picked.len());
        for at in picked {
            let e = &table.entries[at];
            let Some(shown) = shown(&e.rel, &prefix) else {
                continue;
            };
            if glob.is_some_and(|g| !g.is_match(shown, false)) {
                continue;
            }
            out.push((e.path.clone(), shown.to_owned(), e.kind));
        }
        self.narrowed.fetch_add(1, Ordering::Relaxed);
        Some(out)
    }

    /// The entries under `search_root` (the index's root or a directory the walk enters)
    /// that `glob` selects, in walk order, shown relative to `search_root`, each with
    /// whether it is a directory; `visit` takes them until it breaks. `None` when the index
    /// cannot answer (not built yet, the directory is not covered), and the caller must
    /// walk. The index is brought up to date first.
    pub(crate) fn listing(
        &self,
        search_root: &Path,
        glob: &PathGlob,
        mut visit: impl FnMut(&str, bool) -> std::ops::ControlFlow<()>,
    ) -> Option<()> {
        let (inner, prefix) = self.ready_for(search_root)?;
        let table = inner.table.as_ref()?;
        for e in &table.entries {
            let Some(shown) = shown(&e.rel, &prefix) else {
                continue;
            };
            let is_dir = e.kind == Kind::Dir;
            if glob.is_match(shown, is_dir) && visit(shown, is_dir).is_break() {
                break;
            }
        }
        self.narrowed.fetch_add(1, Ordering::Relaxed);
        Some(())
    }

    /// The index, up to date, when it covers `search_root`; and the root's path relative
    /// to the index's.
    fn ready_for(&self, search_root: &Path) -> Option<(MutexGuard<'_, Inner>, String)> {
        let prefix = search_root
            .strip_prefix(&self.root)
            .ok()?
            .to_str()?
            .to_owned();
        let mut inner = lock(&self.inner);
        inner.table.as_ref()?;
        self.prepare(&mut inner)?;
        let table = inner.table.as_ref()?;
        if table.unreadable_dirs || !table.dirs.contains(prefix.as_str()) {
            return None;
        }
        Some((inner, prefix))
    }

    /// Brings the table up to date with the files as they are now; `None` when it could
    /// not (the table is then dropped, and searches walk).
    fn prepare(&self, inner: &mut Inner) -> Option<()> {
        let base = WalkBase::open(&Roots::default(), &self.root).ok()?;
        let mut rescan = inner.watcher.is_none();
        let mut overflowed = false;
        let mut dirty: Vec<String> = Vec::new();
        let mut relist: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let now_rules = rule_files(&self.root);
        if now_rules != inner.rule_files {
            rescan = true;
            inner.rule_files = now_rules;
        }
        // A file system mounted or unmounted beneath the root: no notification says so.
        let now_mounts = mounts::beneath(&self.root);
        if now_mounts != inner.mounts {
            rescan = true;
            inner.mounts = now_mounts;
        }
        if let Some(w) = &inner.watcher {
            let pending = w.take();
            if pending.rescan {
                rescan = true;
                overflowed = true;
            }
            let table = inner.table.as_ref()?;
            for change in pending.changes {
                if rescan {
                    break;
                }
                let (parent, name) = change.rel.rsplit_once('/').unwrap_or(("", &change.rel));
                let listed = table.has_file(&change.rel);
                if change.is_dir || matches!(name, ".gitignore" | ".ignore" | ".git") {
                    rescan = true;
                } else if change.in_place {
                    // A name the walk leaves out (ignored) changing in place changes
                    // nothing the walk yields.
                    if listed {
                        dirty.push(change.rel);
                    }
                } else {
                    // Created, removed or moved: its directory is listed again (a name
                    // replaced by another file is also read again).
                    relist.insert(parent.to_owned());
                    if listed && !change.gone {
                        dirty.push(change.rel);
                    }
                }
            }
            if relist.len() > MAX_RELISTS {
                rescan = true;
            }
        }
        let mut reader = Reader::new(inner.watcher.is_none() || overflowed);
        let mut table = inner.table.take()?;
        if !rescan {
            rescan = !relist
                .iter()
                .all(|dir| table.relist(&base, dir, &mut reader));
        }
        if rescan {
            self.rescans.fetch_add(1, Ordering::Relaxed);
            let watcher = inner.watcher.as_ref();
            let failed = Cell::new(false);
            table = table.rescan(&base, &self.cancel, &mut reader, |rel, path| {
                if let Some(w) = watcher
                    && w.watch(rel, path).is_err()
                {
                    failed.set(true);
                }
            })?;
            if let Some(w) = watcher {
                w.keep_only(&table.dirs);
            }
            if failed.get() {
                // Some directory could not be watched (the system's limit of watches): the
                // files just read were trusted to notifications that will not come, so the
                // index gives up and searches walk.
                inner.watcher = None;
                return None;
            }
        } else {
            dirty.sort_unstable();
            dirty.dedup();
            for rel in &dirty {
                table.reread(&base, rel, &mut reader);
            }
        }
        table.reread_settled(&base, &mut reader);
        inner.table = Some(table);
        Some(())
    }
}

/// An entry's path as a search of `prefix` (relative to the index's root) shows it; `None`
/// when it is not under `prefix`.
fn shown<'a>(rel: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix.is_empty() {
        Some(rel)
    } else {
        rel.strip_prefix(prefix)?.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests;
