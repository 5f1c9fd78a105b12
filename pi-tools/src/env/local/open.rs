//! Opening what a [`LocalEnv`](super::LocalEnv) reads and creates, each path through
//! [`Roots`](super::beneath) (beneath an allowed root when the environment is confined):
//! a file for reading without blocking, a file's head in one open, the directories of a
//! path, and a path's real location.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, Stat};

use super::beneath::{Last, Roots, require_regular};
use super::blocking;
use super::stat::modified_of;
use crate::env::{FileHead, Metadata};

/// Opens `path` (following a link at its end) for reading, with `O_NONBLOCK` so no read
/// waits, and without making a terminal the controlling one; returns it with its `fstat`.
fn open_for_reading(roots: &Roots, path: &Path) -> io::Result<(OwnedFd, Stat)> {
    let fd = roots.open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
        Mode::empty(),
        Last::Follow,
    )?;
    let st = rustix::fs::fstat(&fd)?;
    Ok((fd, st))
}

/// Opens a regular file for reading without blocking on it: a FIFO, socket or device is
/// refused before anything is read from it, and so is a file on a kernel file system
/// unless `pseudo_files`. The handle keeps `O_NONBLOCK`, so a read that would wait fails.
pub(super) fn open_regular(
    roots: &Roots,
    path: &Path,
    pseudo_files: bool,
) -> io::Result<(File, Stat)> {
    let (fd, st) = open_for_reading(roots, path)?;
    require_regular(path, &st)?;
    if !pseudo_files {
        blocking::refuse_pseudo(path, &fd)?;
    }
    Ok((File::from(fd), st))
}

/// One open, one `fstat` (and the `fstatfs` of [`open_regular`] unless `pseudo_files`) and
/// the reads of up to `max` bytes: a small file needs nothing more. The file stays open
/// (returned) when there is more to read.
pub(super) fn read_head_of(
    roots: &Roots,
    path: &Path,
    max: usize,
    pseudo_files: bool,
) -> io::Result<(FileHead, Option<File>)> {
    let (fd, st) = open_for_reading(roots, path)?;
    let kind = FileType::from_raw_mode(st.st_mode);
    let metadata = Metadata {
        is_dir: kind == FileType::Directory,
        is_file: kind == FileType::RegularFile,
        is_symlink: false,
        len: u64::try_from(st.st_size).unwrap_or(0),
        mode: Some(st.st_mode & 0o7777),
        modified: modified_of(&st),
    };
    if metadata.is_dir {
        let head = FileHead {
            metadata,
            bytes: Vec::new(),
            rest: None,
        };
        return Ok((head, None));
    }
    require_regular(path, &st)?;
    if !pseudo_files {
        blocking::refuse_pseudo(path, &fd)?;
    }
    let mut file = File::from(fd);
    // Sized by the file, plus one byte so a file read whole ends with a read of 0.
    let size = usize::try_from(st.st_size).unwrap_or(usize::MAX);
    let mut bytes = Vec::with_capacity(size.saturating_add(1).min(max));
    io::Read::read_to_end(&mut io::Read::take(&mut file, max as u64), &mut bytes)
        .map_err(|e| blocking::would_block(e, path))?;
    // The handle keeps O_NONBLOCK, as open_regular's does.
    let rest = (bytes.len() >= max).then_some(file);
    let head = FileHead {
        metadata,
        bytes,
        rest: None,
    };
    Ok((head, rest))
}

/// Creates `path` and its missing parents, each `mkdirat` through a handle of its parent.
pub(super) fn create_dir_all_of(roots: &Roots, path: &Path) -> io::Result<()> {
    let opened = roots.open(
        path,
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
        Last::Follow,
    );
    match opened {
        Ok(_) => return Ok(()),
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        Err(_) => {}
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} cannot be created", path.display()),
        ));
    };
    create_dir_all_of(roots, parent)?;
    let parent_fd: OwnedFd = roots.open(
        parent,
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
        Last::Follow,
    )?;
    match rustix::fs::mkdirat(&parent_fd, name, Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// The real path of what `path` leads to (inside the roots when confined).
pub(super) fn canonicalize_of(roots: &Roots, path: &Path) -> io::Result<PathBuf> {
    if !roots.is_confined() {
        return std::fs::canonicalize(path);
    }
    let fd = roots.open(path, OFlags::PATH, Mode::empty(), Last::Follow)?;
    let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
    std::fs::read_link(format!("/proc/self/fd/{raw}")).or_else(|_| std::fs::canonicalize(path))
}
