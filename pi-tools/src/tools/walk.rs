//! The ordered, ignore-aware directory walk shared by grep and find, and the glob rule both
//! use to pick paths.
//!
//! Hidden files are included, `.gitignore` and `.ignore` files are respected hierarchically
//! (also in the search directory's parents, and also outside a git repository), and `.git`
//! itself is never entered. Entries come in a deterministic order: each directory's entries
//! sorted by name, depth first. The walk stops as soon as the visitor says so or the call is
//! cancelled, so a limited query never scans the whole tree.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{self, AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender};
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

/// One path the walk yields (never the root itself).
#[derive(Debug, Clone)]
pub(crate) struct WalkEntry {
    /// The path as the file system knows it.
    pub path: PathBuf,
    /// The path relative to the walk's root, with `/` separators.
    pub rel: String,
    /// Whether the entry is a directory (symlinks are not followed).
    pub is_dir: bool,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WalkEnd {
    /// Every entry was visited.
    Completed,
    /// The visitor asked to stop.
    Stopped,
    /// The cancellation token fired.
    Cancelled,
}

/// How many helper threads read subtrees ahead of the ordered walk: one per core beyond the
/// caller's, at most three.
pub(crate) fn default_helpers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .clamp(1, 3)
}

/// Walks `root` in sorted order, calling `visit` for every file and directory below it that
/// the ignore rules let through. Unreadable entries are skipped.
///
/// Helper threads walk subtrees ahead of the visitor (see [`walk_sorted_with`]); the entries
/// and their order are exactly those of a single-threaded sorted walk.
pub(crate) fn walk_sorted(
    root: &Path,
    cancel: &CancellationToken,
    visit: impl FnMut(WalkEntry) -> ControlFlow<()>,
) -> WalkEnd {
    walk_sorted_with(root, cancel, Tuning::with_helpers(default_helpers()), visit)
}

/// How far the parallel walk may split the tree.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tuning {
    /// Helper threads (0: walk on the calling thread only).
    pub helpers: usize,
    /// Subtrees handed out but not yet started, at most; a directory is split off only while
    /// fewer are waiting, so splitting follows demand and memory stays bounded.
    pub max_waiting: usize,
    /// Only directories this deep (1 = the root's children) are split off; deeper ones are
    /// cheaper to walk in place than to start anew.
    pub max_split_depth: usize,
    /// Entries a helper may read ahead in one subtree before it waits for the visitor.
    pub buffer: usize,
}

impl Tuning {
    pub(crate) fn with_helpers(helpers: usize) -> Tuning {
        Tuning {
            helpers,
            max_waiting: 2 * helpers.max(1),
            max_split_depth: 5,
            buffer: 1024,
        }
    }
}

/// The parallel sorted walk.
///
/// The calling thread walks the tree with `ignore`'s sorted walker and calls `visit`. When a
/// directory is reached and helpers are short of work, it is *split off*: the walker does not
/// descend into it, and a helper walks that subtree (again with `ignore`'s walker, started at
/// the subdirectory with the parent directories' ignore files applied, which `ignore` does for
/// any starting point) into a bounded buffer, splitting off further subtrees the same way.
/// The visitor drains each subtree's buffer at the place where the subtree belongs in the
/// sorted order, so the output is exactly that of the single-threaded walk. If the visitor
/// reaches a subtree no helper has started, it walks it itself, so it never waits on work
/// nobody does. Helpers take the waiting subtree that comes first in the output. Once the
/// visitor stops, helpers stop too, so a limit still ends the work early.
pub(crate) fn walk_sorted_with(
    root: &Path,
    cancel: &CancellationToken,
    tuning: Tuning,
    mut visit: impl FnMut(WalkEntry) -> ControlFlow<()>,
) -> WalkEnd {
    if tuning.helpers == 0 {
        return walk_sequential(root, cancel, visit);
    }
    let shared = Shared {
        root: root.to_path_buf(),
        tuning,
        queue: Mutex::new(BinaryHeap::new()),
        ready: Condvar::new(),
        gate: Arc::new(Gate {
            cancel: cancel.clone(),
            stop: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
            max_waiting: tuning.max_waiting,
        }),
    };
    std::thread::scope(|scope| {
        for _ in 0..tuning.helpers {
            let shared = &shared;
            scope.spawn(move || helper(shared));
        }
        let mut consumer = Consumer {
            shared: &shared,
            visit: &mut visit,
        };
        let flow = produce(&shared, root, 0, &[], &mut |item| consumer.take(item));
        shared.gate.stop.store(true, atomic::Ordering::SeqCst);
        shared.ready.notify_all();
        if cancel.is_cancelled() {
            WalkEnd::Cancelled
        } else if flow.is_break() {
            WalkEnd::Stopped
        } else {
            WalkEnd::Completed
        }
    })
}

/// The single-threaded sorted walk: the reference the parallel walk must equal.
pub(crate) fn walk_sequential(
    root: &Path,
    cancel: &CancellationToken,
    mut visit: impl FnMut(WalkEntry) -> ControlFlow<()>,
) -> WalkEnd {
    for item in builder(root).build() {
        if cancel.is_cancelled() {
            return WalkEnd::Cancelled;
        }
        let Ok(entry) = item else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Some(entry) = to_entry(root, entry) else {
            continue;
        };
        if visit(entry).is_break() {
            return WalkEnd::Stopped;
        }
    }
    WalkEnd::Completed
}

fn to_entry(root: &Path, entry: ignore::DirEntry) -> Option<WalkEntry> {
    let rel = relative_string(entry.path().strip_prefix(root).ok()?);
    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
    Some(WalkEntry {
        path: entry.into_path(),
        rel,
        is_dir,
    })
}

/// The walk configuration: ripgrep's defaults, plus hidden files, minus `.git`, and ignore
/// files honoured without a repository.
fn builder(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// What a subtree walk hands on, in sorted order.
enum Item {
    Entry(WalkEntry),
    /// A split-off subtree: its entries come here, from this receiver.
    Subtree(Arc<Subtree>, Receiver<Item>),
}

/// A directory whose subtree is walked on its own.
struct Subtree {
    /// Its place in the output: the split indices from the root down; sorting by key is
    /// sorting by output position.
    key: Vec<u32>,
    dir: PathBuf,
    /// Depth of `dir` below the root.
    depth: usize,
    /// Set by whoever walks it (a helper or the visitor), exactly once.
    claimed: AtomicBool,
    /// Taken by the helper that walks it; dropping it tells the visitor the subtree ended.
    sender: Mutex<Option<Sender<Item>>>,
}

impl Subtree {
    fn claim(&self) -> bool {
        !self.claimed.swap(true, atomic::Ordering::SeqCst)
    }
}

/// Orders the queue so that the subtree first in the output comes first.
struct ByKey(Arc<Subtree>);

impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}
impl Eq for ByKey {}
impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

struct Shared {
    root: PathBuf,
    tuning: Tuning,
    /// Split-off subtrees nobody has started, first in the output first.
    queue: Mutex<BinaryHeap<Reverse<ByKey>>>,
    ready: Condvar,
    gate: Arc<Gate>,
}

/// What the walk filters (which must be `'static`) need to decide on splitting.
struct Gate {
    cancel: CancellationToken,
    /// The visitor is done (finished, stopped or cancelled).
    stop: AtomicBool,
    /// Subtrees split off and not yet claimed.
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl Gate {
    fn halted(&self) -> bool {
        self.stop.load(atomic::Ordering::Relaxed) || self.cancel.is_cancelled()
    }

    /// Reserves a place for one more waiting subtree, if there is room and work goes on.
    fn reserve(&self) -> bool {
        !self.halted()
            && self
                .waiting
                .fetch_update(atomic::Ordering::SeqCst, atomic::Ordering::SeqCst, |n| {
                    (n < self.max_waiting).then_some(n + 1)
                })
                .is_ok()
    }
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, BinaryHeap<Reverse<ByKey>>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn halted(&self) -> bool {
        self.gate.halted()
    }

    fn cancelled(&self) -> bool {
        self.gate.cancel.is_cancelled()
    }

    fn release(&self) {
        self.gate.waiting.fetch_sub(1, atomic::Ordering::SeqCst);
    }
}

/// Walks the subtree at `dir` (at `depth` below the root) in sorted order and hands each
/// entry, and each split-off subtree at its place, to `emit`.
fn produce(
    shared: &Shared,
    dir: &Path,
    depth: usize,
    key: &[u32],
    emit: &mut dyn FnMut(Item) -> ControlFlow<()>,
) -> ControlFlow<()> {
    // Directories the filter below split off, in walk order; the walker yields the next
    // entry only after filtering them, so they are handed on before that entry.
    let split: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let mut walk = builder(dir);
    if shared.tuning.helpers > 0 {
        let split = Arc::clone(&split);
        let gate = Arc::clone(&shared.gate);
        let max_depth = shared.tuning.max_split_depth;
        walk.filter_entry(move |entry| {
            if entry.file_name() == ".git" {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if is_dir && depth + entry.depth() <= max_depth && gate.reserve() {
                split
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(entry.path().to_path_buf());
                return false;
            }
            true
        });
    }
    emit_walk(shared, walk, depth, key, &split, emit)
}

fn emit_walk(
    shared: &Shared,
    walk: WalkBuilder,
    depth: usize,
    key: &[u32],
    split: &Mutex<Vec<PathBuf>>,
    emit: &mut dyn FnMut(Item) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut next_index = 0u32;
    let mut hand_on_split = |emit: &mut dyn FnMut(Item) -> ControlFlow<()>| {
        let dirs = std::mem::take(&mut *split.lock().unwrap_or_else(|e| e.into_inner()));
        for dir in dirs {
            let Ok(rel) = dir.strip_prefix(&shared.root) else {
                shared.release();
                continue;
            };
            let entry = WalkEntry {
                rel: relative_string(rel),
                path: dir.clone(),
                is_dir: true,
            };
            let (tx, rx) = crossbeam_channel::bounded(shared.tuning.buffer);
            let mut sub_key = key.to_vec();
            sub_key.push(next_index);
            next_index += 1;
            let sub_depth = rel.components().count();
            let subtree = Arc::new(Subtree {
                key: sub_key,
                dir,
                depth: sub_depth,
                claimed: AtomicBool::new(false),
                sender: Mutex::new(Some(tx)),
            });
            shared.queue().push(Reverse(ByKey(Arc::clone(&subtree))));
            shared.ready.notify_one();
            emit(Item::Entry(entry))?;
            emit(Item::Subtree(subtree, rx))?;
        }
        ControlFlow::Continue(())
    };
    for item in walk.build() {
        hand_on_split(emit)?;
        if shared.halted() {
            return ControlFlow::Break(());
        }
        let Ok(entry) = item else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Some(entry) = to_entry(&shared.root, entry) else {
            continue;
        };
        emit(Item::Entry(entry))?;
    }
    hand_on_split(emit)
}

/// The visitor's side: entries go to the visitor, subtrees are drained (or walked) in place.
struct Consumer<'a, V> {
    shared: &'a Shared,
    visit: &'a mut V,
}

impl<V: FnMut(WalkEntry) -> ControlFlow<()>> Consumer<'_, V> {
    fn take(&mut self, item: Item) -> ControlFlow<()> {
        if self.shared.cancelled() {
            return ControlFlow::Break(());
        }
        match item {
            Item::Entry(entry) => (self.visit)(entry),
            Item::Subtree(subtree, rx) => {
                if subtree.claim() {
                    // No helper has started it: walk it here rather than wait.
                    self.shared.release();
                    drop(rx);
                    let shared = self.shared;
                    produce(
                        shared,
                        &subtree.dir,
                        subtree.depth,
                        &subtree.key,
                        &mut |item| self.take(item),
                    )
                } else {
                    self.drain(&rx)
                }
            }
        }
    }

    fn drain(&mut self, rx: &Receiver<Item>) -> ControlFlow<()> {
        loop {
            match rx.recv_timeout(POLL) {
                Ok(item) => self.take(item)?,
                Err(RecvTimeoutError::Timeout) => {
                    if self.shared.cancelled() {
                        return ControlFlow::Break(());
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return ControlFlow::Continue(()),
            }
        }
    }
}

/// How often blocked threads look at the stop flag and the cancellation token.
const POLL: Duration = Duration::from_millis(20);

/// A helper thread: walks the waiting subtree that comes first in the output, into its
/// buffer, until the visitor is done.
fn helper(shared: &Shared) {
    loop {
        let subtree = {
            let mut queue = shared.queue();
            loop {
                if shared.halted() {
                    return;
                }
                match queue.pop() {
                    Some(Reverse(ByKey(subtree))) => {
                        if subtree.claim() {
                            break subtree;
                        }
                    }
                    None => {
                        queue = match shared.ready.wait_timeout(queue, POLL) {
                            Ok((queue, _)) => queue,
                            Err(e) => e.into_inner().0,
                        };
                    }
                }
            }
        };
        shared.release();
        let sender = subtree
            .sender
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(sender) = sender else { continue };
        let _ = produce(
            shared,
            &subtree.dir,
            subtree.depth,
            &subtree.key,
            &mut |item| send(shared, &sender, item),
        );
    }
}

/// Sends into a subtree's buffer, waiting while it is full, until the visitor is done.
fn send(shared: &Shared, sender: &Sender<Item>, mut item: Item) -> ControlFlow<()> {
    loop {
        match sender.send_timeout(item, POLL) {
            Ok(()) => return ControlFlow::Continue(()),
            Err(SendTimeoutError::Timeout(back)) => {
                if shared.halted() {
                    return ControlFlow::Break(());
                }
                item = back;
            }
            Err(SendTimeoutError::Disconnected(_)) => return ControlFlow::Break(()),
        }
    }
}

/// A relative path as text with `/` separators.
pub(crate) fn relative_string(rel: &Path) -> String {
    let text = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

/// A glob over paths relative to the search directory.
///
/// A pattern without `/` matches the file name at any depth (`*.rs`). A pattern with `/`
/// matches the whole relative path, with a leading `**/` implied unless the pattern is
/// anchored by a leading `/` or `./` (`src/**/mod.rs` also matches `crates/a/src/mod.rs`;
/// `/src/*.rs` only the top-level `src`). `*` never crosses a `/`; `**` does. A trailing `/`
/// matches directories only.
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    whole_path: bool,
    dirs_only: bool,
}

impl PathGlob {
    /// Compiles a pattern; the error is a sentence for the model.
    pub(crate) fn new(pattern: &str) -> Result<PathGlob, String> {
        let mut text = pattern.trim();
        let dirs_only = text.len() > 1 && text.ends_with('/');
        if dirs_only {
            text = text.trim_end_matches('/');
        }
        if text.is_empty() {
            return Err(
                "The glob pattern is empty. Give a pattern such as `*.rs` or `src/**/*.ts`."
                    .to_string(),
            );
        }
        let whole_path = text.contains('/');
        let effective = if !whole_path {
            text.to_string()
        } else if let Some(anchored) = text.strip_prefix("./") {
            anchored.to_string()
        } else if let Some(anchored) = text.strip_prefix('/') {
            anchored.to_string()
        } else if text.starts_with("**/") {
            text.to_string()
        } else {
            format!("**/{text}")
        };
        let glob = GlobBuilder::new(&effective)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| {
                format!(
                    "The glob pattern `{pattern}` is invalid: {}. Fix the pattern (e.g. `*.rs`, `**/*.spec.ts`, `src/**/mod.rs`).",
                    e.kind()
                )
            })?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            whole_path,
            dirs_only,
        })
    }

    /// Whether an entry with this relative path matches.
    pub(crate) fn is_match(&self, rel: &str, is_dir: bool) -> bool {
        if self.dirs_only && !is_dir {
            return false;
        }
        if self.whole_path {
            self.matcher.is_match(rel)
        } else {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str) -> PathGlob {
        PathGlob::new(p).expect("valid glob")
    }

    #[test]
    fn name_patterns_match_at_any_depth() {
        let g = glob("*.rs");
        assert!(g.is_match("a.rs", false));
        assert!(g.is_match("src/deep/a.rs", false));
        assert!(!g.is_match("a.rs.txt", false));
    }

    #[test]
    fn slash_patterns_match_the_whole_path_with_implied_prefix() {
        let g = glob("src/**/x");
        assert!(g.is_match("src/x", false));
        assert!(g.is_match("src/a/b/x", true));
        assert!(g.is_match("crate/src/a/x", false));
        assert!(!g.is_match("src/a/xy", false));
        let g = glob("**/*.spec.ts");
        assert!(g.is_match("a.spec.ts", false));
        assert!(g.is_match("web/app/a.spec.ts", false));
    }

    #[test]
    fn anchored_patterns_start_at_the_root() {
        let g = glob("/src/*.rs");
        assert!(g.is_match("src/a.rs", false));
        assert!(!g.is_match("x/src/a.rs", false));
        assert!(!g.is_match("src/a/b.rs", false));
        assert!(glob("./src/*.rs").is_match("src/a.rs", false));
        assert!(!glob("./src/*.rs").is_match("y/src/a.rs", false));
    }

    #[test]
    fn trailing_slash_means_directories() {
        let g = glob("tests/");
        assert!(g.is_match("a/tests", true));
        assert!(!g.is_match("a/tests", false));
    }

    /// A tree with many directories and ignore rules at several levels: `.gitignore` and
    /// `.ignore` files (with negations and directory-only rules), a `.git` directory with an
    /// `info/exclude`, hidden files, an ignore file above the walk's root, and a symlink.
    fn deep_tree() -> tempfile::TempDir {
        let top = tempfile::tempdir().expect("tempdir");
        let write = |rel: &str, text: &str| {
            let path = top.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(".gitignore", "*.above\n");
        write("root/.gitignore", "*.log\n/build/\nskipdir/\n!keep.log\n");
        write("root/.git/info/exclude", "*.excluded\n");
        write("root/.git/HEAD", "ref: refs/heads/main\n");
        write("root/.hidden", "h");
        for a in 0..6 {
            for b in 0..5 {
                for c in 0..4 {
                    let dir = format!("root/d{a}/e{b}/f{c}");
                    write(&format!("{dir}/x.rs"), "fn main() {}\n");
                    write(&format!("{dir}/y.log"), "log");
                    write(&format!("{dir}/keep.log"), "kept");
                    write(&format!("{dir}/z.excluded"), "ex");
                    write(&format!("{dir}/w.above"), "ab");
                    write(&format!("{dir}/tests/t{c}.rs"), "#[test] fn t() {}\n");
                    if c == 1 {
                        write(&format!("{dir}/.ignore"), "tests/\n!*.log\n");
                        write(&format!("{dir}/g/.gitignore"), "*.rs\n");
                        write(&format!("{dir}/g/h/i.rs"), "x");
                        write(&format!("{dir}/g/h/j.txt"), "x");
                    }
                    if c == 2 {
                        write(&format!("{dir}/skipdir/s.rs"), "x");
                        write(&format!("{dir}/build/b.rs"), "not anchored here");
                    }
                }
            }
        }
        write("root/build/out.rs", "anchored: ignored");
        write("root/Build/out.rs", "other case: kept");
        #[cfg(unix)]
        std::os::unix::fs::symlink(top.path().join("root/d0"), top.path().join("root/link"))
            .expect("symlink");
        top
    }

    fn collect(
        root: &Path,
        tuning: Option<Tuning>,
        stop_after: Option<usize>,
    ) -> (Vec<(String, bool)>, WalkEnd) {
        let mut seen = Vec::new();
        let visit = |e: WalkEntry| {
            seen.push((e.rel, e.is_dir));
            if stop_after.is_some_and(|n| seen.len() >= n) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let cancel = CancellationToken::new();
        let end = match tuning {
            None => walk_sequential(root, &cancel, visit),
            Some(t) => walk_sorted_with(root, &cancel, t, visit),
        };
        (seen, end)
    }

    fn tunings() -> Vec<Tuning> {
        let mut all = Vec::new();
        for helpers in [1, 2, 3] {
            all.push(Tuning::with_helpers(helpers));
            // Split everything, with tiny buffers: helpers block often and the visitor
            // walks unstarted subtrees itself.
            all.push(Tuning {
                helpers,
                max_waiting: 1000,
                max_split_depth: usize::MAX,
                buffer: 1,
            });
            all.push(Tuning {
                helpers,
                max_waiting: 1,
                max_split_depth: 2,
                buffer: 3,
            });
        }
        all
    }

    #[test]
    fn parallel_walk_equals_the_sequential_walk() {
        let top = deep_tree();
        let root = top.path().join("root");
        let (expected, end) = collect(&root, None, None);
        assert_eq!(end, WalkEnd::Completed);
        let rels: Vec<&str> = expected.iter().map(|(r, _)| r.as_str()).collect();
        // The ignore rules really apply (so equality below means something).
        assert!(rels.contains(&".hidden"));
        assert!(rels.contains(&"d0/e0/f0/keep.log"));
        assert!(rels.contains(&"d0/e0/f1/y.log"), "re-included by .ignore");
        assert!(rels.contains(&"Build/out.rs"));
        assert!(rels.contains(&"d0/e0/f2/build/b.rs"));
        assert!(rels.contains(&"link"));
        for gone in [
            ".git",
            "build",
            "d0/e0/f0/y.log",
            "d0/e0/f0/z.excluded",
            "d0/e0/f0/w.above",
            "d0/e0/f1/tests",
            "d0/e0/f1/g/h/i.rs",
            "d0/e0/f2/skipdir",
        ] {
            assert!(!rels.contains(&gone), "{gone} should be ignored");
        }
        assert!(rels.contains(&"d0/e0/f1/g/h/j.txt"));
        assert!(expected.len() > 500, "{}", expected.len());
        for tuning in tunings() {
            for _ in 0..2 {
                let (got, end) = collect(&root, Some(tuning), None);
                assert_eq!(end, WalkEnd::Completed);
                assert_eq!(got, expected, "{tuning:?}");
            }
        }
    }

    #[test]
    fn a_stopped_parallel_walk_yields_the_sequential_prefix() {
        let top = deep_tree();
        let root = top.path().join("root");
        let (expected, _) = collect(&root, None, None);
        for n in [1, 7, 100, 777, expected.len() - 1] {
            for tuning in tunings() {
                let (got, end) = collect(&root, Some(tuning), Some(n));
                assert_eq!(end, WalkEnd::Stopped);
                assert_eq!(got, expected[..n], "{tuning:?} stopping after {n}");
            }
        }
    }

    #[test]
    fn a_cancelled_parallel_walk_ends_promptly() {
        let top = deep_tree();
        let root = top.path().join("root");
        let cancel = CancellationToken::new();
        let mut seen = 0;
        let end = walk_sorted_with(&root, &cancel, Tuning::with_helpers(2), |_| {
            seen += 1;
            if seen == 10 {
                cancel.cancel();
            }
            ControlFlow::Continue(())
        });
        assert_eq!(end, WalkEnd::Cancelled);
        assert!(seen <= 11, "{seen}");
    }

    #[test]
    fn bad_and_empty_globs_are_sentences() {
        let err = PathGlob::new("a[").expect_err("unclosed class");
        assert!(
            err.starts_with("The glob pattern `a[` is invalid:"),
            "{err}"
        );
        assert!(PathGlob::new("  ").is_err());
    }
}
