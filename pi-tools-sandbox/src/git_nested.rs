//! Repositories below the top of a writable root: a workspace holding several projects
//! (`proj1/.git`, `proj2/.git`), a repository with an unrelated one nested in it
//! (`vendor/lib/.git`, even in a directory its `.gitignore` hides), and one a command makes
//! in a subdirectory during a call. The user's git run there later reads that `.git`, so
//! its settings and hooks need the protection the top repository's get.
//!
//! [`Tree`] finds them: once per session a walk of the writable roots that never follows a
//! link, does not skip ignored directories and does not enter a `.git`; then, before and
//! after every call, what the kernel reported appearing since (see `dir_watch.rs`): a
//! `.git` is a repository, a directory is walked. Where there are no notifications (no
//! inotify instance or watch left for the user, no `/proc`), every directory's change time
//! is looked at instead, and a directory whose time moved is listed again. pi-tools' search
//! walker is not used (this crate knows nothing of it): it follows the ignore rules and
//! keeps an order this does not need.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, RawDir, Stat};

use crate::dir_watch::{DirWatch, News};
use crate::git_bare;

use crate::nofollow::{open_dir, open_subdir};

/// How many entries the session's first walk looks at, in all roots, before it gives up
/// (about a second on a warm cache): past it the sandbox refuses to start, since it could
/// not tell which repositories a command might plant settings in.
pub(super) const MAX_ENTRIES: usize = 1_000_000;

/// How deep below a root the walks go (git is not run that deep in practice; the open
/// directories on the way are held, so the walk needs that many descriptors).
const MAX_DEPTH: usize = 128;

/// A change time this close to when it was read may be followed by another change in the
/// same tick of the file system's clock, so the directory is listed again next time.
const CLOCK_SLACK_NS: i128 = 2_000_000_000;

/// A directory's change time, and whether it was too recent to trust when read.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    ctime: i128,
    fresh: bool,
}

impl Stamp {
    fn of(st: &Stat, now: i128) -> Stamp {
        let ctime = i128::from(st.st_ctime) * 1_000_000_000 + i128::from(st.st_ctime_nsec);
        Stamp {
            ctime,
            fresh: ctime >= now - CLOCK_SLACK_NS,
        }
    }
}

/// How the tree learns what appeared in it since the last look.
#[derive(Debug)]
enum Look {
    /// The kernel reports it.
    Told(DirWatch),
    /// Every directory beneath the roots (the roots too, none inside a `.git`) with its
    /// change time, looked at again each time.
    Stamps(BTreeMap<PathBuf, Stamp>),
    /// The session sleeps: neither watches nor stamps are kept (they cost a descriptor and
    /// memory per directory); the next look walks the roots again.
    Resting,
}

/// The directories beneath the writable roots and the repositories among them.
#[derive(Debug)]
pub(super) struct Tree {
    roots: Vec<PathBuf>,
    look: Look,
    /// The directories, other than a root, that hold (or held) a `.git` of any kind.
    repos: BTreeSet<PathBuf>,
    /// Git directories under another name (`git init --bare tools`), see `git_bare.rs`.
    bare: BTreeSet<PathBuf>,
    /// Goes up whenever a look finds anything changed (something appeared, moved or
    /// went, the queue overflowed, a walk again): the same count means nothing beneath
    /// the roots moved in between, so no repository did.
    changes: u64,
}

/// Why a walk stopped.
enum Stop {
    /// The first walk went past its bound.
    TooMany,
    /// No watch could be added (the user's are all taken): look at change times instead.
    NoWatch,
}

impl Tree {
    /// Walks `roots` (canonical directories; one inside another is walked once). Fails
    /// when they hold more than [`MAX_ENTRIES`] entries, saying what to do.
    pub(super) fn scan(roots: &[PathBuf]) -> io::Result<Tree> {
        Tree::scan_at_most(roots, MAX_ENTRIES, true)
    }

    fn scan_at_most(roots: &[PathBuf], max: usize, told: bool) -> io::Result<Tree> {
        let watch = if told { DirWatch::new().ok() } else { None };
        Tree::scan_with(roots, max, watch)
    }

    /// Walks `roots` watching each directory with `watch`, or noting change times when
    /// there is none or it runs out of watches.
    fn scan_with(roots: &[PathBuf], max: usize, watch: Option<DirWatch>) -> io::Result<Tree> {
        let look = match watch {
            Some(watch) => Look::Told(watch),
            None => Look::Stamps(BTreeMap::new()),
        };
        let mut tree = Tree {
            roots: roots.to_vec(),
            look,
            repos: BTreeSet::new(),
            bare: BTreeSet::new(),
            changes: 0,
        };
        match tree.walk_roots(max) {
            Ok(()) => Ok(tree),
            Err(Stop::NoWatch) => Tree::scan_with(roots, max, None),
            Err(Stop::TooMany) => Err(io::Error::other(format!(
                "The sandbox cannot start: the writable roots ({}) hold more than {max} files and directories, too many to find every git repository in them whose settings a command could change to make the user's later git run other code. Work in a smaller directory (the project itself), or narrow [sandbox] writable_roots.",
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Walks every root, each directory as new.
    fn walk_roots(&mut self, max: usize) -> Result<(), Stop> {
        let now = crate::git_guard::now();
        let mut budget = max;
        let mut buf = Vec::new();
        for root in self.roots.clone() {
            if self.roots.iter().any(|r| *r != root && root.starts_with(r)) {
                continue;
            }
            let Some(fd) = open_dir(&root) else { continue };
            self.walk(fd.as_fd(), &root, 0, now, &mut budget, &mut buf, true)?;
        }
        Ok(())
    }

    /// The roots walked.
    pub(super) fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The directories below the top of a root that hold a `.git`.
    pub(super) fn repos(&self) -> &BTreeSet<PathBuf> {
        &self.repos
    }

    /// The git directories under another name than `.git` (bare repositories).
    pub(super) fn bare(&self) -> &BTreeSet<PathBuf> {
        &self.bare
    }

    /// How many looks have found something changed (see the field).
    pub(super) fn changes(&self) -> u64 {
        self.changes
    }

    /// The session sleeps: the watch (its descriptor and what it knows of each directory)
    /// or the stamps go. The repositories found are kept; the next look walks again.
    pub(super) fn rest(&mut self) {
        self.look = Look::Resting;
    }

    /// Finds what changed since the last look: a `.git` made or moved in anywhere, in a
    /// directory that existed or in one made since (walked, however many entries it holds).
    pub(super) fn sweep(&mut self) {
        if matches!(self.look, Look::Resting) {
            self.changes += 1;
            self.look = match DirWatch::new() {
                Ok(watch) => Look::Told(watch),
                Err(_) => Look::Stamps(BTreeMap::new()),
            };
            if self.walk_roots(usize::MAX).is_ok() {
                return;
            }
            // No watch could be added: change times, as after a lost queue.
            self.look = Look::Stamps(BTreeMap::new());
            let _ = self.walk_roots(usize::MAX);
            return;
        }
        let stopped = match &mut self.look {
            Look::Told(watch) => {
                let news = watch.take();
                if !news.is_empty() {
                    self.changes += 1;
                }
                self.told(news)
            }
            Look::Stamps(_) => {
                if self.stamps() {
                    self.changes += 1;
                }
                Ok(())
            }
            Look::Resting => Ok(()),
        };
        if stopped.is_err() {
            // The user's watches ran out: from now on, change times.
            self.changes += 1;
            self.look = Look::Stamps(BTreeMap::new());
            let _ = self.walk_roots(usize::MAX);
        }
    }

    /// Takes in what the kernel reported.
    fn told(&mut self, news: Vec<News>) -> Result<(), Stop> {
        let now = crate::git_guard::now();
        let mut budget = usize::MAX;
        let mut buf = Vec::new();
        for item in news {
            match item {
                News::Lost => {
                    if let Look::Told(watch) = &mut self.look {
                        watch.clear();
                    }
                    return self.walk_roots(usize::MAX);
                }
                News::Left(path) => {
                    self.repos.retain(|r| !r.starts_with(&path));
                    self.bare.retain(|r| !r.starts_with(&path));
                }
                News::Appeared { path, dir } => {
                    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                        continue;
                    };
                    if name == ".git" {
                        if !self.roots.iter().any(|r| r == parent) {
                            self.repos.insert(parent.to_path_buf());
                        }
                    } else if git_bare::SHAPE.iter().any(|s| name == *s)
                        && open_dir(parent).is_some_and(|fd| git_bare::is_git_dir(fd.as_fd()))
                    {
                        // A directory became a git directory (`git init --bare .`).
                        self.bare.insert(parent.to_path_buf());
                    } else if dir {
                        let depth = self.depth(&path);
                        // Too deep, gone again, or a link now: nothing to walk.
                        if depth <= MAX_DEPTH
                            && let Some(fd) = open_dir(&path)
                        {
                            self.walk(fd.as_fd(), &path, depth, now, &mut budget, &mut buf, false)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Looks at every known directory's change time: lists those that changed, walks the
    /// new directories in them. Whether any changed or went (one too recent to trust
    /// counts as changed).
    fn stamps(&mut self) -> bool {
        let Look::Stamps(dirs) = &mut self.look else {
            return false;
        };
        let now = crate::git_guard::now();
        let mut gone: Vec<PathBuf> = Vec::new();
        let mut changed = Vec::new();
        dirs.retain(|path, stamp| {
            if gone.last().is_some_and(|g| path.starts_with(g)) {
                return false;
            }
            let st = rustix::fs::statat(rustix::fs::CWD, path, AtFlags::SYMLINK_NOFOLLOW);
            match st {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
                    let seen = Stamp::of(&st, now);
                    if stamp.fresh || seen.ctime != stamp.ctime {
                        *stamp = seen;
                        changed.push(path.clone());
                    }
                    true
                }
                _ => {
                    gone.push(path.clone());
                    false
                }
            }
        });
        let any = !gone.is_empty() || !changed.is_empty();
        // Moved or removed, with what was beneath: found again where it went, if inside.
        self.repos
            .retain(|r| !gone.iter().any(|g| r.starts_with(g)));
        self.bare.retain(|r| !gone.iter().any(|g| r.starts_with(g)));
        let mut budget = usize::MAX;
        let mut buf = Vec::new();
        for path in changed {
            let Some(fd) = open_dir(&path) else { continue };
            let depth = self.depth(&path);
            let Ok(subdirs) = self.list(fd.as_fd(), &path, &mut budget, &mut buf) else {
                continue;
            };
            for name in subdirs {
                let sub = path.join(&name);
                let known = matches!(&self.look, Look::Stamps(d) if d.contains_key(&sub));
                if known || depth >= MAX_DEPTH {
                    continue;
                }
                if let Some(subfd) = open_subdir(fd.as_fd(), &name) {
                    let _ = self.walk(
                        subfd.as_fd(),
                        &sub,
                        depth + 1,
                        now,
                        &mut budget,
                        &mut buf,
                        true,
                    );
                }
            }
        }
        any
    }

    /// How far `path` is below the root it is in.
    fn depth(&self, path: &Path) -> usize {
        self.roots
            .iter()
            .filter_map(|r| path.strip_prefix(r).ok())
            .map(|rel| rel.components().count())
            .min()
            .unwrap_or(0)
    }

    /// Notes the directory `path` (open as `fd`) and everything beneath it; when not
    /// `fresh`, a directory already watched under that path is known with all beneath it.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &mut self,
        fd: BorrowedFd<'_>,
        path: &Path,
        depth: usize,
        now: i128,
        budget: &mut usize,
        buf: &mut Vec<u8>,
        fresh: bool,
    ) -> Result<(), Stop> {
        match &mut self.look {
            // Watched before it is listed, so that nothing made in between is missed.
            Look::Told(watch) => match watch.add(fd, path) {
                Ok(true) if !fresh => return Ok(()),
                Ok(_) => {}
                Err(_) => return Err(Stop::NoWatch),
            },
            Look::Stamps(dirs) => {
                let Ok(st) = rustix::fs::fstat(fd) else {
                    return Ok(());
                };
                dirs.insert(path.to_path_buf(), Stamp::of(&st, now));
            }
            Look::Resting => {}
        }
        let subdirs = self.list(fd, path, budget, buf)?;
        if depth >= MAX_DEPTH {
            return Ok(());
        }
        for name in subdirs {
            if let Some(sub) = open_subdir(fd, &name) {
                let sub_path = path.join(&name);
                self.walk(sub.as_fd(), &sub_path, depth + 1, now, budget, buf, fresh)?;
            }
        }
        Ok(())
    }

    /// Reads the directory `path` (open as `fd`, read from its start): notes a `.git` in
    /// it (but at a root's top, which the rest of the sandbox covers), and returns the
    /// names of its other subdirectories (links are not directories here).
    fn list(
        &mut self,
        fd: BorrowedFd<'_>,
        path: &Path,
        budget: &mut usize,
        buf: &mut Vec<u8>,
    ) -> Result<Vec<OsString>, Stop> {
        let at_top = self.roots.iter().any(|r| r == path);
        let mut subdirs = Vec::new();
        let mut shape = 0;
        buf.clear();
        buf.reserve(32 * 1024);
        let spare: &mut [MaybeUninit<u8>] = buf.spare_capacity_mut();
        let mut raw = RawDir::new(fd, spare);
        while let Some(entry) = raw.next() {
            let Ok(entry) = entry else { break };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            *budget = budget.checked_sub(1).ok_or(Stop::TooMany)?;
            if name == b".git" {
                if !at_top {
                    self.repos.insert(path.to_path_buf());
                }
                continue;
            }
            if git_bare::SHAPE.iter().any(|s| name == s.as_bytes()) {
                shape += 1;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode))
                }
                known => known,
            };
            if kind == FileType::Directory {
                subdirs.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        if shape == git_bare::SHAPE.len() && git_bare::is_git_dir(fd) {
            // A git directory: noted, and not walked into (as a `.git` is not).
            self.bare.insert(path.to_path_buf());
            subdirs.clear();
        }
        Ok(subdirs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(tree: &Tree, root: &Path) -> Vec<PathBuf> {
        tree.repos()
            .iter()
            .map(|p| p.strip_prefix(root).expect("below").to_path_buf())
            .collect()
    }

    fn paths(rels: &[&str]) -> Vec<PathBuf> {
        rels.iter().map(PathBuf::from).collect()
    }

    /// Every `.git` below the top is found, at the start and made or moved in since, with
    /// notifications (`told`) and with change times.
    fn finds_every_git_below_the_top(told: bool) {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::create_dir_all(outside.path().join("x/.git")).expect("outside repo");
        std::fs::create_dir_all(outside.path().join("y/z/.git")).expect("outside repo");
        let ws = dir.path();
        for rel in [
            ".git",
            "a/.git",
            "b/c/d/.git/modules/m/.git",
            "ignored/e/.git",
            "moved/n/.git",
        ] {
            std::fs::create_dir_all(ws.join(rel)).expect("dir");
        }
        std::fs::write(ws.join(".gitignore"), "ignored/\n").expect("gitignore");
        std::fs::create_dir(ws.join("f")).expect("f");
        std::fs::write(ws.join("f/.git"), "gitdir: ../a/.git\n").expect("gitlink");
        std::os::unix::fs::symlink(outside.path(), ws.join("link")).expect("link");
        let root = std::fs::canonicalize(ws).expect("canonical");
        let mut tree =
            Tree::scan_at_most(std::slice::from_ref(&root), MAX_ENTRIES, told).expect("scan");
        assert_eq!(matches!(tree.look, Look::Told(_)), told);
        // Not the top's own, nothing inside a `.git`, nothing through the link.
        assert_eq!(
            found(&tree, &root),
            paths(&["a", "b/c/d", "f", "ignored/e", "moved/n"])
        );
        // Made since, in a directory that existed and in new ones, deep; a directory moved
        // in from outside, one moved within (found where it went, not where it was), and a
        // directory renamed to `.git`.
        std::fs::create_dir_all(ws.join("a/g/.git")).expect("new");
        std::fs::create_dir_all(ws.join("h/i/j/k/.git")).expect("new deep");
        std::fs::write(ws.join("b/.git"), "gitdir: x\n").expect("new gitlink");
        std::fs::create_dir(ws.join("c")).expect("c");
        std::fs::rename(outside.path().join("y"), ws.join("c/y")).expect("moved in");
        std::fs::rename(ws.join("moved"), ws.join("h/moved")).expect("moved within");
        std::fs::create_dir(ws.join("h/i/plain")).expect("plain");
        std::fs::rename(ws.join("h/i/plain"), ws.join("h/i/j/.git")).expect("renamed to .git");
        tree.sweep();
        assert_eq!(
            found(&tree, &root),
            paths(&[
                "a",
                "a/g",
                "b",
                "b/c/d",
                "c/y/z",
                "f",
                "h/i/j",
                "h/i/j/k",
                "h/moved/n",
                "ignored/e",
            ])
        );
        // And again, in what was found last time.
        std::fs::create_dir_all(ws.join("c/y/w/.git")).expect("in a moved-in directory");
        std::fs::create_dir_all(ws.join("h/moved/v/.git")).expect("in a moved directory");
        tree.sweep();
        let now = found(&tree, &root);
        assert!(now.contains(&PathBuf::from("c/y/w")), "{now:?}");
        assert!(now.contains(&PathBuf::from("h/moved/v")), "{now:?}");
    }

    #[test]
    fn the_walk_and_the_notifications_find_every_git_below_the_top() {
        finds_every_git_below_the_top(true);
    }

    #[test]
    fn without_notifications_change_times_find_every_git_below_the_top() {
        finds_every_git_below_the_top(false);
    }

    #[test]
    fn past_its_share_of_watches_the_tree_notes_change_times() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        for rel in ["a/b", "c", "d/.git"] {
            std::fs::create_dir_all(root.join(rel)).expect("dir");
        }
        // At the start: four directories to watch, three allowed.
        let watch = DirWatch::with_limit(3).expect("inotify");
        let mut tree =
            Tree::scan_with(std::slice::from_ref(&root), MAX_ENTRIES, Some(watch)).expect("scan");
        assert!(matches!(tree.look, Look::Stamps(_)));
        assert_eq!(found(&tree, &root), paths(&["d"]));
        // Later, when new directories take it past its share.
        let watch = DirWatch::with_limit(5).expect("inotify");
        let mut later =
            Tree::scan_with(std::slice::from_ref(&root), MAX_ENTRIES, Some(watch)).expect("scan");
        assert!(matches!(later.look, Look::Told(_)));
        std::fs::create_dir_all(root.join("e/f/.git")).expect("new");
        later.sweep();
        assert!(matches!(later.look, Look::Stamps(_)));
        assert_eq!(found(&later, &root), paths(&["d", "e/f"]));
        std::fs::create_dir_all(root.join("c/g/.git")).expect("new");
        tree.sweep();
        later.sweep();
        assert_eq!(found(&tree, &root), paths(&["c/g", "d", "e/f"]));
        assert_eq!(found(&later, &root), paths(&["c/g", "d", "e/f"]));
    }

    #[test]
    fn a_lost_notification_walks_the_whole_tree_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let mut tree = Tree::scan(std::slice::from_ref(&root)).expect("scan");
        std::fs::create_dir_all(root.join("a/.git")).expect("new");
        tree.told(vec![News::Lost]).ok();
        assert_eq!(found(&tree, &root), paths(&["a"]));
    }

    #[test]
    fn past_its_bound_the_walk_refuses_to_start_the_sandbox() {
        let dir = tempfile::tempdir().expect("tempdir");
        for n in 0..20 {
            std::fs::write(dir.path().join(format!("f{n}")), "").expect("file");
        }
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let err = Tree::scan_at_most(std::slice::from_ref(&root), 10, true).expect_err("too many");
        assert_eq!(
            err.to_string(),
            format!(
                "The sandbox cannot start: the writable roots ({}) hold more than 10 files and directories, too many to find every git repository in them whose settings a command could change to make the user's later git run other code. Work in a smaller directory (the project itself), or narrow [sandbox] writable_roots.",
                root.display()
            )
        );
        assert!(Tree::scan_at_most(std::slice::from_ref(&root), 20, true).is_ok());
    }
}
