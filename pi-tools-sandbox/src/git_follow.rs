//! Following repositories by identity: a command that renames a repository's directory
//! (`mv proj1 old1`) and moves another in its place (`mv $TMPDIR/planted proj1`) must not
//! make the guard take the user's repository for a newcomer, nor leave the newcomer where
//! the user's git will read it.
//!
//! Before each call the guard notes every repository below the top of a root by the device
//! and inode of its `.git` and of its directory. After the call, a known `.git` found at
//! another place was moved there by the command: what now stands where it was is renamed
//! aside (`<name>.pi-tools-disabled`, never removed), and the repository is moved back (its
//! whole directory when that moved, else its `.git`). Only then are its settings compared
//! with what they held, at the place they held it, so nothing of the user's is taken for
//! planted. Every rename is made from directory handles reached without following a link,
//! and never replaces anything.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::fs::RenameFlags;

use crate::dir_walker::DirWalker;
use crate::nofollow::{move_aside, open_parent, stat_at};

/// A file's identity: device and inode.
pub(super) type Id = (u64, u64);

/// Where each known repository was: by the identity of its `.git`, its directory and that
/// directory's identity.
pub(super) type Known = BTreeMap<Id, (PathBuf, Id)>;

/// The identity of what is at `path` (a link is itself, never followed).
pub(super) fn identity(path: &Path) -> Option<Id> {
    let (dir, name) = open_parent(path)?;
    let st = stat_at(dir.as_fd(), &name)?;
    Some((st.st_dev, st.st_ino))
}

/// Notes where each repository in `dirs` (directories holding a `.git`, in order) is now.
/// Each is opened once (its own identity is that handle's, its `.git`'s a `stat` in it),
/// the way to them shared (see `dir_walker.rs`).
pub(super) fn note(dirs: impl IntoIterator<Item = PathBuf>) -> Known {
    let mut known = Known::new();
    let mut walker = DirWalker::new();
    for dir in dirs {
        if let Some((git, own)) = identities(&mut walker, &dir) {
            known.insert(git, (dir, own));
        }
    }
    known
}

/// The identities of `dir/.git` and of `dir`, when `dir` is a directory reached without a
/// link.
fn identities(walker: &mut DirWalker, dir: &Path) -> Option<(Id, Id)> {
    let fd = walker.open(dir)?;
    let git = stat_at(fd, OsStr::new(".git"))?;
    let own = rustix::fs::fstat(fd).ok()?;
    Some(((git.st_dev, git.st_ino), (own.st_dev, own.st_ino)))
}

/// Moves each repository of `known` found in `dirs` at another place back where it was,
/// renaming aside what stands there now; one sentence per move for the call's note.
pub(super) fn bring_back(known: &Known, dirs: impl IntoIterator<Item = PathBuf>) -> Vec<String> {
    let mut notes = Vec::new();
    let mut walker = DirWalker::new();
    for now in dirs {
        let Some((git, _)) = identities(&mut walker, &now) else {
            continue;
        };
        let Some((was, was_own)) = known.get(&git) else {
            continue;
        };
        if *was == now {
            continue;
        }
        // What follows moves directories: the handles held may name others after it.
        walker = DirWalker::new();
        // The whole directory moved, or only its `.git` was moved into another one.
        let (from, to) = if identity(&now) == Some(*was_own) {
            (now.clone(), was.clone())
        } else {
            (now.join(".git"), was.join(".git"))
        };
        if identity(&to).is_some() && remove_empty_dir(&to) {
            notes.push(format!(
                "removed the empty directory {} the command made where a repository of the user's was",
                to.display()
            ));
        } else if identity(&to).is_some() {
            match aside(&to) {
                Some(moved) => notes.push(format!(
                    "moved {} aside to {} (the command put it where a repository of the user's was)",
                    to.display(),
                    moved.display()
                )),
                None => {
                    notes.push(format!(
                        "could not move {} aside, so the user's repository the command moved there stays at {}; move it back by hand",
                        to.display(),
                        from.display()
                    ));
                    continue;
                }
            }
        }
        if rename(&from, &to) {
            notes.push(format!(
                "moved the user's repository at {} back to {}, where the command had moved it from",
                from.display(),
                to.display()
            ));
        } else {
            notes.push(format!(
                "could not move the user's repository at {} back to {}; move it back by hand",
                from.display(),
                to.display()
            ));
        }
    }
    notes
}

/// Removes `path` when it is an empty directory (it holds nothing of anyone's).
fn remove_empty_dir(path: &Path) -> bool {
    open_parent(path).is_some_and(|(dir, name)| {
        rustix::fs::unlinkat(
            dir.as_fd(),
            OsStr::new(&name),
            rustix::fs::AtFlags::REMOVEDIR,
        )
        .is_ok()
    })
}

/// Renames `path` to `<name>.pi-tools-disabled` (or a free variant); the new path.
fn aside(path: &Path) -> Option<PathBuf> {
    let (dir, name) = open_parent(path)?;
    let moved = move_aside(dir.as_fd(), &name).ok()?;
    Some(path.with_file_name(moved))
}

/// Renames `from` to `to`, replacing nothing; whether it worked.
fn rename(from: &Path, to: &Path) -> bool {
    let (Some((from_dir, from_name)), Some((to_dir, to_name))) =
        (open_parent(from), open_parent(to))
    else {
        return false;
    };
    rustix::fs::renameat_with(
        from_dir.as_fd(),
        OsStr::new(&from_name),
        to_dir.as_fd(),
        OsStr::new(&to_name),
        RenameFlags::NOREPLACE,
    )
    .is_ok()
}
