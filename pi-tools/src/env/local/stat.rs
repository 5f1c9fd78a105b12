//! What a confined [`LocalEnv`](super::LocalEnv) says of a path without reading it: its
//! metadata and a directory's entries, each found through handles beneath the allowed roots
//! (a link leading out of them is no directory).

use std::ffi::OsStr;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags, Stat};

use super::beneath::{Last, Roots};
use crate::env::temp_name::is_temp_file_name;
use crate::env::{DirEntry, Metadata};

pub(super) fn metadata_of(roots: &Roots, path: &Path) -> io::Result<Metadata> {
    let link = rustix::fs::fstat(roots.open(path, OFlags::empty(), Mode::empty(), Last::Link)?)?;
    let is_symlink = FileType::from_raw_mode(link.st_mode) == FileType::Symlink;
    let st = if is_symlink {
        rustix::fs::fstat(roots.open(path, OFlags::PATH, Mode::empty(), Last::Follow)?)?
    } else {
        link
    };
    let kind = FileType::from_raw_mode(st.st_mode);
    Ok(Metadata {
        is_dir: kind == FileType::Directory,
        is_file: kind == FileType::RegularFile,
        is_symlink,
        len: u64::try_from(st.st_size).unwrap_or(0),
        mode: Some(st.st_mode & 0o7777),
        modified: modified_of(&st),
    })
}

pub(super) fn modified_of(st: &Stat) -> Option<std::time::SystemTime> {
    let secs = u64::try_from(st.st_mtime).ok()?;
    let nanos = u32::try_from(st.st_mtime_nsec).ok()?;
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, nanos))
}

pub(super) fn list_dir_of(roots: &Roots, path: &Path) -> io::Result<Vec<DirEntry>> {
    let fd = roots.open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
        Last::Follow,
    )?;
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." || is_temp_file_name(name) {
            continue;
        }
        let name = OsStr::from_bytes(name);
        let kind = match entry.file_type() {
            FileType::Unknown => super::beneath::stat_at(fd.as_fd(), name)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
            kind => kind,
        };
        let is_symlink = kind == FileType::Symlink;
        // Where a link leads is asked beneath the roots too: one leading out is no directory.
        let followed = if is_symlink {
            roots
                .open(&path.join(name), OFlags::PATH, Mode::empty(), Last::Follow)
                .and_then(|fd| Ok(rustix::fs::fstat(fd)?))
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode))
        } else {
            kind
        };
        entries.push(DirEntry {
            name: name.to_string_lossy().into_owned(),
            is_dir: followed == FileType::Directory,
            is_file: followed == FileType::RegularFile,
            is_symlink,
        });
    }
    Ok(entries)
}
