//! Removing a file of the local environment: its directory opened inside the roots, as
//! every other file operation opens its path, and the name removed there, so a delete can
//! never reach outside the allowed directories. A symbolic link is removed, never its
//! target; a directory is refused.

use std::io;
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::beneath::{Last, Roots, kind_name, stat_at};

/// Finds the file `path` names (absolute) for removal: its directory opened beneath
/// `roots`, and its real location (that directory as the kernel knows it, plus its name)
/// for the sandbox's write check, which the caller makes before [`unlink`] removes it
/// through the same handle.
pub(super) fn locate_for_removal(roots: &Roots, path: &Path) -> io::Result<Removal> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", path.display()),
        ));
    };
    let dir = roots.open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
        Last::Follow,
    )?;
    let st = stat_at(dir.as_fd(), name)?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind != FileType::RegularFile && kind != FileType::Symlink {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a {}, not a file; only files are deleted",
                path.display(),
                kind_name(&st)
            ),
        ));
    }
    let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
    let real = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|d| d.join(name))
        .unwrap_or_else(|_| path.to_path_buf());
    Ok(Removal {
        dir,
        name: name.to_os_string(),
        real,
    })
}

/// A file found for removal: the handle of its directory and its name there.
pub(super) struct Removal {
    dir: std::os::fd::OwnedFd,
    name: std::ffi::OsString,
    /// Where the file really is.
    pub(super) real: std::path::PathBuf,
}

/// Removes the entry found by [`locate_for_removal`].
pub(super) fn unlink(removal: Removal) -> io::Result<()> {
    rustix::fs::unlinkat(&removal.dir, &removal.name, AtFlags::empty())?;
    Ok(())
}
