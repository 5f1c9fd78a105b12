//! Git directories under any name. Git takes a directory for a repository when it holds
//! `HEAD`, `objects/` and `refs/`, whatever it is called: `git init --bare tools` makes
//! one, and with `core.bare = false`, `core.worktree = ..` and `core.fsmonitor` in its
//! settings, the user's `git status` in `tools/` runs that program. A walk that looks for
//! `.git` only does not see it, so the walk also looks for this shape.
//!
//! `safe.bareRepository = explicit` in the user's git settings would make git refuse such
//! directories outright; it is the user's choice (it breaks workflows that use bare
//! repositories in place), so the sandbox does not rely on it nor set it.

use std::ffi::OsStr;
use std::os::fd::BorrowedFd;

use rustix::fs::FileType;

use crate::nofollow::stat_at;

/// The entries whose appearance can make a directory a git directory.
pub(super) const SHAPE: [&str; 3] = ["HEAD", "objects", "refs"];

/// Whether the directory open as `dir` has a git directory's shape: a `HEAD` (file or
/// link) and `objects` and `refs` directories.
pub(super) fn is_git_dir(dir: BorrowedFd<'_>) -> bool {
    let kind =
        |name: &str| stat_at(dir, OsStr::new(name)).map(|st| FileType::from_raw_mode(st.st_mode));
    matches!(
        kind("HEAD"),
        Some(FileType::RegularFile | FileType::Symlink)
    ) && kind("objects") == Some(FileType::Directory)
        && kind("refs") == Some(FileType::Directory)
}
