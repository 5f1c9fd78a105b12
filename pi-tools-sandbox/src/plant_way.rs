//! The way down to the plant guard's watched paths (see `plant_guard.rs`): each root opened
//! once (from `/`, refusing links), and the directories below it the last path went through
//! kept open while the next path goes through them too. The watched paths are sorted, so a
//! repository's protected files, one after the other, cost its directories once.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use crate::nofollow::{open_dir, open_subdir};

#[derive(Default)]
pub(super) struct Way<'w> {
    /// The root of the last path, and its handle (`None`: it could not be opened).
    root: Option<(&'w Path, Option<OwnedFd>)>,
    /// The directories below the root the last path went through, with their names.
    dirs: Vec<(&'w OsStr, OwnedFd)>,
}

impl<'w> Way<'w> {
    /// Goes to `root` and keeps the directories `parts` shares with the last path; false
    /// when the root cannot be opened.
    pub(super) fn start(&mut self, root: &'w Path, parts: &'w [OsString]) -> bool {
        if self.root.as_ref().is_none_or(|(r, _)| *r != root) {
            self.root = Some((root, open_dir(root)));
            self.dirs.clear();
        }
        let shared = self
            .dirs
            .iter()
            .zip(parts)
            .take_while(|((name, _), part)| *name == part.as_os_str())
            .count();
        self.dirs.truncate(shared);
        self.root.as_ref().is_some_and(|(_, fd)| fd.is_some())
    }

    /// How many directories below the root are open.
    pub(super) fn depth(&self) -> usize {
        self.dirs.len()
    }

    /// The directory at `depth` below the root (0: the root), open.
    pub(super) fn dir(&self, depth: usize) -> Option<BorrowedFd<'_>> {
        match depth {
            0 => self.root.as_ref()?.1.as_ref().map(AsFd::as_fd),
            _ => self.dirs.get(depth - 1).map(|(_, fd)| fd.as_fd()),
        }
    }

    /// Opens `name` in the deepest directory open (never following a link) and goes down
    /// into it; false when it is not a directory reached that way.
    pub(super) fn down(&mut self, name: &'w OsStr) -> bool {
        let Some(fd) = self
            .dir(self.dirs.len())
            .and_then(|dir| open_subdir(dir, name))
        else {
            return false;
        };
        self.dirs.push((name, fd));
        true
    }
}
