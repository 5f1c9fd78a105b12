//! A patch's file operations applied all or nothing: every file it touches is held in its
//! mutation queue (in one order, so two patches never wait on each other), every change is
//! computed in memory first, and only when all of them apply is anything written. A write
//! that fails part way puts back what was written before it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::builtins::edit::{FileHints, editorconfig_tab_width, too_large};
use crate::core::{BoxFuture, ToolError};
use crate::env::{ExecutionEnv, MutationQueue, mutation_key, resolve_path};
use crate::text::sentence;

use super::hunks::apply_hunks;
use crate::dialect::v4a::{FileOp, Patch};

/// What the patch did to one file, for the result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileOutcome {
    /// The path as the patch wrote it.
    pub path: String,
    /// `added`, `updated`, `deleted` or `moved`.
    pub action: &'static str,
    /// For a move: the new path as the patch wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// How many hunks an update applied.
    pub hunks: usize,
}

/// A file's state as the patch leaves it, before anything is written.
#[derive(Debug, Clone)]
enum After {
    Content(String),
    Deleted,
    /// As it was, and not text: it may be deleted or replaced, not updated.
    Binary,
}

/// One file the patch touches: where it is, how it was before (for putting it back).
struct Touched {
    /// The path as the patch first wrote it, for messages.
    shown: String,
    path: PathBuf,
    before: Option<Vec<u8>>,
    after: After,
}

/// Applies `patch` in `env`, all or nothing, refusing files over `max_bytes`; `cancel`
/// stops it before anything is written.
pub async fn apply_patch_files(
    env: Arc<dyn ExecutionEnv>,
    patch: Patch,
    max_bytes: u64,
    cancel: CancellationToken,
) -> Result<Vec<FileOutcome>, ToolError> {
    let mut keys = Vec::new();
    for op in &patch.files {
        let mut paths = vec![op.path()];
        if let FileOp::Update {
            move_to: Some(to), ..
        } = op
        {
            paths.push(to);
        }
        for shown in paths {
            let path = resolve_path(&*env, shown);
            let key = mutation_key(&*env, &path).await.map_err(|e| {
                ToolError::new(format!(
                    "Could not apply the patch to {shown}: {} Nothing was changed.",
                    sentence(&e)
                ))
            })?;
            keys.push(key);
        }
    }
    keys.sort();
    keys.dedup();
    let queue = env.mutation_queue().clone();
    hold(
        queue,
        keys.into(),
        Box::pin(apply_held(env, patch, max_bytes, cancel)),
    )
    .await
}

/// Runs `operation` holding every key's turn in the mutation queue. The turns are taken in
/// sorted order, each only once the one before it is held (the next place in line is taken
/// inside the previous turn): two patches that share files never hold one file each while
/// waiting for the other's.
fn hold<T: Send + 'static>(
    queue: MutationQueue,
    mut keys: std::collections::VecDeque<PathBuf>,
    operation: BoxFuture<'static, T>,
) -> BoxFuture<'static, T> {
    match keys.pop_front() {
        None => operation,
        Some(first) => {
            let next = queue.clone();
            Box::pin(queue.run(first, async move { hold(next, keys, operation).await }))
        }
    }
}

/// Computes every file's new state, then writes them all.
async fn apply_held(
    env: Arc<dyn ExecutionEnv>,
    patch: Patch,
    max_bytes: u64,
    cancel: CancellationToken,
) -> Result<Vec<FileOutcome>, ToolError> {
    let mut state = State::new(max_bytes);
    let mut outcomes = Vec::new();
    for (index, op) in patch.files.into_iter().enumerate() {
        // Which operation failed, for the answers of a reply whose items are one patch.
        apply_op(&*env, &mut state, &mut outcomes, op)
            .await
            .map_err(|e| e.with_details(json!({ "operation": index })))?;
    }
    if cancel.is_cancelled() {
        return Err(ToolError::new(
            "The patch was cancelled before anything was written; nothing was changed.",
        ));
    }
    write_all(&*env, state.files).await?;
    Ok(outcomes)
}

/// Computes one operation's change into `state`, and its outcome.
async fn apply_op(
    env: &dyn ExecutionEnv,
    state: &mut State,
    outcomes: &mut Vec<FileOutcome>,
    op: FileOp,
) -> Result<(), ToolError> {
    let nothing = "Nothing was changed in any file";
    match op {
        FileOp::Add { path, content } => {
            touch(env, state, &path).await?;
            set(state, &path, After::Content(content));
            outcomes.push(outcome(path, "added", None, 0));
        }
        FileOp::Delete { path } => {
            touch(env, state, &path).await?;
            if matches!(
                state.get(&path).map(|t| &t.after),
                Some(After::Deleted) | None
            ) {
                return Err(ToolError::new(format!(
                    "The patch deletes {path}, which does not exist. {nothing}; resend the patch without that `*** Delete File:` section."
                )));
            }
            set(state, &path, After::Deleted);
            outcomes.push(outcome(path, "deleted", None, 0));
        }
        FileOp::Update {
            path,
            move_to,
            hunks,
        } => {
            let Some(text) = current(env, state, &path).await? else {
                return Err(ToolError::new(format!(
                    "The patch updates {path}, which does not exist. {nothing}; check the path, or create the file with `*** Add File:`."
                )));
            };
            let new = if hunks.is_empty() {
                text
            } else {
                let resolved = resolve_path(env, &path);
                let hints = FileHints {
                    tab_width: editorconfig_tab_width(env, &resolved).await,
                };
                apply_hunks(&text, &hunks, &path, hints)
                    .map_err(|refusal| {
                        let which = match (refusal.hunk, refusal.line) {
                            (Some(n), Some(line)) => {
                                format!("Hunk {n} of {path} (line {line} of the patch)")
                            }
                            _ => format!("The hunks of {path}"),
                        };
                        ToolError::new(format!(
                            "{which} could not be applied: {} {nothing}. Read {path} again and resend the whole patch with that hunk's context and `-` lines copied from the file as it is now.",
                            refusal.reason.trim_end()
                        ))
                    })?
                    .content
            };
            let count = hunks.len();
            match move_to {
                Some(to) => {
                    touch(env, state, &to).await?;
                    set(state, &path, After::Deleted);
                    set(state, &to, After::Content(new));
                    outcomes.push(outcome(path, "moved", Some(to), count));
                }
                None => {
                    set(state, &path, After::Content(new));
                    outcomes.push(outcome(path, "updated", None, count));
                }
            }
        }
    }
    Ok(())
}

fn outcome(path: String, action: &'static str, to: Option<String>, hunks: usize) -> FileOutcome {
    FileOutcome {
        path,
        action,
        to,
        hunks,
    }
}

/// The files the patch touches, by their mutation key (one file however the patch spells
/// its path), and the key of each spelling.
struct State {
    files: BTreeMap<PathBuf, Touched>,
    keys: BTreeMap<String, PathBuf>,
    /// The largest file the patch reads (`[tool.edit] max_file_bytes`).
    max_bytes: u64,
}

impl State {
    fn new(max_bytes: u64) -> Self {
        State {
            files: BTreeMap::new(),
            keys: BTreeMap::new(),
            max_bytes,
        }
    }

    fn get(&self, shown: &str) -> Option<&Touched> {
        self.keys.get(shown).and_then(|key| self.files.get(key))
    }
}

/// Records `shown`'s state before the patch, once.
async fn touch(env: &dyn ExecutionEnv, state: &mut State, shown: &str) -> Result<(), ToolError> {
    if state.keys.contains_key(shown) {
        return Ok(());
    }
    let path = resolve_path(env, shown);
    let key = mutation_key(env, &path).await.map_err(|e| {
        ToolError::new(format!(
            "Could not apply the patch to {shown}: {} Nothing was changed in any file.",
            sentence(&e)
        ))
    })?;
    state.keys.insert(shown.to_owned(), key.clone());
    if state.files.contains_key(&key) {
        return Ok(());
    }
    let before = match env.metadata(&path).await {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(ToolError::new(format!(
                "Could not read {shown}: {} Nothing was changed in any file.",
                sentence(&e)
            )));
        }
        Ok(meta) if meta.is_dir => {
            return Err(ToolError::new(format!(
                "{shown} is a directory, not a file. Nothing was changed in any file; resend the patch with the path of a file."
            )));
        }
        Ok(meta) if meta.len > state.max_bytes => {
            return Err(ToolError::new(format!(
                "{} Nothing was changed in any file.",
                too_large(shown, state.max_bytes)
            )));
        }
        Ok(_) => Some(env.read_file(&path).await.map_err(|e| {
            ToolError::new(format!(
                "Could not read {shown}: {} Nothing was changed in any file.",
                sentence(&e)
            ))
        })?),
    };
    let after = match &before {
        Some(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => After::Content(text.to_owned()),
            Err(_) => After::Binary,
        },
        None => After::Deleted,
    };
    state.files.insert(
        key,
        Touched {
            shown: shown.to_owned(),
            path,
            before,
            after,
        },
    );
    Ok(())
}

/// `shown`'s text as the patch has left it so far (`None`: it does not exist).
async fn current(
    env: &dyn ExecutionEnv,
    state: &mut State,
    shown: &str,
) -> Result<Option<String>, ToolError> {
    touch(env, state, shown).await?;
    match state.get(shown).map(|t| &t.after) {
        Some(After::Content(text)) => Ok(Some(text.clone())),
        Some(After::Binary) => Err(ToolError::new(format!(
            "{shown} is not UTF-8 text, so the patch cannot change it safely. Nothing was changed in any file; use bash for binary files."
        ))),
        Some(After::Deleted) | None => Ok(None),
    }
}

fn set(state: &mut State, shown: &str, after: After) {
    let key = state.keys.get(shown);
    if let Some(touched) = key.and_then(|key| state.files.get_mut(key)) {
        touched.after = after;
    }
}

/// Writes every changed file; on a failure, puts back those already written.
async fn write_all(
    env: &dyn ExecutionEnv,
    files: BTreeMap<PathBuf, Touched>,
) -> Result<(), ToolError> {
    let mut done: Vec<&Touched> = Vec::new();
    for touched in files.values() {
        let shown = &touched.shown;
        let unchanged = match (&touched.before, &touched.after) {
            (None, After::Deleted) | (_, After::Binary) => true,
            (Some(before), After::Content(text)) => before == text.as_bytes(),
            _ => false,
        };
        if unchanged {
            continue;
        }
        let written = match &touched.after {
            After::Content(text) => write_new(env, touched, text).await,
            After::Deleted | After::Binary => env.remove_file(&touched.path).await,
        };
        if let Err(e) = written {
            let restored = restore(env, &done).await;
            return Err(ToolError::new(format!(
                "Could not write {shown}: {} {}",
                sentence(&e),
                if restored {
                    "The files written before it were put back, so nothing was changed."
                } else {
                    "Some files written before it could not be put back; read them to see their state."
                }
            )));
        }
        done.push(touched);
    }
    Ok(())
}

/// Writes `text` to the touched file, making its directory when the file is new.
async fn write_new(env: &dyn ExecutionEnv, touched: &Touched, text: &str) -> std::io::Result<()> {
    if touched.before.is_none()
        && let Some(parent) = touched.path.parent()
    {
        env.create_dir_all(parent).await?;
    }
    env.write_file(&touched.path, text.as_bytes().to_vec())
        .await
}

/// Puts the files written so far back as they were; whether all of them could be.
async fn restore(env: &dyn ExecutionEnv, done: &[&Touched]) -> bool {
    let mut all = true;
    for touched in done.iter().rev() {
        let back = match &touched.before {
            Some(bytes) => env.write_file(&touched.path, bytes.clone()).await,
            None => env.remove_file(&touched.path).await,
        };
        all &= back.is_ok();
    }
    all
}
