//! The private temporary directory a sandboxed command gets as `TMPDIR`: its own, so it
//! need not be allowed to write into the shared `/tmp`; and likewise the one mounted on its
//! `/dev/shm`, so POSIX shared memory and semaphores are the session's own. Emptied when the session ends,
//! removed with the environment; the ones a killed process left behind (its pid no longer
//! runs) are removed when the next process makes its first one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A directory under the system's temporary directory, readable only by its owner, removed
/// (with everything in it) when dropped.
#[derive(Debug)]
pub struct PrivateTemp {
    path: PathBuf,
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
                    return Ok(PrivateTemp { path });
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
    // SAFETY: signal 0 only checks whether the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// A real directory (not a link) that belongs to this user.
fn own_directory(entry: &fs::DirEntry) -> bool {
    use std::os::unix::fs::MetadataExt;
    entry.metadata().is_ok_and(|meta| {
        // SAFETY: geteuid cannot fail.
        meta.is_dir() && meta.uid() == unsafe { libc::geteuid() }
    })
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}
