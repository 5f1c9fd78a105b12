//! What changed under the index since it last looked, from the kernel's file notifications
//! (inotify, one watch per directory the walk enters).
//!
//! No thread reads the notifications: the search itself drains them (non-blocking) before
//! it looks at the index. The kernel queues a notification within the system call that
//! made the change, so every change that finished before the search began is in the queue
//! when the search drains it. When notifications are unavailable, or the queue overflowed
//! (more changes between two searches than the kernel keeps, 16,384 by default), the index
//! falls back to walking the tree and comparing every file's identity.
//!
//! # Why inotify through rustix, not the `notify` crate
//!
//! `notify` (8.x) resolves and carries watching to other systems, but its inotify watcher
//! cannot give the index what it relies on:
//! - **A drain before the search looks.** Its watcher reads the queue on a thread of its own
//!   (a `mio` loop per watcher) and hands events to a callback or channel. A change that
//!   finished before the search began may still be in the kernel's queue or on that thread,
//!   so draining the channel would not promise a fresh result; reading the queue here, in
//!   the search's own call, does. It also takes a thread and three descriptors (the
//!   instance, an epoll and a waker) per watcher, where this takes the instance alone.
//! - **The events asked for.** Its mask is fixed and includes `IN_OPEN`: every file opened
//!   for reading anywhere in the tree (a build, `git status`, the search's own reads) would
//!   queue an event. Here the mask is what the index needs, with `IN_ONLYDIR`,
//!   `IN_DONT_FOLLOW` and `IN_EXCL_UNLINK`.
//! - **Names the walk chose.** It names events by the path the watch was added with, and
//!   its recursive mode walks on its own following links; here the walk that indexes also
//!   watches, and a watch descriptor maps to the relative name the index keys by.
//!
//! Other systems have no notifications here: the index walks and compares instead, which
//! is what it does after an overflow anyway.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// More recorded changes than this and the index walks instead.
const MAX_CHANGES: usize = 50_000;

/// A change: a path relative to the index's root, and what happened to it.
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

/// What happened since the index last looked.
#[derive(Default)]
pub(crate) struct Pending {
    /// Changes, in the order they happened.
    pub changes: Vec<Change>,
    /// Something happened that the changes do not describe: walk the whole tree.
    pub rescan: bool,
}

#[derive(Default)]
struct Watched {
    by_wd: HashMap<i32, Box<str>>,
    by_rel: HashMap<Box<str>, i32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The notifications of one index.
pub(crate) struct Watcher {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    /// Watched directories: watch descriptor to path relative to the root, and back.
    dirs: Mutex<Watched>,
}

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
    /// A watcher with no directory yet; `None` where the system has no notifications.
    #[cfg(target_os = "linux")]
    pub(crate) fn start() -> Option<Watcher> {
        use rustix::fs::inotify::{CreateFlags, init};
        let fd = init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Watcher {
            fd,
            dirs: Mutex::new(Watched::default()),
        })
    }

    /// No notifications on this system.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn start() -> Option<Watcher> {
        None
    }

    /// Watches the directory at `path` (`rel` under the root). Asked again for a directory
    /// already watched, the kernel gives back the same descriptor; a directory put in the
    /// place of a removed one (whose last notification may not have come yet) gets a new
    /// one.
    #[cfg(target_os = "linux")]
    pub(crate) fn watch(&self, rel: &str, path: &Path) -> io::Result<()> {
        let wd = rustix::fs::inotify::add_watch(&self.fd, path, mask())?;
        let mut dirs = lock(&self.dirs);
        // The same directory under another name (moved) shares the descriptor: the newest
        // name wins, and the old name is dropped.
        if let Some(old) = dirs.by_wd.insert(wd, rel.into())
            && *old != *rel
            && dirs.by_rel.get(&old) == Some(&wd)
        {
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
    pub(crate) fn keep_only(&self, keep: &HashSet<Box<str>>) {
        let mut dirs = lock(&self.dirs);
        let gone: Vec<(Box<str>, i32)> = dirs
            .by_rel
            .iter()
            .filter(|(rel, _)| !keep.contains(*rel))
            .map(|(rel, wd)| (rel.clone(), *wd))
            .collect();
        for (rel, wd) in gone {
            dirs.by_rel.remove(&rel);
            dirs.by_wd.remove(&wd);
            #[cfg(target_os = "linux")]
            let _ = rustix::fs::inotify::remove_watch(&self.fd, wd);
        }
    }

    /// Everything the kernel has queued: every change that finished before this call.
    #[cfg(target_os = "linux")]
    pub(crate) fn take(&self) -> Pending {
        use rustix::fs::inotify::{ReadFlags as R, Reader};
        let mut pending = Pending::default();
        let mut buf = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 << 10];
        let mut reader = Reader::new(&self.fd, &mut buf);
        let mut dirs = lock(&self.dirs);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::AGAIN) => return pending,
                Err(_) => {
                    pending.rescan = true;
                    return pending;
                }
            };
            let flags = event.events();
            if flags.contains(R::QUEUE_OVERFLOW) {
                pending.rescan = true;
                continue;
            }
            let Some(dir) = dirs.by_wd.get(&event.wd()).cloned() else {
                // A watch just removed (its last word), or one not known: when not the
                // former, nothing says what changed.
                if !flags.contains(R::IGNORED) {
                    pending.rescan = true;
                }
                continue;
            };
            if flags.intersects(R::IGNORED | R::DELETE_SELF | R::MOVE_SELF | R::UNMOUNT) {
                if flags.contains(R::IGNORED) {
                    dirs.by_wd.remove(&event.wd());
                    if dirs.by_rel.get(&dir) == Some(&event.wd()) {
                        dirs.by_rel.remove(&dir);
                    }
                }
                pending.rescan = true;
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
                pending.rescan = true;
                continue;
            };
            if pending.rescan {
                continue;
            }
            if pending.changes.len() >= MAX_CHANGES {
                pending.rescan = true;
                pending.changes = Vec::new();
                continue;
            }
            pending.changes.push(Change {
                rel: if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                },
                in_place: flags.intersects(R::MODIFY | R::ATTRIB | R::CLOSE_WRITE),
                gone: flags.intersects(R::DELETE | R::MOVED_FROM),
                is_dir: flags.contains(R::ISDIR),
            });
        }
    }

    /// No notifications on this system.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn take(&self) -> Pending {
        Pending {
            changes: Vec::new(),
            rescan: true,
        }
    }
}
