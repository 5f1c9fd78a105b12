//! Local files that belong to a session (bash's spill files) and are deleted when it ends,
//! whichever environment the session's tools ran in.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

/// The directory bash's spill files go to, in the process's temporary directory (they hold
/// output read on this side, whichever environment ran the command).
#[cfg(feature = "process")]
pub(crate) fn spill_dir() -> PathBuf {
    std::env::temp_dir().join("pi-tools-bash")
}

/// The files a session keeps until it ends.
#[derive(Debug, Default)]
pub(crate) struct SessionFiles(Mutex<Vec<PathBuf>>);

impl SessionFiles {
    /// Keeps `path` for deletion at the session's end.
    pub(crate) fn keep(&self, path: PathBuf) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(path);
    }

    /// Deletes every kept file (one already gone is no error: its purpose is served).
    pub(crate) fn remove_all(&self) {
        let files = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        for path in files {
            let _ = std::fs::remove_file(path);
        }
    }
}
