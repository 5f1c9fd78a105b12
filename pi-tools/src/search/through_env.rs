//! Searches through an execution environment's own file operations, for files that are not
//! on this machine and an environment that could not search next to them: the same walk and
//! the same matching as locally ([`EnvWalk`]), so the result is the one a local search gives.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::task::JoinHandle;
use tokio_util::io::SyncIoBridge;
use tokio_util::sync::CancellationToken;

use super::env_walk::EnvWalk;
use super::path_glob::PathGlob;
use super::scan::{Collector, FileHits, SearchOutcome, SearchSpec, reason, search_reader};
use super::skipped::Skipped;
use super::walk::Kind;
use crate::env::ExecutionEnv;

/// Files read and searched at once (each read is a round trip).
const READ_AHEAD: usize = 16;

/// A content search through the environment's own file operations (its files are not on this machine,
/// and it could not search next to them): the same walk and the same matching as locally,
/// each file streamed from the environment into the searcher on a blocking thread.
pub(super) async fn search_through_env(
    env: Arc<dyn ExecutionEnv>,
    spec: Arc<SearchSpec>,
    cancel: &CancellationToken,
) -> SearchOutcome {
    let mut collector = Collector::new(&spec);
    if spec.single_file {
        let name = spec.single_file_name();
        // Only a regular file is read (a FIFO would block), as locally.
        if env.metadata(&spec.root).await.is_ok_and(|m| m.is_file) {
            let root = spec.root.clone();
            match search_env_file(Arc::clone(&env), Arc::clone(&spec), root, name).await {
                Ok(Some(hits)) => collector.accept(hits),
                Ok(None) => {}
                Err(err) => collector.outcome.skipped.note(".", &reason(&err)),
            }
        }
        collector.outcome.cancelled = cancel.is_cancelled();
        return collector.outcome;
    }
    let mut walk = EnvWalk::new(env.as_ref(), &spec.root, spec.glob.as_ref()).await;
    // Each read is a round trip (or several) to the remote side: a few files are read and
    // searched at once, ahead of the walk, and their results taken in walk order.
    let mut pending: VecDeque<PendingFile> = VecDeque::new();
    let mut walking = true;
    loop {
        while walking && pending.len() < READ_AHEAD && !cancel.is_cancelled() {
            match walk.next().await {
                Some(entry)
                    if entry.kind == Kind::File
                        || (entry.kind == Kind::Link && entry.link_to_file) =>
                {
                    let search = search_env_file(
                        Arc::clone(&env),
                        Arc::clone(&spec),
                        entry.path,
                        entry.rel.clone(),
                    );
                    pending.push_back(PendingFile {
                        rel: entry.rel,
                        search: tokio::spawn(search),
                    });
                }
                Some(_) => {}
                None => walking = false,
            }
        }
        let Some(PendingFile { rel, search }) = pending.pop_front() else {
            break;
        };
        let searched = search
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(format!("the search failed: {e}"))));
        match searched {
            Ok(Some(hits)) => collector.accept(hits),
            Ok(None) => {}
            Err(err) => collector.outcome.skipped.note(&rel, &reason(&err)),
        }
        if collector.done || cancel.is_cancelled() {
            break;
        }
    }
    for file in pending {
        file.search.abort();
    }
    // As locally, the directories that could not be read come after the files.
    let mut outcome = collector.outcome;
    outcome.skipped.first.extend(walk.skipped.first);
    outcome.skipped.count += walk.skipped.count;
    outcome.skipped.first.truncate(Skipped::SHOWN);
    outcome.cancelled = cancel.is_cancelled();
    outcome
}

/// A file of the environment being read and searched ahead of the walk.
struct PendingFile {
    /// The file's path relative to the search's root.
    rel: String,
    /// Its search: the hits, `None` when there are none.
    search: JoinHandle<std::io::Result<Option<FileHits>>>,
}

/// Searches one file of the environment, shown as `rel`.
async fn search_env_file(
    env: Arc<dyn ExecutionEnv>,
    spec: Arc<SearchSpec>,
    path: PathBuf,
    rel: String,
) -> std::io::Result<Option<FileHits>> {
    let reader = env.open_read(&path).await?;
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let file = SyncIoBridge::new_with_handle(reader, handle.clone());
        let rewind = move |_| {
            let again = handle.block_on(env.open_read(&path))?;
            Ok(SyncIoBridge::new_with_handle(again, handle))
        };
        search_reader(&spec, file, rewind, rel)
    })
    .await
    .map_err(|e| std::io::Error::other(format!("the search failed unexpectedly: {e}")))?
}

/// Lists the paths below `root` that `glob` selects, through the environment's own file
/// operations, handing each to `visit` until it breaks: what could not be read, and whether
/// the search was cancelled.
pub(super) async fn find_through_env(
    env: &dyn ExecutionEnv,
    root: &Path,
    glob: &PathGlob,
    cancel: &CancellationToken,
    mut visit: impl FnMut(&str, bool) -> ControlFlow<()>,
) -> (Skipped, bool) {
    let mut walk = EnvWalk::new(env, root, Some(glob)).await;
    let mut cancelled = false;
    while let Some(entry) = walk.next().await {
        if cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        if visit(&entry.rel, entry.kind == Kind::Dir).is_break() {
            break;
        }
    }
    (walk.skipped, cancelled)
}
