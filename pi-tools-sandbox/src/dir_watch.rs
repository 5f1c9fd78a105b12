//! [`DirWatch`]: change notification (inotify) on the directories beneath the writable
//! roots, so that a `.git` made or moved in anywhere, or a directory that may hold one, is
//! learned of from the kernel's queue rather than by looking at every directory after
//! every call.
//!
//! A directory is watched through the handle the walk opened it with (`/proc/self/fd/N`),
//! never by its path, so a directory swapped for a link between the two is not followed.
//! Only what appears in a directory (made, or moved in) and what moves out of it is asked
//! for; a directory removed says so itself (its watch ends). What a watch saw is named by
//! the path the walk gave its directory: a directory moved inside the roots is forgotten
//! where it was and walked again where it is.
//!
//! # Why inotify through rustix, not the `notify` crate
//!
//! `notify` (8.x) resolves, but its inotify watcher cannot do what this watch is for:
//! - **By handle, not by path.** It adds a watch by the path it is given and stats that
//!   path (its recursive mode walks following links), so a directory swapped for a link
//!   between the walk and the watch would be followed. Given `/proc/self/fd/N` instead, it
//!   would name every event by that path, which means nothing once the walk's handle is
//!   closed.
//! - **Only entries appearing and leaving.** Its mask is fixed (`IN_OPEN`, `IN_MODIFY`,
//!   `IN_CLOSE_WRITE`, `IN_ATTRIB` among others), so every file a command opens or writes
//!   in the workspace (a build, `git status`) would queue an event for the guard to read
//!   and throw away, and fill the kernel's queue sooner (an overflow makes the guard look
//!   at every directory).
//! - **Read after the call, in the call.** The guard reads the queue when a command has
//!   ended and before it answers, so what the command did is all there; its watcher reads
//!   on a thread of its own (a `mio` loop, three descriptors and a thread per watcher),
//!   which gives no such point. Holding at most [`MAX_INSTANCES`] instances, one
//!   descriptor each, is also what keeps a server's descriptors within its bound.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;

/// What the queue said since it was last read, in its order.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum News {
    /// An entry appeared at this path (made, or moved in); `dir` when it is a directory.
    Appeared { path: PathBuf, dir: bool },
    /// The directory at this path moved away (what was beneath it is elsewhere now).
    Left(PathBuf),
    /// The kernel's queue overflowed: what happened since the last read is not known.
    Lost,
}

/// An inotify instance and the directories it watches.
#[derive(Debug)]
pub(super) struct DirWatch {
    fd: OwnedFd,
    /// Each watch's directory, by watch descriptor.
    paths: HashMap<i32, PathBuf>,
    /// Each watched directory's watch descriptor, by path.
    watches: HashMap<PathBuf, i32>,
    /// How many directories it may watch.
    limit: usize,
    /// Its place among the process's instances.
    _counted: Counted,
}

/// The most watches one session takes, and the share of the user's (the system's
/// `fs.inotify.max_user_watches`, which every program of the user draws on: an editor's
/// file watcher among them) it leaves to the others.
const MAX_WATCHES: usize = 65_536;
const SHARE_OF_USERS: usize = 4;

/// What the watches report: entries appearing and leaving; directories only.
fn mask() -> WatchFlags {
    WatchFlags::CREATE | WatchFlags::MOVED_TO | WatchFlags::MOVED_FROM | WatchFlags::ONLYDIR
}

/// The instances this process holds now, and the most it takes: a small share of the
/// user's (`fs.inotify.max_user_instances`, 128 by default, which an editor's watcher and
/// every other program of the user draw on), at most [`MAX_INSTANCES`]. Past it a session
/// looks at change times instead (see `git_nested.rs`); sleeping sessions hold none.
static INSTANCES: AtomicUsize = AtomicUsize::new(0);
const MAX_INSTANCES: usize = 16;
const SHARE_OF_USERS_INSTANCES: usize = 8;

fn instance_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let users = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances")
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok())
            .unwrap_or(128);
        (users / SHARE_OF_USERS_INSTANCES).clamp(1, MAX_INSTANCES)
    })
}

/// One of the process's instances, counted until dropped.
#[derive(Debug)]
struct Counted;

impl Counted {
    fn take() -> io::Result<Counted> {
        let limit = instance_limit();
        INSTANCES
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .map(|_| Counted)
            .map_err(|_| io::Error::from(io::ErrorKind::QuotaExceeded))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        INSTANCES.fetch_sub(1, Ordering::AcqRel);
    }
}

impl DirWatch {
    /// A new instance, or why there is none (the process's share of the user's instances,
    /// or all of them, are taken, or no `/proc` to name a handle by).
    pub(super) fn new() -> io::Result<DirWatch> {
        let counted = Counted::take()?;
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        if !Path::new("/proc/self/fd").is_dir() {
            return Err(io::Error::from(io::ErrorKind::Unsupported));
        }
        let users = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok())
            .unwrap_or(8192);
        Ok(DirWatch {
            fd,
            paths: HashMap::new(),
            watches: HashMap::new(),
            limit: MAX_WATCHES.min(users / SHARE_OF_USERS),
            _counted: counted,
        })
    }

    /// The same, watching at most `limit` directories.
    #[cfg(test)]
    pub(super) fn with_limit(limit: usize) -> io::Result<DirWatch> {
        Ok(DirWatch {
            limit,
            ..DirWatch::new()?
        })
    }

    /// Watches the directory open as `dir`, known as `path`. True when it was watched
    /// under that path already (the same directory: what is beneath it is known); an
    /// error when this session's share of the user's watches, or all of them, are taken.
    pub(super) fn add(&mut self, dir: BorrowedFd<'_>, path: &Path) -> io::Result<bool> {
        if self.watches.len() >= self.limit && !self.watches.contains_key(path) {
            return Err(io::Error::from(io::ErrorKind::QuotaExceeded));
        }
        let by_handle = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let wd = inotify::add_watch(&self.fd, by_handle, mask())?;
        if self.watches.get(path) == Some(&wd) {
            return Ok(true);
        }
        // The same directory under another name: the newest name is the one it has.
        if let Some(old) = self.paths.insert(wd, path.to_path_buf())
            && self.watches.get(&old) == Some(&wd)
        {
            self.watches.remove(&old);
        }
        self.watches.insert(path.to_path_buf(), wd);
        Ok(false)
    }

    /// Stops watching `path` and every directory beneath it.
    fn forget(&mut self, path: &Path) {
        let gone: Vec<PathBuf> = self
            .watches
            .keys()
            .filter(|p| p.starts_with(path))
            .cloned()
            .collect();
        for p in gone {
            if let Some(wd) = self.watches.remove(&p) {
                self.paths.remove(&wd);
                let _ = inotify::remove_watch(&self.fd, wd);
            }
        }
    }

    /// Stops watching everything (before a walk of the whole tree again).
    pub(super) fn clear(&mut self) {
        for (wd, _) in self.paths.drain() {
            let _ = inotify::remove_watch(&self.fd, wd);
        }
        self.watches.clear();
    }

    /// How many directories are watched.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.watches.len()
    }

    /// Everything the kernel queued since the last read: every change that finished
    /// before this call. A directory that moved away is forgotten here (its watches too).
    pub(super) fn take(&mut self) -> Vec<News> {
        let mut news = Vec::new();
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 << 10];
        loop {
            // The reader borrows the handle; what it says is kept as owned paths first.
            let mut batch: Vec<(i32, ReadFlags, Option<Vec<u8>>)> = Vec::new();
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            let done = loop {
                match reader.next() {
                    Ok(event) => batch.push((
                        event.wd(),
                        event.events(),
                        event.file_name().map(|n| n.to_bytes().to_vec()),
                    )),
                    Err(Errno::INTR) => {}
                    Err(Errno::AGAIN) => break true,
                    Err(_) => {
                        batch.push((-1, ReadFlags::QUEUE_OVERFLOW, None));
                        break true;
                    }
                }
                if batch.len() >= 4096 {
                    break false;
                }
            };
            for (wd, flags, name) in batch {
                self.note(&mut news, wd, flags, name.as_deref());
            }
            if done {
                return news;
            }
        }
    }

    fn note(&mut self, news: &mut Vec<News>, wd: i32, flags: ReadFlags, name: Option<&[u8]>) {
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            news.push(News::Lost);
            return;
        }
        if flags.contains(ReadFlags::IGNORED) {
            // The directory is gone (or its watch was removed here).
            if let Some(path) = self.paths.remove(&wd)
                && self.watches.get(&path) == Some(&wd)
            {
                self.watches.remove(&path);
            }
            return;
        }
        // A watch forgotten here: what happens beneath it now is found by walking it
        // where it went, if that is inside the roots.
        let (Some(dir), Some(name)) = (self.paths.get(&wd), name) else {
            return;
        };
        let path = dir.join(OsStr::from_bytes(name));
        let is_dir = flags.contains(ReadFlags::ISDIR);
        if flags.contains(ReadFlags::MOVED_FROM) {
            if is_dir {
                self.forget(&path);
                news.push(News::Left(path));
            }
            return;
        }
        news.push(News::Appeared { path, dir: is_dir });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn open(path: &Path) -> OwnedFd {
        crate::nofollow::open_dir(path).expect("open")
    }

    #[test]
    fn what_appears_and_leaves_is_reported_by_the_path_the_walk_gave() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir(root.join("a")).expect("a");
        let mut watch = DirWatch::new().expect("inotify");
        assert!(!watch.add(open(&root).as_fd(), &root).expect("watch"));
        assert!(
            !watch
                .add(open(&root.join("a")).as_fd(), &root.join("a"))
                .expect("watch")
        );
        // The same directory again: known.
        assert!(watch.add(open(&root).as_fd(), &root).expect("watch"));
        assert_eq!(watch.take(), []);

        std::fs::create_dir(root.join("a/.git")).expect(".git");
        std::fs::write(root.join("f"), "").expect("file");
        std::fs::rename(root.join("a"), root.join("b")).expect("move");
        std::fs::create_dir(root.join("b/c")).expect("beneath the moved one");
        assert_eq!(
            watch.take(),
            [
                News::Appeared {
                    path: root.join("a/.git"),
                    dir: true
                },
                News::Appeared {
                    path: root.join("f"),
                    dir: false
                },
                News::Left(root.join("a")),
                News::Appeared {
                    path: root.join("b"),
                    dir: true
                },
            ]
        );
        // The moved directory's watch was forgotten: `b/c` is for a walk of `b` to find.
        assert_eq!(watch.len(), 1);
        std::fs::remove_dir(root.join("b/c")).expect("rmdir");
        assert_eq!(watch.take(), []);
    }

    #[test]
    fn a_removed_directory_ends_its_watch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir(root.join("a")).expect("a");
        let mut watch = DirWatch::new().expect("inotify");
        watch.add(open(&root).as_fd(), &root).expect("watch");
        watch
            .add(open(&root.join("a")).as_fd(), &root.join("a"))
            .expect("watch");
        std::fs::remove_dir(root.join("a")).expect("rmdir");
        assert_eq!(watch.take(), []);
        assert_eq!(watch.len(), 1);
    }
}
