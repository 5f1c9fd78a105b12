//! `pi-tools mcp` following its configuration file: each change to the file (or to a file
//! its trust covers) reads it again through the loader and the consent of the start
//! ([`ConfigSource::load_trusted`]), and the declared tools it now says are taken in
//! ([`crate::config::reread`]); the rest of the file waits for a restart.
//!
//! A reading that is refused (content found in the working directory that is not trusted,
//! as any change to trusted content is until `pi-tools trust` records it; a syntax error; a
//! declared tool that does not check) changes nothing: the tools served stay as they were,
//! and the log says what was refused and how to fix it. A found file's trust record is
//! watched too, so `pi-tools trust` takes effect in the running server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::reread::{Reread, reread};
use crate::config::trust::{TrustStore, files_read};
use crate::config::{Config, ConfigSource};
use crate::tool::ToolDefinition;

use super::watch::FileWatch;

/// A configuration file followed; see the module's documentation.
pub(super) struct Reloader {
    source: ConfigSource,
    /// The file, as the source names it.
    path: PathBuf,
    /// The tools the file is checked against, as at the start (this binary's own, without
    /// the mounted servers' and the declared ones).
    registered: Vec<Arc<dyn ToolDefinition>>,
    /// The trust records consulted, the user's as at the start.
    store: Option<TrustStore>,
    /// The configuration as the server runs on it: as loaded at the start, with the
    /// declared tools of each reading taken in since.
    running: Config,
    watch: FileWatch,
    /// The refusal logged last, until a reading is taken in: one edit may come as more than
    /// one change (a write's events across the debounce), and its refusal is said once.
    refused: Option<String>,
}

impl Reloader {
    /// Follows the file `source` names, loaded as `loaded` against `registered`; `None` for
    /// the embedded default (no file), or when the system cannot watch files (logged: the
    /// server then runs on the configuration of its start).
    pub(super) fn start(
        source: &ConfigSource,
        registered: &[Arc<dyn ToolDefinition>],
        loaded: &Config,
    ) -> Option<Reloader> {
        let path = source.path()?.to_path_buf();
        let watch = match FileWatch::new() {
            Ok(watch) => watch,
            Err(e) => {
                tracing::warn!(
                    "{source} cannot be watched ({e}), so a change to it applies only after a restart of pi-tools mcp"
                );
                return None;
            }
        };
        let mut reloader = Reloader {
            source: source.clone(),
            path,
            registered: registered.to_vec(),
            store: TrustStore::from_env(),
            running: loaded.clone(),
            watch,
            refused: None,
        };
        reloader.watch_files();
        Some(reloader)
    }

    /// Watches the file and, for a file found in the working directory, what its trust
    /// covers: the files it reads and the trust records.
    fn watch_files(&mut self) {
        let mut files = vec![self.path.clone()];
        if let ConfigSource::WorkingDirectory(_) = self.source {
            let dir = std::fs::canonicalize(&self.path)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| PathBuf::from("."));
            files.extend(files_read(&self.running, &dir));
            // The records, and their directory for `pi-tools trust`'s first record.
            if let Some(store) = &self.store {
                files.push(store.dir().join(crate::config::trust::TRUST_FILE));
                files.push(store.dir().to_path_buf());
            }
        }
        self.watch.watch(&files);
    }

    /// Waits for the next change of a file watched.
    pub(super) async fn changed(&mut self) {
        self.watch.changed().await;
    }

    /// Reads the file again. Returns what to take in when its declared tools changed (the
    /// caller serves it, then calls [`Reloader::taken_in`], or [`Reloader::refuse`] when it
    /// cannot be served); `None` when they did not or the reading was refused (which is
    /// logged, and changes nothing).
    pub(super) fn reread(&mut self) -> Option<Reread> {
        let next = match self
            .source
            .load_trusted(&self.registered, self.store.as_ref())
        {
            Ok((next, _)) => next,
            Err(e) => {
                self.refuse(&e.to_string());
                return None;
            }
        };
        let reread = reread(&self.running, &next);
        if !reread.waiting.is_empty() {
            tracing::warn!(
                "{}: a running server takes in only the declared tools, so what changed in {} applies only after a restart of pi-tools mcp",
                self.source,
                reread.waiting.join(", ")
            );
        }
        if !reread.changes_tools(&self.running) {
            self.refused = None;
            self.watch_files();
            return None;
        }
        Some(reread)
    }

    /// Logs that the file's new content was refused for `refusal` (once for one edit, which
    /// may come as more than one change); nothing of it is taken in.
    pub(super) fn refuse(&mut self, refusal: &str) {
        if self.refused.as_deref() != Some(refusal) {
            tracing::warn!(
                "{} changed, but its new content was refused, so the tools served stay as they were. {refusal}",
                self.source
            );
            self.refused = Some(refusal.to_owned());
        }
        // A directory that appeared meanwhile (the trust records') is watched now.
        self.watch_files();
    }

    /// Takes in `reread`, which the server now serves; returns the line to log.
    pub(super) fn taken_in(&mut self, reread: &Reread) -> String {
        reread.apply(&mut self.running);
        self.refused = None;
        self.watch_files();
        let names: Vec<&str> = reread.declared.iter().map(|d| d.name.as_str()).collect();
        format!(
            "{} changed: the declared tools are now {}",
            self.source,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )
    }
}
