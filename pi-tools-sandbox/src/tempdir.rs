//! The private temporary directory a sandboxed command gets as `TMPDIR`: its own, so it
//! need not be allowed to write into the shared `/tmp`; and likewise the one mounted on its
//! `/dev/shm`, so POSIX shared memory and semaphores are the session's own. Emptied when the session ends,
//! removed with the environment; the ones a killed process left behind (its pid no longer
//! runs) are removed when the next process makes its first one. A sleeping session's
//! empty directory is removed and made again, at the same path, before its next command.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A directory under the system's temporary directory, readable only by its owner, removed
/// (with everything in it) when dropped.
#[derive(Debug)]
pub struct PrivateTemp {
    path: PathBuf,
    /// Removed while its session sleeps (it was empty): made again before the next command.
    asleep: AtomicBool,
}

impl PrivateTemp {
    /// Creates a fresh directory `pi-tools-sandbox-<pid>-<n>` with mode 0700 in the
    /// system's temporary directory.
    pub(super) fn create() -> io::Result<PrivateTemp> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        Self::create_in(&std::env::temp_dir(), &SWEPT)
    }

    /// The same in `/dev/shm`, for a command's POSIX shared memory (mounted on `/dev/shm`
    /// in its mount namespace); `None` where there is no `/dev/shm` to make one in.
    pub(super) fn create_shm() -> Option<PrivateTemp> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let base = Path::new("/dev/shm");
        let is_dir = fs::symlink_metadata(base).is_ok_and(|m| m.is_dir());
        is_dir.then(|| Self::create_in(base, &SWEPT).ok()).flatten()
    }

    fn create_in(base: &Path, swept: &std::sync::Once) -> io::Result<PrivateTemp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        swept.call_once(|| remove_stale(base));
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("pi-tools-sandbox-{}-{n}", std::process::id()));
            let mut builder = fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            match builder.create(&path) {
                Ok(()) => {
                    let path = fs::canonicalize(&path)?;
                    return Ok(PrivateTemp {
                        path,
                        asleep: AtomicBool::new(false),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "the sandbox's private temporary directory cannot be created in {} ({e}); set TMPDIR to a writable directory or [sandbox] mode = \"off\"",
                            base.display()
                        ),
                    ));
                }
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session sleeps: the directory goes if it is empty (`rmdir` decides, so nothing
    /// written meanwhile is lost).
    pub(crate) fn sleep(&self) {
        if !self.asleep.load(Ordering::Acquire) && fs::remove_dir(&self.path).is_ok() {
            self.asleep.store(true, Ordering::Release);
        }
    }

    /// Before a command: the directory a sleeping session gave up is made again at its
    /// path, mode 0700. One found there already must be a directory of this user's that no
    /// one else can enter (another user could have made one in the shared temporary
    /// directory to read what commands leave in it); otherwise the command is refused.
    #[cfg_attr(not(feature = "process"), allow(dead_code))]
    pub(crate) fn wake(&self) -> io::Result<()> {
        if !self.asleep.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut builder = fs::DirBuilder::new();
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        match builder.create(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                use std::os::unix::fs::MetadataExt;
                let meta = fs::symlink_metadata(&self.path)?;
                let ours = meta.uid() == rustix::process::geteuid().as_raw();
                if !meta.is_dir() || !ours || meta.mode() & 0o077 != 0 {
                    return Err(io::Error::other(format!(
                        "The sandbox's private temporary directory {} was taken by something else while the session slept; the command did not run. Start a new session.",
                        self.path.display()
                    )));
                }
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "the sandbox's private temporary directory {} cannot be made again ({e}); set TMPDIR to a writable directory or [sandbox] mode = \"off\"",
                        self.path.display()
                    ),
                ));
            }
        }
        self.asleep.store(false, Ordering::Release);
        Ok(())
    }

    /// Removes everything in the directory (the session is over), keeping it for the
    /// environment's next command.
    pub(crate) fn clear(&self) {
        let Ok(entries) = fs::read_dir(&self.path) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = match entry.file_type() {
                Ok(kind) if kind.is_dir() => fs::remove_dir_all(&path),
                _ => fs::remove_file(&path),
            };
        }
    }
}

/// Removes the private directories in `base` whose process no longer runs (the owner was
/// killed before it could remove them). Only this user's own: another user's are left alone.
fn remove_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("pi-tools-sandbox-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if pid <= 0 || process_runs(pid) || !own_directory(&entry) {
            continue;
        }
        let _ = fs::remove_dir_all(entry.path());
    }
}

/// Whether a process with this pid exists (one that is not ours counts too: not stale).
fn process_runs(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    // Signal 0 only checks whether the process exists.
    rustix::process::test_kill_process(pid) != Err(rustix::io::Errno::SRCH)
}

/// A real directory (not a link) that belongs to this user.
fn own_directory(entry: &fs::DirEntry) -> bool {
    use std::os::unix::fs::MetadataExt;
    entry
        .metadata()
        .is_ok_and(|meta| meta.is_dir() && meta.uid() == rustix::process::geteuid().as_raw())
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}
