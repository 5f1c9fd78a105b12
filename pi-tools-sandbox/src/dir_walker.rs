//! Opening many directories the way [`crate::nofollow::open_dir`] opens one (from `/`, one
//! component at a time, never following a link), sharing the way: the directories the last
//! path went through stay open while the next path goes through them too. Given the paths in
//! order, the repositories below one workspace cost the workspace's components once, not
//! once each.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use crate::nofollow::open_subdir;

/// The directories of the last path opened, from `/` down.
pub(super) struct DirWalker {
    root: Option<OwnedFd>,
    /// Each component below `/` with its handle.
    stack: Vec<(OsString, OwnedFd)>,
}

impl DirWalker {
    pub(super) fn new() -> DirWalker {
        DirWalker {
            root: None,
            stack: Vec::new(),
        }
    }

    /// The directory `path` (absolute), opened without following a link or `..` on the
    /// way; `None` when it is not a directory reached that way.
    pub(super) fn open(&mut self, path: &Path) -> Option<BorrowedFd<'_>> {
        let mut names = Vec::new();
        for component in path.components() {
            match component {
                Component::RootDir => {}
                Component::Normal(name) => names.push(name),
                _ => return None,
            }
        }
        if self.root.is_none() {
            self.root = Some(
                rustix::fs::open(
                    "/",
                    rustix::fs::OFlags::RDONLY
                        | rustix::fs::OFlags::DIRECTORY
                        | rustix::fs::OFlags::CLOEXEC,
                    rustix::fs::Mode::empty(),
                )
                .ok()?,
            );
        }
        let shared = self
            .stack
            .iter()
            .zip(&names)
            .take_while(|((held, _), name)| held.as_os_str() == **name)
            .count();
        self.stack.truncate(shared);
        for name in &names[shared..] {
            let parent = match self.stack.last() {
                Some((_, fd)) => fd.as_fd(),
                None => self.root.as_ref()?.as_fd(),
            };
            let fd = open_subdir(parent, name)?;
            self.stack.push((name.to_os_string(), fd));
        }
        match self.stack.last() {
            Some((_, fd)) => Some(fd.as_fd()),
            None => self.root.as_ref().map(AsFd::as_fd),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths sharing a prefix open as one by one would; a link on the way is refused.
    #[test]
    fn shared_ways_are_opened_once_and_links_are_refused() {
        let top = tempfile::tempdir().expect("tempdir");
        let top = std::fs::canonicalize(top.path()).expect("canonical");
        std::fs::create_dir_all(top.join("a/b")).expect("mkdir");
        std::fs::create_dir_all(top.join("a/c")).expect("mkdir");
        std::os::unix::fs::symlink(top.join("a/b"), top.join("a/link")).expect("symlink");
        let mut walker = DirWalker::new();
        let id = |fd: BorrowedFd<'_>| {
            let st = rustix::fs::fstat(fd).expect("fstat");
            (st.st_dev, st.st_ino)
        };
        let b = walker.open(&top.join("a/b")).map(id);
        let c = walker.open(&top.join("a/c")).map(id);
        let meta = |p: &str| {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata(top.join(p)).expect("metadata");
            (m.dev(), m.ino())
        };
        assert_eq!(b, Some(meta("a/b")));
        assert_eq!(c, Some(meta("a/c")));
        assert!(walker.open(&top.join("a/link")).is_none());
        assert!(walker.open(&top.join("a/../a/b")).is_none());
        assert_eq!(walker.open(&top.join("a/b")).map(id), Some(meta("a/b")));
    }
}
