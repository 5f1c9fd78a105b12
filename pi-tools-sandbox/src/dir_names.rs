//! Which of some names a directory holds, from one read of the directory (`getdents64`)
//! instead of one `stat` a name.
//!
//! Every sandboxed call looks for each protected path before it starts (the plant guard
//! notes the missing ones, the mount plan leaves them out) and for the missing ones again
//! after it. About 30 of the default list sit at a writable root's top, and most of them
//! are missing in any one project, so a `stat` each cost about 30 failed lookups twice a
//! call. A root's listing is one or two system calls for the usual few dozen entries. A
//! directory too large to read cheaply is left to the `stat`s ([`MAX_ENTRIES`]).

use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
#[cfg(all(target_os = "linux", feature = "process"))]
use std::{os::fd::AsFd, path::Path};

use rustix::fs::RawDir;
#[cfg(all(target_os = "linux", feature = "process"))]
use rustix::{
    fs::{Mode, OFlags},
    io::Errno,
};

/// Past this many entries a directory is not read: the names are looked up one by one.
const MAX_ENTRIES: usize = 2048;

#[cfg(all(target_os = "linux", feature = "process"))]
/// Fewer names than this in one directory are looked up one by one (opening, reading and
/// closing the directory is about three system calls).
const MIN_NAMES: usize = 3;

/// Which of `wanted` (sorted, without repeats) are entries of `dir`, which is read from
/// its start: `None` when it cannot be read whole or holds more than [`MAX_ENTRIES`]
/// entries, and the caller looks the names up itself.
pub(super) fn present(dir: BorrowedFd<'_>, wanted: &[&OsStr]) -> Option<Vec<bool>> {
    debug_assert!(wanted.is_sorted(), "present wants its names sorted");
    let mut found = vec![false; wanted.len()];
    let mut buf = Vec::<u8>::with_capacity(8 * 1024);
    let spare: &mut [MaybeUninit<u8>] = buf.spare_capacity_mut();
    let mut raw = RawDir::new(dir, spare);
    let mut seen = 0;
    while let Some(entry) = raw.next() {
        let entry = entry.ok()?;
        seen += 1;
        if seen > MAX_ENTRIES {
            return None;
        }
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if let Ok(at) = wanted.binary_search(&name) {
            found[at] = true;
        }
    }
    Some(found)
}

#[cfg(all(target_os = "linux", feature = "process"))]
/// Whether each of `paths` exists (as `symlink_metadata` would say: a link in the last
/// place counts, links on the way are followed), one read of each directory holding
/// [`MIN_NAMES`] or more of them, and a `stat` for the others.
pub(super) fn exist(paths: &[impl AsRef<Path>]) -> Vec<bool> {
    // Each path's directory and name, taken apart once (a comparison would parse both
    // paths again), in order of both.
    let mut places: Vec<(&Path, &OsStr, usize)> = paths
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((p.as_ref().parent()?, p.as_ref().file_name()?, i)))
        .collect();
    // By the directory's bytes (grouping needs no order of components), then the name.
    places.sort_unstable_by(|a, b| (a.0.as_os_str(), a.1).cmp(&(b.0.as_os_str(), b.1)));
    let mut exists: Vec<Option<bool>> = vec![None; paths.len()];
    for group in places.chunk_by(|a, b| a.0.as_os_str() == b.0.as_os_str()) {
        looked_up_together(group, &mut exists);
    }
    exists
        .iter()
        .zip(paths)
        .map(|(known, path)| known.unwrap_or_else(|| std::fs::symlink_metadata(path).is_ok()))
        .collect()
}

#[cfg(all(target_os = "linux", feature = "process"))]
/// Reads the directory of `group` (paths with one directory, sorted by name, each with its
/// index) once and notes which of them exist, when there are enough of them; the others
/// stay unknown for the caller to look up.
fn looked_up_together(group: &[(&Path, &OsStr, usize)], exists: &mut [Option<bool>]) {
    let Some(&(parent, _, _)) = group.first().filter(|_| group.len() >= MIN_NAMES) else {
        return;
    };
    let names: Vec<&OsStr> = group.iter().map(|&(_, name, _)| name).collect();
    let dir = match rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(dir) => dir,
        // Nothing can be below a directory that is not there.
        Err(Errno::NOENT | Errno::NOTDIR) => {
            group.iter().for_each(|&(_, _, i)| exists[i] = Some(false));
            return;
        }
        Err(_) => return,
    };
    // A name twice (the same path given twice) is found twice.
    let mut unique = names.clone();
    unique.dedup();
    let Some(found) = present(dir.as_fd(), &unique) else {
        return;
    };
    for (&(_, name, i), _) in group.iter().zip(&names) {
        exists[i] = unique.binary_search(&name).ok().map(|at| found[at]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_directory_read_once_says_which_names_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".envrc"), "").unwrap();
        std::fs::create_dir(dir.path().join(".vscode")).unwrap();
        std::os::unix::fs::symlink("/nowhere", dir.path().join("pi-tools.toml")).unwrap();
        let fd = std::fs::File::open(dir.path()).unwrap();
        let wanted: Vec<&OsStr> = [".envrc", ".mcp.json", ".vscode", "pi-tools.toml"]
            .iter()
            .map(OsStr::new)
            .collect();
        assert_eq!(
            present(fd.as_fd(), &wanted),
            Some(vec![true, false, true, true])
        );
    }

    #[test]
    fn a_directory_too_large_is_left_to_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=MAX_ENTRIES {
            std::fs::write(dir.path().join(i.to_string()), "").unwrap();
        }
        let fd = std::fs::File::open(dir.path()).unwrap();
        assert_eq!(present(fd.as_fd(), &[OsStr::new("1")]), None);
    }

    #[test]
    #[cfg(all(target_os = "linux", feature = "process"))]
    fn existence_read_together_matches_a_stat_each() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir_all(top.join(".git/hooks")).unwrap();
        std::fs::write(top.join(".npmrc"), "").unwrap();
        std::os::unix::fs::symlink(top.join("gone"), top.join(".bashrc")).unwrap();
        std::os::unix::fs::symlink(top.join(".git"), top.join("linked")).unwrap();
        let paths: Vec<std::path::PathBuf> = [
            ".npmrc",
            ".git/hooks",
            ".bashrc",
            ".envrc",
            ".git/config",
            "linked/hooks",
            "linked/config",
            "linked/x",
            "missing/a",
            "missing/b",
            "missing/c",
            ".profile",
        ]
        .iter()
        .map(|p| top.join(p))
        .collect();
        let one_by_one: Vec<bool> = paths
            .iter()
            .map(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        assert_eq!(
            one_by_one,
            [
                true, true, true, false, false, true, false, false, false, false, false, false
            ]
        );
        assert_eq!(exist(&paths), one_by_one);
    }
}
