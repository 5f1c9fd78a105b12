//! What changed under the index since it last looked, from the kernel's file notifications
//! (inotify, one watch per directory the walk enters), and a barrier that makes sure every
//! change made before a search has been seen when the search starts.
//!
//! The barrier: the watcher also watches a private file of its own (created in the temporary
//! directory and unlinked at once, so nothing is left behind); before a search, a byte is
//! written to it, and the search waits until the watcher thread has seen that write. The kernel queues one watcher's events in the order they happened, so by then
//! every change that finished before the search began has been recorded. When notifications
//! are unavailable, overflow, or the barrier does not come back in time, the index falls
//! back to walking the tree and comparing every file's identity.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long a search waits for its barrier before it trusts nothing and walks the tree.
const BARRIER_WAIT: Duration = Duration::from_secs(2);

/// More recorded changes than this and the watcher asks for a walk instead.
const MAX_CHANGES: usize = 50_000;

/// A change the watcher saw: a path relative to the index's root, and what happened.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    /// The path relative to the root.
    pub rel: String,
    /// The content changed in place (written, truncated, its mode changed); otherwise the
    /// name was created, removed or moved.
    pub in_place: bool,
    /// The name was removed or moved away.
    pub gone: bool,
    /// The path is a directory.
    pub is_dir: bool,
}

/// What the watcher has recorded since the index last took it.
#[derive(Default)]
pub(crate) struct Pending {
    /// Changes, in the order they happened.
    pub changes: Vec<Change>,
    /// Something happened that the changes do not describe: walk the whole tree.
    pub rescan: bool,
}

struct Shared {
    pending: Mutex<Pending>,
    /// Watched directories: watch descriptor to path relative to the root.
    dirs: Mutex<Watched>,
    barriers: Mutex<u64>,
    barrier_seen: Condvar,
    stop: AtomicBool,
}

#[derive(Default)]
struct Watched {
    by_wd: HashMap<i32, Box<str>>,
    by_rel: HashMap<Box<str>, i32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The watcher of one index.
pub(crate) struct Watcher {
    #[cfg(target_os = "linux")]
    fd: Arc<std::os::fd::OwnedFd>,
    shared: Arc<Shared>,
    /// The private file written to as a barrier (already unlinked).
    barrier: std::fs::File,
}

static BARRIER_FILES: AtomicU64 = AtomicU64::new(0);

#[cfg(target_os = "linux")]
fn mask() -> rustix::fs::inotify::WatchFlags {
    use rustix::fs::inotify::WatchFlags as W;
    W::MODIFY
        | W::ATTRIB
        | W::CLOSE_WRITE
        | W::CREATE
        | W::DELETE
        | W::MOVED_FROM
        | W::MOVED_TO
        | W::DELETE_SELF
        | W::MOVE_SELF
        | W::ONLYDIR
        | W::DONT_FOLLOW
        | W::EXCL_UNLINK
}

impl Watcher {
    /// Starts a watcher (with its thread and barrier directory); `None` where the system
    /// has no notifications for it.
    #[cfg(target_os = "linux")]
    pub(crate) fn start() -> Option<Watcher> {
        use rustix::fs::inotify;
        let fd = Arc::new(inotify::init(inotify::CreateFlags::CLOEXEC).ok()?);
        let path = std::env::temp_dir().join(format!(
            ".pi-tools-index-{}-{}",
            std::process::id(),
            BARRIER_FILES.fetch_add(1, Ordering::Relaxed)
        ));
        let barrier = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .ok()?;
        let watched = inotify::add_watch(&*fd, &path, inotify::WatchFlags::MODIFY);
        let _ = std::fs::remove_file(&path);
        let barrier_wd = watched.ok()?;
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            dirs: Mutex::new(Watched::default()),
            barriers: Mutex::new(0),
            barrier_seen: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let watcher = Watcher {
            fd: Arc::clone(&fd),
            shared: Arc::clone(&shared),
            barrier,
        };
        std::thread::Builder::new()
            .name("pi-tools-index-watch".into())
            .spawn(move || read_events(&fd, &shared, barrier_wd))
            .ok()?;
        Some(watcher)
    }

    /// No notifications on this system.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn start() -> Option<Watcher> {
        None
    }

    /// Watches the directory at `path` (`rel` under the root), unless it is watched already.
    #[cfg(target_os = "linux")]
    pub(crate) fn watch(&self, rel: &str, path: &Path) -> io::Result<()> {
        if lock(&self.shared.dirs).by_rel.contains_key(rel) {
            return Ok(());
        }
        let wd = rustix::fs::inotify::add_watch(&*self.fd, path, mask())?;
        let mut dirs = lock(&self.shared.dirs);
        // The same directory under another name (moved) shares the descriptor: the newest
        // name wins, and the old name is dropped.
        if let Some(old) = dirs.by_wd.insert(wd, rel.into()) {
            dirs.by_rel.remove(&old);
        }
        dirs.by_rel.insert(rel.into(), wd);
        Ok(())
    }

    /// No notifications on this system.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn watch(&self, _rel: &str, _path: &Path) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// Stops watching directories the walk no longer enters.
    pub(crate) fn keep_only(&self, keep: &std::collections::HashSet<Box<str>>) {
        let gone: Vec<(Box<str>, i32)> = lock(&self.shared.dirs)
            .by_rel
            .iter()
            .filter(|(rel, _)| !keep.contains(*rel))
            .map(|(rel, wd)| (rel.clone(), *wd))
            .collect();
        for (rel, wd) in gone {
            let mut dirs = lock(&self.shared.dirs);
            dirs.by_rel.remove(&rel);
            dirs.by_wd.remove(&wd);
            drop(dirs);
            #[cfg(target_os = "linux")]
            let _ = rustix::fs::inotify::remove_watch(&*self.fd, wd);
        }
    }

    /// Waits until every change made before this call has been recorded; false when the
    /// watcher could not show that in time (then nothing it recorded can be trusted).
    pub(crate) fn sync(&self) -> bool {
        if self.is_dead() {
            return false;
        }
        let before = *lock(&self.shared.barriers);
        if self.poke().is_err() {
            return false;
        }
        let seen = lock(&self.shared.barriers);
        let (seen, _) = self
            .shared
            .barrier_seen
            .wait_timeout_while(seen, BARRIER_WAIT, |n| *n == before)
            .unwrap_or_else(PoisonError::into_inner);
        *seen != before && !self.shared.stop.load(Ordering::Relaxed)
    }

    /// Whether the watcher thread has stopped (its notifications could not be read).
    pub(crate) fn is_dead(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    /// Writes a byte to the barrier file.
    fn poke(&self) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.barrier.write_at(b"x", 0).map(drop)
    }

    /// Takes what was recorded.
    pub(crate) fn take(&self) -> Pending {
        std::mem::take(&mut *lock(&self.shared.pending))
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        // Wakes the thread, which then sees `stop` and leaves.
        let _ = self.poke();
    }
}

/// The watcher thread: records every event until the watcher is dropped.
#[cfg(target_os = "linux")]
fn read_events(fd: &std::os::fd::OwnedFd, shared: &Shared, barrier_wd: i32) {
    use rustix::fs::inotify::{ReadFlags as R, Reader};
    let mut buf = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 << 10];
    let mut reader = Reader::new(fd, &mut buf);
    loop {
        let event = match reader.next() {
            Ok(event) => event,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => {
                lock(&shared.pending).rescan = true;
                shared.stop.store(true, Ordering::Relaxed);
                shared.barrier_seen.notify_all();
                return;
            }
        };
        if shared.stop.load(Ordering::Relaxed) {
            shared.barrier_seen.notify_all();
            return;
        }
        let flags = event.events();
        if event.wd() == barrier_wd {
            *lock(&shared.barriers) += 1;
            shared.barrier_seen.notify_all();
            continue;
        }
        if flags.contains(R::QUEUE_OVERFLOW) {
            lock(&shared.pending).rescan = true;
            continue;
        }
        let dir = lock(&shared.dirs).by_wd.get(&event.wd()).cloned();
        let Some(dir) = dir else {
            // A directory no longer (or not yet) known: nothing says what changed.
            if !flags.contains(R::IGNORED) {
                lock(&shared.pending).rescan = true;
            }
            continue;
        };
        if flags.intersects(R::IGNORED | R::DELETE_SELF | R::MOVE_SELF | R::UNMOUNT) {
            let mut dirs = lock(&shared.dirs);
            if flags.contains(R::IGNORED) {
                dirs.by_wd.remove(&event.wd());
                dirs.by_rel.remove(&dir);
            }
            drop(dirs);
            lock(&shared.pending).rescan = true;
            continue;
        }
        let Some(name) = event.file_name() else {
            continue;
        };
        let name = name.to_bytes();
        // The writes' own temporary files never show in a search.
        if crate::env::is_temp_file_name(name) {
            continue;
        }
        let Ok(name) = std::str::from_utf8(name) else {
            // A name that is not UTF-8 is shown lossily: let a walk sort it out.
            lock(&shared.pending).rescan = true;
            continue;
        };
        let rel = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        let change = Change {
            rel,
            in_place: flags.intersects(R::MODIFY | R::ATTRIB | R::CLOSE_WRITE),
            gone: flags.intersects(R::DELETE | R::MOVED_FROM),
            is_dir: flags.contains(R::ISDIR),
        };
        let mut pending = lock(&shared.pending);
        if pending.changes.len() >= MAX_CHANGES {
            pending.rescan = true;
            pending.changes.clear();
        } else if !pending.rescan {
            pending.changes.push(change);
        }
    }
}
