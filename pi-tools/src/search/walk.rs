//! The ordered, ignore-aware directory walk shared by grep and find, and where their
//! searches start.
//!
//! Hidden files are included, `.gitignore` and `.ignore` files are respected hierarchically
//! (also in the search directory's parents, and also outside a git repository; see
//! [`Rules`]), and `.git` itself is never entered. Entries come in a deterministic order:
//! each directory's entries sorted by name, depth first, exactly as one thread walking the
//! tree would see them. The walk stops as soon as the visitor says so or the call is
//! cancelled, so a limited query never scans the whole tree.
//!
//! Reading directories is most of a walk's cost, so on a tree big enough to be worth it
//! (once [`HELP_AFTER`] entries have been visited) helper threads list directories while
//! the calling thread visits entries in order. Helpers start from the *end* of the walk and
//! work backwards (always taking the last unlisted directory the walk has found), while the
//! visitor goes forwards and lists every directory it reaches that no helper has; the two
//! meet in the middle, rarely want the same directory, and the visitor waits only for a
//! listing a helper is busy with. Helpers stay at most [`MAX_AHEAD`] listed entries ahead of
//! the visitor, which bounds memory whatever the size of the tree. (ripgrep's parallel
//! walker has no order; its sorted walker has no parallelism.)
//!
//! The file runs past 600 lines on purpose: the visitor, the helpers and the shared work
//! queue are one protocol (who lists which directory, who waits for whom), and its invariants
//! read best in one place.

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::io;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use super::ignore_rules::Rules;
pub(crate) use super::listing::Kind;
use super::listing::{self, Listing, Scratch};
use super::path_glob::PathGlob;
use crate::core::{ToolContext, ToolError};
use crate::env::{Last, Metadata, Roots, ToolContextExt, resolve_path};
use rustix::fs::{Mode, OFlags};

/// How many listed entries helpers may hold that the visitor has not reached yet (about
/// 200 bytes each).
const MAX_AHEAD: usize = 65_536;

/// How many entries the visitor takes alone before helpers start: a query that stops early
/// (or a small tree) pays for no thread.
const HELP_AFTER: usize = 2_048;

/// How many entries the visitor takes between two looks at the cancellation token.
const CANCEL_CHECK_EVERY: usize = 256;

/// The directory a walk starts from, held open: every directory below it is opened
/// relative to this handle, through no symbolic link.
#[derive(Debug)]
pub(crate) struct WalkBase {
    /// Its absolute path.
    pub path: PathBuf,
    /// The open directory.
    pub fd: OwnedFd,
}

impl WalkBase {
    /// Opens `path` (a directory) through `roots`: inside them when they confine.
    pub(crate) fn open(roots: &Roots, path: &Path) -> io::Result<WalkBase> {
        let path = std::path::absolute(path)?;
        let fd = roots.open(
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
            Last::Follow,
        )?;
        Ok(WalkBase { path, fd })
    }
}

/// One path the walk yields (never the root itself), borrowed for the visit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkEntry<'a> {
    /// The path relative to the walk's root, with `/` separators.
    pub rel: &'a str,
    /// Whether the entry is a directory (symlinks are not followed).
    pub is_dir: bool,
    /// What the entry is.
    pub kind: Kind,
    dir: &'a Path,
    name: &'a OsStr,
}

impl WalkEntry<'_> {
    /// The path as the file system knows it.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.join(self.name)
    }
}

/// What a search could not read: how many, and the first few relative paths (with why).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// How many could not be read.
    pub count: usize,
    /// The first [`Skipped::SHOWN`] of them, as `path (reason)`.
    pub first: Vec<String>,
}

impl Skipped {
    /// How many skipped paths a result names.
    pub(crate) const SHOWN: usize = 5;

    /// Notes one more.
    pub(crate) fn note(&mut self, rel: &str, reason: &str) {
        self.count += 1;
        if self.first.len() < Self::SHOWN {
            let rel = if rel.is_empty() { "." } else { rel };
            self.first.push(format!("{rel} ({reason})"));
        }
    }

    /// A sentence (without its full stop) for the end of a result, naming the skipped
    /// things as `one` or `many`; `None` when nothing was skipped.
    pub(crate) fn notice(&self, one: &str, many: &str) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let more = self.count - self.first.len();
        Some(format!(
            "{} {} could not be read and {} skipped: {}{}",
            self.count,
            if self.count == 1 { one } else { many },
            if self.count == 1 { "was" } else { "were" },
            self.first.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    }
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

/// Helper threads for a walk that has the machine to itself: one per core besides the
/// visitor's (at most 7).
pub(crate) fn spare_cores() -> usize {
    std::thread::available_parallelism().map_or(0, |n| n.get().saturating_sub(1).min(7))
}

/// Walks `root` in sorted order, calling `visit` for every file and directory below it that
/// the ignore rules let through and `only` (when given) matches. Unreadable entries are
/// skipped. `helpers` threads (0: none) list directories ahead of the visitor on a big
/// tree (and match them against `only`); the order is the same either way.
///
/// Directories that cannot be read are noted in `skipped`.
pub(crate) fn walk_sorted(
    root: &WalkBase,
    cancel: &CancellationToken,
    helpers: usize,
    only: Option<&PathGlob>,
    skipped: &mut Skipped,
    visit: impl FnMut(WalkEntry<'_>) -> ControlFlow<()>,
) -> WalkEnd {
    walk(root, cancel, helpers, HELP_AFTER, only, skipped, visit)
}

/// [`walk_sorted`], with helpers starting once the visitor has taken `help_after` entries.
fn walk(
    base: &WalkBase,
    cancel: &CancellationToken,
    helpers: usize,
    help_after: usize,
    only: Option<&PathGlob>,
    skipped: &mut Skipped,
    mut visit: impl FnMut(WalkEntry<'_>) -> ControlFlow<()>,
) -> WalkEnd {
    let root = base.path.clone();
    let rules = Rules::above(&root);
    let top = Arc::new(DirJob::new(root, String::new(), rules));
    let shared = Shared::new(helpers > 0, only, base);
    std::thread::scope(|scope| {
        // However the visit ends (even by a panic), the helpers are told to stop.
        let _finish = Finish(&shared);
        let start_helpers = || {
            for _ in 0..helpers {
                // A helper the system cannot start is simply missing: the visitor lists
                // whatever nobody else does.
                let _ = std::thread::Builder::new()
                    .name("pi-tools-walk".into())
                    .spawn_scoped(scope, || shared.help());
            }
        };
        if help_after == 0 {
            start_helpers();
        }
        let mut scratch = Scratch::default();
        let mut open = vec![Open::new(&shared, top, &mut scratch, skipped)];
        let mut visited = 0usize;
        while let Some(dir) = open.last_mut() {
            let Some(index) = dir.next_entry() else {
                open.pop();
                continue;
            };
            visited += 1;
            if visited.is_multiple_of(CANCEL_CHECK_EVERY) && cancel.is_cancelled() {
                return WalkEnd::Cancelled;
            }
            if visited == help_after {
                start_helpers();
            }
            let entry = dir.listed.listing.entry(index);
            if entry.selected {
                let entry = WalkEntry {
                    rel: entry.rel,
                    is_dir: entry.is_dir,
                    kind: entry.kind,
                    dir: &dir.job.path,
                    name: entry.name,
                };
                if visit(entry).is_break() {
                    return WalkEnd::Stopped;
                }
            }
            if entry.is_dir {
                let job = dir.next_dir();
                if cancel.is_cancelled() {
                    return WalkEnd::Cancelled;
                }
                open.push(Open::new(&shared, job, &mut scratch, skipped));
            }
        }
        WalkEnd::Completed
    })
}

/// A directory the visitor is going through.
struct Open {
    job: Arc<DirJob>,
    listed: Listed,
    next: usize,
    next_dir: usize,
}

impl Open {
    fn new(
        shared: &Shared<'_>,
        job: Arc<DirJob>,
        scratch: &mut Scratch,
        skipped: &mut Skipped,
    ) -> Open {
        let listed = shared.listing(&job, scratch);
        if listed.listing.unreadable {
            skipped.note(&job.rel, "directory not readable");
        }
        Open {
            job,
            listed,
            next: 0,
            next_dir: 0,
        }
    }

    fn next_entry(&mut self) -> Option<usize> {
        let index = self.next;
        (index < self.listed.listing.len()).then(|| {
            self.next += 1;
            index
        })
    }

    /// The job of the next subdirectory, in listing order.
    fn next_dir(&mut self) -> Arc<DirJob> {
        let job = Arc::clone(&self.listed.dirs[self.next_dir]);
        self.next_dir += 1;
        job
    }
}

/// A directory to list.
struct DirJob {
    path: PathBuf,
    rel: String,
    /// The rules in force in the directory holding this one.
    rules: Option<Arc<Rules>>,
    state: AtomicU8,
    listing: Mutex<Option<Listed>>,
}

const PENDING: u8 = 0;
const CLAIMED: u8 = 1;
const LISTED: u8 = 2;

impl DirJob {
    fn new(path: PathBuf, rel: String, rules: Option<Arc<Rules>>) -> DirJob {
        DirJob {
            path,
            rel,
            rules,
            state: AtomicU8::new(PENDING),
            listing: Mutex::new(None),
        }
    }

    /// Takes the job; false when another thread already has.
    fn claim(&self) -> bool {
        self.state
            .compare_exchange(PENDING, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn is_listed(&self) -> bool {
        self.state.load(Ordering::Acquire) == LISTED
    }

    /// Lists the directory: its entries (see [`listing::list`]), and a job for each
    /// subdirectory among them, in order.
    fn list(&self, base: &WalkBase, only: Option<&PathGlob>, scratch: &mut Scratch) -> Listed {
        let listing = listing::list(
            base,
            &self.path,
            &self.rel,
            self.rules.clone(),
            only,
            scratch,
        );
        let dirs = (0..listing.len())
            .map(|i| listing.entry(i))
            .filter(|entry| entry.is_dir)
            .map(|entry| {
                Arc::new(DirJob::new(
                    self.path.join(entry.name),
                    entry.rel.to_owned(),
                    listing.rules.clone(),
                ))
            })
            .collect();
        Listed { listing, dirs }
    }
}

/// A directory's listing and the jobs of its subdirectories.
#[derive(Default)]
struct Listed {
    listing: Listing,
    dirs: Vec<Arc<DirJob>>,
}

/// What the visitor and the helpers share.
struct Shared<'g> {
    /// Whether helpers run (otherwise nothing is queued for them).
    helped: bool,
    /// The glob that selects the entries to visit.
    only: Option<&'g PathGlob>,
    /// Where the walk starts.
    base: &'g WalkBase,
    work: Mutex<Work>,
    /// Helpers wait here for work or for room ahead.
    work_moved: Condvar,
    listed_lock: Mutex<()>,
    /// The visitor waits here for a helper's listing.
    listed: Condvar,
}

struct Work {
    /// Directories found and not yet listed, in walk order from back to front: the last
    /// one the walk will reach is at the front, where helpers take from.
    found: VecDeque<Arc<DirJob>>,
    /// Entries listed by helpers that the visitor has not taken yet.
    ahead: usize,
    /// Helpers waiting for work or for room ahead.
    idle: usize,
    /// The walk is over; helpers leave.
    over: bool,
}

/// Ends the walk for the helpers when dropped.
struct Finish<'a, 'g>(&'a Shared<'g>);

impl Drop for Finish<'_, '_> {
    fn drop(&mut self) {
        lock(&self.0.work).over = true;
        self.0.work_moved.notify_all();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'g> Shared<'g> {
    fn new(helped: bool, only: Option<&'g PathGlob>, base: &'g WalkBase) -> Shared<'g> {
        Shared {
            helped,
            only,
            base,
            work: Mutex::new(Work {
                found: VecDeque::new(),
                ahead: 0,
                idle: 0,
                over: false,
            }),
            work_moved: Condvar::new(),
            listed_lock: Mutex::new(()),
            listed: Condvar::new(),
        }
    }

    /// A helper: lists the last unlisted directory, again and again, until the walk is over.
    fn help(&self) {
        let mut scratch = Scratch::default();
        loop {
            let job = {
                let mut work = lock(&self.work);
                loop {
                    if work.over {
                        return;
                    }
                    if work.ahead < MAX_AHEAD
                        && let Some(job) = work.found.pop_front()
                    {
                        break job;
                    }
                    work.idle += 1;
                    work = self
                        .work_moved
                        .wait(work)
                        .unwrap_or_else(PoisonError::into_inner);
                    work.idle -= 1;
                }
            };
            if !job.claim() {
                continue;
            }
            // The visitor may be waiting for this listing: even a panic must not leave the
            // job claimed and unlisted (the directory then lists as empty).
            let listed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                job.list(self.base, self.only, &mut scratch)
            }))
            .unwrap_or_default();
            {
                // Its subdirectories are now the last of the walk: front, last first.
                let mut work = lock(&self.work);
                work.ahead += listed.listing.len();
                let before = work.found.len();
                for dir in &listed.dirs {
                    work.found.push_front(Arc::clone(dir));
                }
                let wake = work.idle > 0 && work.found.len() > before;
                drop(work);
                if wake {
                    self.work_moved.notify_all();
                }
            }
            *lock(&job.listing) = Some(listed);
            job.state.store(LISTED, Ordering::Release);
            drop(lock(&self.listed_lock));
            self.listed.notify_all();
        }
    }

    /// The visitor: `job`'s listing, made here unless a helper has it.
    fn listing(&self, job: &DirJob, scratch: &mut Scratch) -> Listed {
        if job.claim() {
            let listed = job.list(self.base, self.only, scratch);
            if self.helped && !listed.dirs.is_empty() {
                // The visitor reaches these next: back of the queue, first last.
                let mut work = lock(&self.work);
                work.found.extend(listed.dirs.iter().rev().map(Arc::clone));
                let wake = work.idle > 0;
                drop(work);
                if wake {
                    self.work_moved.notify_all();
                }
            }
            return listed;
        }
        if !job.is_listed() {
            let mut guard = lock(&self.listed_lock);
            while !job.is_listed() {
                guard = self
                    .listed
                    .wait(guard)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        let listed = lock(&job.listing).take().unwrap_or_default();
        let mut work = lock(&self.work);
        work.ahead -= listed.listing.len();
        let wake = work.idle > 0 && work.ahead < MAX_AHEAD;
        drop(work);
        if wake {
            self.work_moved.notify_all();
        }
        listed
    }
}

/// Where grep and find start: `raw_path` (default `.`) resolved against the env's cwd, with
/// its metadata and the env's allowed roots held open (the search opens everything through
/// them). Both walk the file system in-process, so the env must be local; `elsewhere`
/// finishes the sentence that says what to do instead.
pub(crate) async fn search_root(
    ctx: &ToolContext,
    tool: &str,
    raw_path: Option<&str>,
    elsewhere: &str,
) -> Result<(PathBuf, Metadata, Arc<Roots>), ToolError> {
    let env = ctx.env();
    if !env.is_local() {
        return Err(ToolError::new(format!(
            "{tool} reads the local file system, but this execution environment is not local. {elsewhere}"
        )));
    }
    let raw_path = raw_path.unwrap_or(".");
    let (root, meta) = resolve_root(env.as_ref(), raw_path).await?;
    let mut roots = Roots::default();
    for allowed in env.allowed_roots() {
        roots
            .add(allowed.clone())
            .map_err(|e| ToolError::new(format!("Cannot search `{raw_path}`: {}", sentence(&e))))?;
    }
    Ok((root, meta, Arc::new(roots)))
}

/// The absolute path a search of `raw_path` starts from in `env`, and what it is.
pub(crate) async fn resolve_root(
    env: &dyn crate::env::ExecutionEnv,
    raw_path: &str,
) -> Result<(PathBuf, Metadata), ToolError> {
    let root = resolve_path(env, raw_path);
    let meta = env.metadata(&root).await.map_err(|e| {
        ToolError::new(format!(
            "Cannot search `{raw_path}`: {} Check the path, or omit it to search the current directory.",
            sentence(&e)
        ))
    })?;
    Ok((root, meta))
}

/// An error's text as the end of a sentence: exactly one final period.
pub(crate) fn sentence(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    format!("{}.", text.trim_end().trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str) -> PathGlob {
        PathGlob::new(p).expect("valid glob")
    }

    fn base(path: &Path) -> WalkBase {
        WalkBase::open(&Roots::default(), path).expect("open the walk's root")
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

    /// A relative path as text with `/` separators.
    fn relative_string(rel: &Path) -> String {
        let text = rel.to_string_lossy();
        if std::path::MAIN_SEPARATOR == '/' {
            text.into_owned()
        } else {
            text.replace(std::path::MAIN_SEPARATOR, "/")
        }
    }

    fn collect(
        root: &Path,
        helpers: usize,
        help_after: usize,
        stop_after: Option<usize>,
    ) -> (Vec<(String, bool)>, WalkEnd) {
        let mut seen = Vec::new();
        let end = walk(
            &base(root),
            &CancellationToken::new(),
            helpers,
            help_after,
            None,
            &mut Skipped::default(),
            |e| {
                assert_eq!(e.path(), root.join(e.rel), "path and rel agree");
                seen.push((e.rel.to_owned(), e.is_dir));
                if stop_after.is_some_and(|n| seen.len() >= n) {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        (seen, end)
    }

    /// The same walk by ripgrep's own sorted walker, configured as ours behaves.
    fn oracle(root: &Path) -> Vec<(String, bool)> {
        let mut builder = ignore::WalkBuilder::new(root);
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
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.depth() > 0)
            .map(|e| {
                let rel = relative_string(e.path().strip_prefix(root).expect("below root"));
                (rel, e.file_type().is_some_and(|t| t.is_dir()))
            })
            .collect()
    }

    #[test]
    fn every_helper_count_walks_exactly_as_ripgreps_sorted_walker() {
        let top = deep_tree();
        let root = top.path().join("root");
        let expected = oracle(&root);
        assert!(expected.len() > 500, "{}", expected.len());
        for helpers in [0, 1, 2, 3, 8] {
            for help_after in [0, 1, 100] {
                let (seen, end) = collect(&root, helpers, help_after, None);
                assert_eq!(end, WalkEnd::Completed);
                assert_eq!(seen, expected, "{helpers} helpers after {help_after}");
            }
        }
        // Below the top too, where the rules of the directories above still apply.
        let sub = root.join("d1");
        let (seen, _) = collect(&sub, 2, 0, None);
        assert_eq!(seen, oracle(&sub));
    }

    /// On a real tree: `PI_TOOLS_CORPUS=<dir> cargo test -p pi-tools --lib -- --ignored corpus`.
    #[test]
    #[ignore = "needs PI_TOOLS_CORPUS (see scripts/bench-search.sh)"]
    fn the_corpus_is_walked_exactly_as_ripgreps_sorted_walker() {
        let root = PathBuf::from(std::env::var("PI_TOOLS_CORPUS").expect("PI_TOOLS_CORPUS"));
        let expected = oracle(&root);
        assert!(!expected.is_empty(), "the corpus is empty");
        for helpers in [0, 1, 3] {
            let (seen, _) = collect(&root, helpers, 0, None);
            assert_eq!(seen.len(), expected.len());
            assert!(seen == expected, "{helpers} helpers");
        }
    }

    #[test]
    fn a_glob_selects_what_is_visited_and_the_rest_is_still_walked() {
        let top = deep_tree();
        let root = top.path().join("root");
        for pattern in ["**/tests/**/*.rs", "*.log", "e1/", "/d0/e0/*"] {
            let glob = glob(pattern);
            let expected: Vec<_> = oracle(&root)
                .into_iter()
                .filter(|(rel, is_dir)| glob.is_match(rel, *is_dir))
                .collect();
            assert!(!expected.is_empty(), "{pattern}");
            for helpers in [0, 2] {
                let mut seen = Vec::new();
                walk(
                    &base(&root),
                    &CancellationToken::new(),
                    helpers,
                    0,
                    Some(&glob),
                    &mut Skipped::default(),
                    |e| {
                        seen.push((e.rel.to_owned(), e.is_dir));
                        ControlFlow::Continue(())
                    },
                );
                assert_eq!(seen, expected, "{pattern} with {helpers} helpers");
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn names_that_are_not_utf8_keep_their_bytes_in_the_path() {
        use std::os::unix::ffi::OsStrExt;
        let top = tempfile::tempdir().expect("tempdir");
        let odd = OsStr::from_bytes(b"caf\xe9");
        std::fs::create_dir(top.path().join(odd)).expect("mkdir");
        std::fs::write(top.path().join(odd).join("x.txt"), "x").expect("write");
        std::fs::write(top.path().join("b.txt"), "b").expect("write");
        std::fs::write(top.path().join(OsStr::from_bytes(b"z\xff.txt")), "z").expect("write");
        std::fs::write(top.path().join("d.txt"), "d").expect("write");
        let mut seen = Vec::new();
        let root = base(top.path());
        let skipped = &mut Skipped::default();
        walk(&root, &CancellationToken::new(), 0, 0, None, skipped, |e| {
            assert!(std::fs::symlink_metadata(e.path()).is_ok(), "{}", e.rel);
            seen.push(e.rel.to_owned());
            ControlFlow::Continue(())
        });
        assert_eq!(
            seen,
            [
                "b.txt",
                "caf\u{fffd}",
                "caf\u{fffd}/x.txt",
                "d.txt",
                "z\u{fffd}.txt"
            ]
        );
    }

    #[test]
    fn a_cancelled_walk_stops_and_says_so() {
        let top = deep_tree();
        let cancel = CancellationToken::new();
        let mut seen = 0;
        let root = base(&top.path().join("root"));
        let skipped = &mut Skipped::default();
        let end = walk(&root, &cancel, 2, 0, None, skipped, |_| {
            seen += 1;
            if seen == 10 {
                cancel.cancel();
            }
            ControlFlow::Continue(())
        });
        assert_eq!(end, WalkEnd::Cancelled);
        assert!(seen < 10 + CANCEL_CHECK_EVERY, "{seen}");
    }

    #[test]
    fn a_git_worktree_file_leads_to_the_common_exclude_file() {
        let top = tempfile::tempdir().expect("tempdir");
        let main = top.path().join("main");
        std::fs::create_dir_all(main.join(".git/info")).expect("mkdir");
        std::fs::write(main.join(".git/info/exclude"), "*.tmp\n").expect("write");
        let admin = main.join(".git/worktrees/wt");
        std::fs::create_dir_all(&admin).expect("mkdir");
        std::fs::write(admin.join("commondir"), "../..\n").expect("write");
        let wt = top.path().join("wt");
        std::fs::create_dir_all(&wt).expect("mkdir");
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).expect("write");
        std::fs::write(wt.join("a.tmp"), "x").expect("write");
        std::fs::write(wt.join("b.rs"), "x").expect("write");
        let (seen, _) = collect(&wt, 1, 0, None);
        assert_eq!(seen, vec![("b.rs".to_string(), false)]);
    }

    #[test]
    fn a_deep_tree_is_walked_sorted_with_every_ignore_rule_and_the_same_twice() {
        let top = deep_tree();
        let root = top.path().join("root");
        let (first, end) = collect(&root, 2, 0, None);
        assert_eq!(end, WalkEnd::Completed);
        let rels: Vec<&str> = first.iter().map(|(r, _)| r.as_str()).collect();
        assert!(rels.contains(&".hidden"));
        assert!(rels.contains(&"d0/e0/f0/keep.log"), "negated in .gitignore");
        assert!(rels.contains(&"d0/e0/f1/y.log"), "re-included by .ignore");
        assert!(rels.contains(&"Build/out.rs"));
        assert!(
            rels.contains(&"d0/e0/f2/build/b.rs"),
            "`/build/` is anchored"
        );
        assert!(rels.contains(&"d0/e0/f1/g/h/j.txt"));
        #[cfg(unix)]
        assert!(
            first.contains(&("link".to_string(), false)),
            "symlinks not followed"
        );
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
        // Depth first, each directory's entries sorted by name.
        let pos = |r: &str| rels.iter().position(|x| *x == r).expect(r);
        assert!(pos("d0/e4/f3/x.rs") < pos("d1"));
        assert!(pos("d0/e0/f0/keep.log") < pos("d0/e0/f0/tests"));
        assert!(pos("d0/e0/f0/tests/t0.rs") < pos("d0/e0/f0/x.rs"));
        let (second, _) = collect(&root, 1, 0, None);
        assert_eq!(first, second);
        for n in [1, 100, first.len() - 1] {
            let (prefix, end) = collect(&root, 2, 0, Some(n));
            assert_eq!(end, WalkEnd::Stopped);
            assert_eq!(prefix, first[..n]);
        }
    }
}
