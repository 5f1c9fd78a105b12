//! Repositories below the top of a writable root: a workspace holding several projects
//! (`proj1/.git`, `proj2/.git`), a repository with an unrelated one nested in it
//! (`vendor/lib/.git`, even in a directory its `.gitignore` hides), and one a command makes
//! in a subdirectory during a call. The user's git run there later reads that `.git`, so
//! its settings and hooks need the protection the top repository's get.
//!
//! [`Tree`] finds them: once per session a walk of the writable roots that never follows a
//! link, does not skip ignored directories and does not enter a `.git`, noting every
//! directory's change time; then, before and after every call, a stat of each directory it
//! knows (no listing): only a directory whose change time moved (an entry was added,
//! removed or renamed in it) is listed again, and a directory new to it is walked. The
//! search walker (`search/walk`) is not used: it follows the ignore rules, keeps an order
//! this does not need, and is only built with the built-in tools.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, RawDir, Stat};

use super::git::{GitAccess, git_dirs_from_file};
use super::nofollow::{open_dir, open_subdir};

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

/// The directories beneath the writable roots and the repositories among them.
#[derive(Debug, Default)]
pub(super) struct Tree {
    roots: Vec<PathBuf>,
    /// Every directory beneath the roots (the roots too, none inside a `.git`).
    dirs: BTreeMap<PathBuf, Stamp>,
    /// The directories, other than a root, that hold (or held) a `.git` of any kind.
    repos: BTreeSet<PathBuf>,
}

/// The first walk went past [`MAX_ENTRIES`].
struct TooMany;

impl Tree {
    /// Walks `roots` (canonical directories; one inside another is walked once). Fails
    /// when they hold more than [`MAX_ENTRIES`] entries, saying what to do.
    pub(super) fn scan(roots: &[PathBuf]) -> io::Result<Tree> {
        Tree::scan_at_most(roots, MAX_ENTRIES)
    }

    fn scan_at_most(roots: &[PathBuf], max: usize) -> io::Result<Tree> {
        let mut tree = Tree {
            roots: roots.to_vec(),
            ..Tree::default()
        };
        let now = super::git_guard::now();
        let mut budget = max;
        let mut buf = Vec::new();
        for root in roots {
            if roots.iter().any(|r| r != root && root.starts_with(r)) {
                continue;
            }
            let Some(fd) = open_dir(root) else { continue };
            if tree
                .walk(fd.as_fd(), root, 0, now, &mut budget, &mut buf)
                .is_err()
            {
                return Err(io::Error::other(format!(
                    "The sandbox cannot start: the writable roots ({}) hold more than {max} files and directories, too many to find every git repository in them whose settings a command could change to make the user's later git run other code. Work in a smaller directory (the project itself), or narrow [sandbox] writable_roots.",
                    roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        Ok(tree)
    }

    /// The directories below the top of a root that hold a `.git`.
    pub(super) fn repos(&self) -> &BTreeSet<PathBuf> {
        &self.repos
    }

    /// Finds what changed since the last look: a `.git` made or moved in anywhere, in a
    /// directory that existed or in one made since. Stats every known directory; lists only
    /// those that changed, and walks the new ones (however many entries they hold).
    pub(super) fn sweep(&mut self) {
        let now = super::git_guard::now();
        let mut gone: Option<PathBuf> = None;
        let mut changed = Vec::new();
        self.dirs.retain(|path, stamp| {
            if gone.as_ref().is_some_and(|g| path.starts_with(g)) {
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
                    gone = Some(path.clone());
                    false
                }
            }
        });
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
                if self.dirs.contains_key(&sub) || depth >= MAX_DEPTH {
                    continue;
                }
                if let Some(subfd) = open_subdir(fd.as_fd(), &name) {
                    let _ = self.walk(subfd.as_fd(), &sub, depth + 1, now, &mut budget, &mut buf);
                }
            }
        }
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

    /// Notes the directory `path` (open as `fd`) and everything beneath it.
    fn walk(
        &mut self,
        fd: BorrowedFd<'_>,
        path: &Path,
        depth: usize,
        now: i128,
        budget: &mut usize,
        buf: &mut Vec<u8>,
    ) -> Result<(), TooMany> {
        let Ok(st) = rustix::fs::fstat(fd) else {
            return Ok(());
        };
        self.dirs.insert(path.to_path_buf(), Stamp::of(&st, now));
        let subdirs = self.list(fd, path, budget, buf)?;
        if depth >= MAX_DEPTH {
            return Ok(());
        }
        for name in subdirs {
            if let Some(sub) = open_subdir(fd, &name) {
                self.walk(sub.as_fd(), &path.join(&name), depth + 1, now, budget, buf)?;
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
    ) -> Result<Vec<OsString>, TooMany> {
        let at_top = self.roots.iter().any(|r| r == path);
        let mut subdirs = Vec::new();
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
            *budget = budget.checked_sub(1).ok_or(TooMany)?;
            if name == b".git" {
                if !at_top {
                    self.repos.insert(path.to_path_buf());
                }
                continue;
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
        Ok(subdirs)
    }
}

/// What keeps a repository found below the top of a root from being redirected by a
/// command, per git mode, as for the top one: the paths mounted read-only and the `.git`
/// directories anchored (mounted onto themselves so they cannot be renamed away).
#[derive(Debug, Default)]
pub(super) struct NestedPaths {
    pub protected: Vec<PathBuf>,
    pub anchors: Vec<PathBuf>,
    /// The git directories read-only as a whole (`git = "read-only"`).
    pub read_only: Vec<PathBuf>,
}

/// Adds to `paths` what protects the repository whose `.git` is in `dir`: with `git =
/// "read-only"` its git directory as a whole; with `git = "commit"` the `.git/…` entries
/// of `protected` (settings and hooks by default) and `modules`, its `.git` directory
/// anchored. A `.git` file is read-only in both modes, and only git directories inside the
/// writable `roots` are mounted (Landlock keeps the others read-only). A `.git` file git
/// cannot use is kept read-only as it is; a `.git` link is left to the guard.
pub(super) fn protect(
    paths: &mut NestedPaths,
    dir: &Path,
    access: GitAccess,
    protected: &[PathBuf],
    roots: &[PathBuf],
) {
    let dot_git = dir.join(".git");
    // Not `Repository::find`: its submodules (read from the index) are found by the walk.
    let (git_dir, common) = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_dir() => (dot_git.clone(), dot_git.clone()),
        Ok(meta) if meta.is_file() => {
            paths.protected.push(dot_git.clone());
            match git_dirs_from_file(&dot_git) {
                Ok(dirs) => dirs,
                Err(_) => return,
            }
        }
        _ => return,
    };
    let inside = |p: &PathBuf| roots.iter().any(|r| p.starts_with(r));
    let mut git_dirs = vec![git_dir];
    if common != git_dirs[0] {
        git_dirs.push(common);
    }
    for git_dir in git_dirs.iter().filter(|d| inside(d)) {
        match access {
            GitAccess::ReadOnly => {
                paths.protected.push(git_dir.to_path_buf());
                paths.read_only.push(git_dir.to_path_buf());
            }
            GitAccess::Commit => {
                for rel in protected {
                    if let Ok(rest) = rel.strip_prefix(".git") {
                        paths.protected.push(git_dir.join(rest));
                    }
                }
                paths.protected.push(git_dir.join("modules"));
                if *git_dir == dot_git {
                    paths.anchors.push(git_dir.to_path_buf());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_in(dir: &Path) -> (PathBuf, Tree) {
        let root = std::fs::canonicalize(dir).expect("canonical");
        let tree = Tree::scan(std::slice::from_ref(&root)).expect("scan");
        (root, tree)
    }

    #[test]
    fn the_walk_finds_every_git_below_the_top_and_follows_no_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::create_dir_all(outside.path().join("x/.git")).expect("outside repo");
        let ws = dir.path();
        for rel in [
            ".git",
            "a/.git",
            "b/c/d/.git/modules/m/.git",
            "ignored/e/.git",
        ] {
            std::fs::create_dir_all(ws.join(rel)).expect("dir");
        }
        std::fs::write(ws.join(".gitignore"), "ignored/\n").expect("gitignore");
        std::fs::create_dir(ws.join("f")).expect("f");
        std::fs::write(ws.join("f/.git"), "gitdir: ../a/.git\n").expect("gitlink");
        std::os::unix::fs::symlink(outside.path(), ws.join("link")).expect("link");
        let (root, mut tree) = tree_in(ws);
        let found: Vec<&Path> = tree
            .repos()
            .iter()
            .map(|p| p.strip_prefix(&root).expect("below"))
            .collect();
        // Not the top's own, nothing inside a `.git`, nothing through the link.
        assert_eq!(
            found,
            [
                Path::new("a"),
                Path::new("b/c/d"),
                Path::new("f"),
                Path::new("ignored/e")
            ]
        );
        // Made since, in a directory that existed and in new ones, deep.
        std::fs::create_dir_all(ws.join("a/g/.git")).expect("new");
        std::fs::create_dir_all(ws.join("h/i/j/k/.git")).expect("new deep");
        std::fs::write(ws.join("b/.git"), "gitdir: x\n").expect("new gitlink");
        tree.sweep();
        let found: Vec<&Path> = tree
            .repos()
            .iter()
            .map(|p| p.strip_prefix(&root).expect("below"))
            .collect();
        assert_eq!(
            found,
            [
                Path::new("a"),
                Path::new("a/g"),
                Path::new("b"),
                Path::new("b/c/d"),
                Path::new("f"),
                Path::new("h/i/j/k"),
                Path::new("ignored/e")
            ]
        );
    }

    #[test]
    fn past_its_bound_the_walk_refuses_to_start_the_sandbox() {
        let dir = tempfile::tempdir().expect("tempdir");
        for n in 0..20 {
            std::fs::write(dir.path().join(format!("f{n}")), "").expect("file");
        }
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let err = Tree::scan_at_most(std::slice::from_ref(&root), 10).expect_err("too many");
        assert_eq!(
            err.to_string(),
            format!(
                "The sandbox cannot start: the writable roots ({}) hold more than 10 files and directories, too many to find every git repository in them whose settings a command could change to make the user's later git run other code. Work in a smaller directory (the project itself), or narrow [sandbox] writable_roots.",
                root.display()
            )
        );
        assert!(Tree::scan_at_most(std::slice::from_ref(&root), 20).is_ok());
    }
}
