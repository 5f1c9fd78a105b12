//! File operations for the git guard that never follow a symbolic link: a command may turn
//! any directory the guard looks into (`.git/modules`, `.git/worktrees/x`, a submodule's
//! directory) into a link to somewhere else, and what the guard reads, removes or writes
//! must stay where the guard meant. Every path is opened from `/` one component at a time
//! with `O_NOFOLLOW | O_DIRECTORY` (the guard's paths are canonical, so a link on the way
//! was put there since, and the path is taken as not there), and every change is made
//! relative to the handle of the directory it is in.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

/// How deep a planted tree is removed; deeper ones are left (git does not nest that far).
const MAX_DEPTH: usize = 32;

/// Opens the directory `path` (absolute), refusing a symbolic link or `..` anywhere on the
/// way: `None` when it is not a directory reached that way.
///
/// One `openat2` with `RESOLVE_NO_SYMLINKS` (Linux 5.6) does it in one system call, where
/// opening each component from `/` took one (and a close) a component, before and after
/// every sandboxed call; a kernel without it (or a filter refusing it) gets the walk.
pub(super) fn open_dir(path: &Path) -> Option<OwnedFd> {
    if !path.is_absolute()
        || path
            .components()
            .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
    {
        return None;
    }
    #[cfg(target_os = "linux")]
    match rustix::fs::openat2(
        rustix::fs::CWD,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        rustix::fs::ResolveFlags::NO_SYMLINKS,
    ) {
        Ok(dir) => return Some(dir),
        Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::TOOBIG) => {}
        // EAGAIN: a race with a rename on the way; the walk sees what is there now.
        Err(Errno::AGAIN) => {}
        Err(_) => return None,
    }
    walk_dir(path)
}

/// [`open_dir`] one component at a time from `/`.
fn walk_dir(path: &Path) -> Option<OwnedFd> {
    let mut dir = rustix::fs::open(
        "/",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    for component in path.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(name) => dir = open_subdir(dir.as_fd(), name)?,
            _ => return None,
        }
    }
    Some(dir)
}

/// Opens the directory `rel` (relative, without `..`) beneath `dir`, refusing a link
/// anywhere on the way.
pub(super) fn open_beneath(dir: BorrowedFd<'_>, rel: &Path) -> Option<OwnedFd> {
    let mut fd: Option<OwnedFd> = None;
    for component in rel.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        fd = Some(open_subdir(fd.as_ref().map_or(dir, |f| f.as_fd()), name)?);
    }
    match fd {
        Some(fd) => Some(fd),
        None => rustix::fs::openat(
            dir,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok(),
    }
}

/// Opens the directory `name` in `dir`, not following a link.
pub(super) fn open_subdir(dir: BorrowedFd<'_>, name: &OsStr) -> Option<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

/// The directory holding `path` and the name of `path` in it.
pub(super) fn open_parent(path: &Path) -> Option<(OwnedFd, OsString)> {
    let name = path.file_name()?;
    Some((open_dir(path.parent()?)?, name.to_os_string()))
}

/// `name` in `dir` itself (a link is described, not followed).
pub(super) fn stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Stat> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()
}

/// The names in `dir` (without `.` and `..`).
pub(super) fn names(dir: BorrowedFd<'_>) -> Vec<OsString> {
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_os_string())
        .filter(|n| n != "." && n != "..")
        .collect()
}

/// The bytes of the regular file `name` in `dir`.
pub(super) fn read_at(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    File::from(fd).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Removes `name` from `dir`: a file or link itself, a directory with everything in it
/// (links inside are removed, never followed).
pub(super) fn remove_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    remove_entry(dir, name, 0)
}

fn remove_entry(dir: BorrowedFd<'_>, name: &OsStr, depth: usize) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => Ok(()),
        Err(Errno::ISDIR | Errno::PERM) if depth < MAX_DEPTH => {
            let Some(sub) = open_subdir(dir, name) else {
                return Err(io::Error::from(Errno::NOTDIR));
            };
            for entry in names(sub.as_fd()) {
                remove_entry(sub.as_fd(), &entry, depth + 1)?;
            }
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(Into::into)
        }
        Err(err) => Err(err.into()),
    }
}

/// Whether `name` in `dir`, and everything beneath it when it is a directory, was changed
/// (made, written, renamed or had its mode changed) at or after `since` (nanoseconds since
/// the epoch): only then was all of it put there since. A change time cannot be set back,
/// so what a command did not touch reads as older. Links are not followed; a tree deeper
/// than removal goes counts as not all new.
pub(super) fn changed_since(dir: BorrowedFd<'_>, name: &OsStr, since: i128) -> bool {
    changed_entry(dir, name, since, 0)
}

fn changed_entry(dir: BorrowedFd<'_>, name: &OsStr, since: i128, depth: usize) -> bool {
    let Some(st) = stat_at(dir, name) else {
        return false;
    };
    let ctime = i128::from(st.st_ctime) * 1_000_000_000 + i128::from(st.st_ctime_nsec);
    if ctime < since {
        return false;
    }
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return true;
    }
    if depth >= MAX_DEPTH {
        return false;
    }
    let Some(sub) = open_subdir(dir, name) else {
        return false;
    };
    names(sub.as_fd())
        .iter()
        .all(|entry| changed_entry(sub.as_fd(), entry, since, depth + 1))
}

/// What a moved-aside entry's name ends with (git reads none of these names).
pub(super) const ASIDE: &str = ".pi-tools-disabled";

/// Renames `name` in `dir` to `<name>.pi-tools-disabled` (or `…-2`, `…-3`, … when taken),
/// replacing nothing; the new name.
pub(super) fn move_aside(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OsString> {
    for n in 1..100 {
        let mut aside = name.to_os_string();
        aside.push(ASIDE);
        if n > 1 {
            aside.push(format!("-{n}"));
        }
        match rustix::fs::renameat_with(dir, name, dir, &*aside, rustix::fs::RenameFlags::NOREPLACE)
        {
            Ok(()) => return Ok(aside),
            Err(Errno::EXIST) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(io::Error::from(Errno::EXIST))
}

/// Puts `bytes` at `name` in `dir` as a new regular file (renamed over whatever is there,
/// so a hard link or a link at that name is replaced, not written through).
pub(super) fn write_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
) -> io::Result<()> {
    if stat_at(dir, name)
        .is_some_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
    {
        remove_at(dir, name)?;
    }
    let mut temp = name.as_bytes().to_vec();
    temp.extend_from_slice(format!(".pi-tools-restore.{}", std::process::id()).as_bytes());
    let temp = OsStr::from_bytes(&temp);
    let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
    let fd = rustix::fs::openat(
        dir,
        temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode & 0o777),
    )?;
    let written = File::from(fd)
        .write_all(bytes)
        .and_then(|()| rustix::fs::renameat(dir, temp, dir, name).map_err(Into::into));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_directory_is_opened_only_by_a_way_without_links() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(top.join("real/inner")).unwrap();
        std::os::unix::fs::symlink(top.join("real"), top.join("link")).unwrap();
        std::fs::write(top.join("file"), "").unwrap();
        for (path, opens) in [
            (top.join("real/inner"), true),
            (top.join("link/inner"), false),
            (top.join("link"), false),
            (top.join("real/../real/inner"), false),
            (top.join("file"), false),
            (top.join("missing"), false),
            (PathBuf::from("relative"), false),
        ] {
            assert_eq!(open_dir(&path).is_some(), opens, "{}", path.display());
            if path.is_absolute() && !path.to_string_lossy().contains("..") {
                assert_eq!(walk_dir(&path).is_some(), opens, "walk: {}", path.display());
            }
        }
        let opened = open_dir(&top.join("real/inner")).unwrap();
        let st = rustix::fs::fstat(&opened).unwrap();
        let want = std::fs::metadata(top.join("real/inner")).unwrap();
        assert_eq!(st.st_ino, std::os::unix::fs::MetadataExt::ino(&want));
    }
}
