//! Files watched for a running `pi-tools mcp`: its configuration file and the files its
//! trust covers. A change to any of them (written in place, replaced by a rename as editors
//! save, deleted, made again) is one tick of [`FileWatch::changed`], whatever the bursts of
//! events it came in: notify's debouncer gathers them.
//!
//! The directories holding the files are watched, not the files: a file replaced by a
//! rename is a new file, which a watch on the old one would never see, and a file deleted
//! and written again is seen in its directory too. The paths are compared canonical (a
//! file's directory resolved, and the file itself when it is a link), so a file named by
//! a relative path or through a link is recognised in the events.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::sync::watch;

/// How long the events of one change are gathered: an editor's save (write a copy, rename
/// it over the file) is one change, not three.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// Watches a set of files; see the module's documentation.
pub(super) struct FileWatch {
    debouncer: Debouncer<RecommendedWatcher>,
    /// The directories watched now.
    dirs: BTreeSet<PathBuf>,
    /// The paths whose events count, canonical.
    files: Arc<Mutex<BTreeSet<PathBuf>>>,
    changed: watch::Receiver<u64>,
}

impl FileWatch {
    /// A watch of nothing yet; `Err` with the reason when the system's watcher cannot start
    /// (no inotify instance left, for one).
    pub(super) fn new() -> Result<FileWatch, String> {
        let files: Arc<Mutex<BTreeSet<PathBuf>>> = Arc::default();
        let (tick, changed) = watch::channel(0u64);
        let watched = Arc::clone(&files);
        let debouncer = new_debouncer(DEBOUNCE, move |events: DebounceEventResult| {
            let events = match events {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(
                        "watching the configuration failed ({e}); a change made now may be seen only at the next one"
                    );
                    return;
                }
            };
            let files = watched.lock().unwrap_or_else(|e| e.into_inner());
            if events.iter().any(|event| files.contains(&event.path)) {
                tick.send_modify(|n| *n += 1);
            }
        })
        .map_err(|e| e.to_string())?;
        Ok(FileWatch {
            debouncer,
            dirs: BTreeSet::new(),
            files,
            changed,
        })
    }

    /// Watches `files` from now on, in place of those watched before. A file whose
    /// directory does not exist is left out (a directory itself can be among `files`: its
    /// parent is watched for it to appear).
    pub(super) fn watch(&mut self, files: &[PathBuf]) {
        let mut names = BTreeSet::new();
        for file in files {
            names.extend(canonical_names(file));
        }
        let dirs: BTreeSet<PathBuf> = names
            .iter()
            .filter_map(|name| name.parent().map(Path::to_path_buf))
            .collect();
        for gone in self.dirs.difference(&dirs) {
            // A directory removed meanwhile is not watched any more anyway.
            let _ = self.debouncer.watcher().unwatch(gone);
        }
        let mut watched = BTreeSet::new();
        for dir in &dirs {
            if self.dirs.contains(dir) {
                watched.insert(dir.clone());
                continue;
            }
            match self
                .debouncer
                .watcher()
                .watch(dir, RecursiveMode::NonRecursive)
            {
                Ok(()) => {
                    watched.insert(dir.clone());
                }
                Err(e) => tracing::warn!(
                    "{} cannot be watched ({e}), so a change to the files in it is seen only after a restart",
                    dir.display()
                ),
            }
        }
        self.dirs = watched;
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = names;
    }

    /// Waits for the next change of a file watched (changes since the last call count).
    pub(super) async fn changed(&mut self) {
        if self.changed.changed().await.is_err() {
            // The watcher's thread is gone: no change will come.
            std::future::pending::<()>().await;
        }
    }
}

/// The paths an event about `file` may carry: its name in its canonical directory, and the
/// file it links to when it is a link. Nothing when its directory cannot be resolved.
fn canonical_names(file: &Path) -> Vec<PathBuf> {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let (Some(dir), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Vec::new();
    };
    let Ok(dir) = std::fs::canonicalize(dir) else {
        tracing::debug!(
            "the directory of {} does not exist, so it is not watched",
            file.display()
        );
        return Vec::new();
    };
    let mut names = vec![dir.join(name)];
    if let Ok(target) = std::fs::canonicalize(&absolute)
        && !names.contains(&target)
    {
        names.push(target);
    }
    names
}
