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
//! The visitor, the helpers and the shared work queue are one protocol (who lists which
//! directory, who waits for whom), kept in this one file so its invariants read in one place;
//! its tests are in `tests.rs`.

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
use super::skipped::Skipped;
use crate::env::local::{Last, Roots};
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

#[cfg(test)]
mod tests;
