//! The private temporary directory a sandboxed command gets as `TMPDIR`: its own, so it
//! need not be allowed to write into the shared `/tmp`, and removed with the environment.

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
    /// Creates a fresh directory `pi-tools-sandbox-<pid>-<n>` with mode 0700.
    pub(super) fn create() -> io::Result<PrivateTemp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
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
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}
