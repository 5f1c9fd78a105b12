//! Removing a file of the local environment: its directory opened inside the roots, as
//! every other file operation opens its path, and the name removed there, so a delete can
//! never reach outside the allowed directories. A symbolic link is removed, never its
//! target; a directory is refused.

use std::io;
use std::os::fd::AsFd;
use std::path::Path;

use rustix::fs::{AtFlags, FileType};

use super::beneath::{Roots, kind_name, stat_at};
use super::replace::{open_parent, real_location};

/// Finds the file `path` names (absolute) for removal: its directory opened beneath
/// `roots`, and its real location (that directory as the kernel knows it, plus its name)
/// for the sandbox's write check, which the caller makes before [`unlink`] removes it
/// through the same handle.
pub(super) fn locate_for_removal(roots: &Roots, path: &Path) -> io::Result<Removal> {
    let (dir, _, name) = open_parent(roots, path, path)?;
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
    let real = real_location(&dir, name, path);
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
