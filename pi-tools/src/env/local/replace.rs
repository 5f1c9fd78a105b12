//! Replacing a file's content: atomically (a temporary file renamed over the target, both
//! through one handle of the target's directory), under an advisory lock shared with other
//! processes, keeping the target's mode (but not its set-ID bits) and owner, and cleaning up
//! what killed writers left.
//!
//! The lock is `flock` on the target file itself, taken before reading and held until the
//! new content has been renamed into place. A writer that waited for it checks afterwards
//! that the name still leads to the file it locked (a rename may have replaced it) and
//! starts again if not, so two processes editing one file never lose an update.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{Access, AtFlags, FileType, FlockOperation, Mode, OFlags, Stat};
use rustix::io::Errno;

use super::beneath::{Last, Roots, require_regular, stat_at};
use crate::env::path::{MAX_LINKS, too_many_links};
use crate::env::temp_name::{TEMP_MARK, temp_file_owner};

/// The directory of the file `current` names, opened beneath `roots`, with the path of that
/// directory and the file's name; `named` is the path as asked for, for the message.
pub(super) fn open_parent<'p>(
    roots: &Roots,
    current: &'p Path,
    named: &Path,
) -> io::Result<(OwnedFd, &'p Path, &'p OsStr)> {
    let (Some(parent), Some(name)) = (current.parent(), current.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", named.display()),
        ));
    };
    let dir = roots.open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
        Last::Follow,
    )?;
    Ok((dir, parent, name))
}

/// Where the entry `name` of the opened directory `dir` really is (the directory as the
/// kernel knows it, plus the name); `fallback` when the kernel does not say.
pub(super) fn real_location(dir: &OwnedFd, name: &OsStr, fallback: &Path) -> PathBuf {
    let fd = std::os::fd::AsRawFd::as_raw_fd(dir);
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|dir| dir.join(name))
        .unwrap_or_else(|_| fallback.to_path_buf())
}

/// The file a write replaces: a handle of its directory and its name there (symbolic links
/// at the end of the path already followed).
pub(crate) struct Target {
    dir: OwnedFd,
    name: OsString,
    /// The path as followed, for messages.
    path: PathBuf,
}

impl Target {
    /// Finds the file `path` names: its directory opened inside the roots, and a final
    /// symbolic link followed (a link keeps pointing at its target, which is replaced).
    pub(crate) fn locate(roots: &Roots, path: &Path) -> io::Result<Target> {
        let mut current = path.to_path_buf();
        for _ in 0..MAX_LINKS {
            let (dir, parent, name) = open_parent(roots, &current, path)?;
            match stat_at(dir.as_fd(), name) {
                Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                    let target = rustix::fs::readlinkat(&dir, name, Vec::new())?;
                    current = parent.join(OsStr::from_bytes(target.as_bytes()));
                }
                _ => {
                    return Ok(Target {
                        dir,
                        name: name.to_os_string(),
                        path: current,
                    });
                }
            }
        }
        Err(too_many_links(path))
    }

    /// The target's real location (its directory as the kernel knows it, plus its name).
    pub(crate) fn real_path(&self) -> PathBuf {
        real_location(&self.dir, &self.name, &self.path)
    }

    /// Opens the existing target and takes its lock (waiting for other writers); `None`
    /// when there is no file yet. Refuses what must not be replaced.
    pub(crate) fn lock(&self) -> io::Result<Option<Locked>> {
        for _ in 0..1000 {
            let file = match rustix::fs::openat(
                &self.dir,
                &*self.name,
                OFlags::RDONLY
                    | OFlags::NONBLOCK
                    | OFlags::NOFOLLOW
                    | OFlags::NOCTTY
                    | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => return Ok(None),
                Err(err) => return Err(err.into()),
            };
            let st = rustix::fs::fstat(&file)?;
            require_regular(&self.path, &st)?;
            rustix::fs::flock(&file, FlockOperation::LockExclusive)?;
            // The file we waited for may have been replaced meanwhile: lock the new one.
            match stat_at(self.dir.as_fd(), &self.name) {
                Ok(now) if now.st_ino == st.st_ino && now.st_dev == st.st_dev => {
                    let st = rustix::fs::fstat(&file)?;
                    self.check_replaceable(&st)?;
                    return Ok(Some(Locked {
                        file: File::from(file),
                        stat: st,
                    }));
                }
                _ => continue,
            }
        }
        Err(io::Error::other(format!(
            "{} kept being replaced by another process; try again",
            self.path.display()
        )))
    }

    /// What the shell would refuse, and what a rename would break.
    fn check_replaceable(&self, st: &Stat) -> io::Result<()> {
        let shown = self.path.display();
        if rustix::fs::accessat(&self.dir, &*self.name, Access::WRITE_OK, AtFlags::EACCESS).is_err()
        {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{shown} is not writable by this process (mode {:o}), so it was left unchanged. Change its permissions first if it should be edited",
                    st.st_mode & 0o7777
                ),
            ));
        }
        let euid = rustix::process::geteuid();
        if !euid.is_root() && st.st_uid != euid.as_raw() {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{shown} belongs to another user (uid {}); replacing it would make it this process's, so it was left unchanged. Ask its owner to change it",
                    st.st_uid
                ),
            ));
        }
        if st.st_nlink > 1 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{shown} has {} hard links; replacing it would separate it from the others, so it was left unchanged. Change it in place with bash (e.g. a `>` redirection), or remove the other links first",
                    st.st_nlink
                ),
            ));
        }
        Ok(())
    }

    /// Writes `data` to a temporary file in the same directory and renames it over the
    /// target. `existing` (the locked target's stat) gives the mode and owner to keep.
    pub(crate) fn replace(
        &self,
        existing: Option<&Stat>,
        data: &[u8],
        fsync: bool,
    ) -> io::Result<()> {
        clean_stale_temps(&self.dir);
        let (temp_name, temp) = create_temp(&self.dir, &self.name)?;
        let mut temp = File::from(temp);
        let result = (|| {
            if let Some(st) = existing {
                let euid = rustix::process::geteuid();
                let egid = rustix::process::getegid();
                if st.st_uid != euid.as_raw() || st.st_gid != egid.as_raw() {
                    // Root keeps anybody's ownership; others keep at least their group when
                    // they are in it (a failure there leaves the group theirs).
                    let owner = rustix::process::Uid::from_raw(st.st_uid);
                    let group = rustix::process::Gid::from_raw(st.st_gid);
                    let kept = rustix::fs::fchown(&temp, Some(owner), Some(group));
                    if kept.is_err() && euid.is_root() {
                        kept?;
                    }
                }
                // After chown. The set-user-ID and set-group-ID bits are not carried over:
                // new content is a new program, as the kernel has it when a file is written
                // to, and a sandboxed write must not make a set-ID file (the sticky bit stays).
                rustix::fs::fchmod(&temp, Mode::from_raw_mode(st.st_mode & 0o1777))?;
            }
            temp.write_all(data)?;
            if fsync {
                temp.sync_all()?;
            }
            rustix::fs::renameat(&self.dir, &temp_name, &self.dir, &*self.name)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&self.dir, &temp_name, AtFlags::empty());
        }
        result
    }
}

/// The target, opened and locked.
pub(crate) struct Locked {
    file: File,
    stat: Stat,
}

impl Locked {
    /// The target's stat when it was locked.
    pub(crate) fn stat(&self) -> &Stat {
        &self.stat
    }

    /// Reads the whole file (its size is known, so the buffer is allocated once).
    pub(crate) fn read_all(&mut self, max: Option<u64>) -> io::Result<Vec<u8>> {
        let size = u64::try_from(self.stat.st_size).unwrap_or(0);
        let cap = max.map_or(u64::MAX, |m| m.saturating_add(1));
        let mut bytes = Vec::with_capacity(usize::try_from(size.min(cap)).unwrap_or(0));
        (&mut self.file).take(cap).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// Names longer than this are shortened in the temporary file's name (names are limited to
/// 255 bytes).
const TEMP_NAME_KEEP: usize = 180;

fn create_temp(dir: &OwnedFd, name: &OsStr) -> io::Result<(OsString, OwnedFd)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let bytes = name.as_bytes();
    let kept = &bytes[..bytes.len().min(TEMP_NAME_KEEP)];
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut temp = Vec::with_capacity(kept.len() + 40);
        temp.push(b'.');
        temp.extend_from_slice(kept);
        temp.extend_from_slice(format!("{TEMP_MARK}{}.{n}.tmp", std::process::id()).as_bytes());
        let temp = OsString::from_vec(temp);
        // New files get the usual 0o666 less the umask, like any other created file.
        match rustix::fs::openat(
            dir,
            &*temp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        ) {
            Ok(fd) => return Ok((temp, fd)),
            Err(Errno::EXIST) => continue,
            Err(err) => return Err(err.into()),
        }
    }
}

/// Removes the temporary files of writers that no longer run (killed mid-write) from `dir`.
/// Done on every write (one listing of the directory), so no directory keeps them longer
/// than until its next write.
fn clean_stale_temps(dir: &OwnedFd) {
    let Ok(mut entries) = rustix::fs::Dir::read_from(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.by_ref() {
        let Ok(entry) = entry else { break };
        let name = entry.file_name().to_bytes();
        let Some(pid) = temp_file_owner(name) else {
            continue;
        };
        if pid == me || process_alive(pid) {
            continue;
        }
        let _ = rustix::fs::unlinkat(dir, entry.file_name(), AtFlags::empty());
    }
}

fn process_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    // EPERM: it exists, under another user.
    !matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
}
