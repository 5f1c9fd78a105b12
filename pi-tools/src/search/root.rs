//! Where a search starts: the path it was given, resolved in its execution environment.

use std::path::PathBuf;
use std::sync::Arc;

use crate::core::ToolError;
use crate::env::local::Roots;
use crate::env::{ExecutionEnv, Metadata, resolve_path};
use crate::text::sentence;

/// A search's starting point.
pub(crate) struct SearchRoot {
    /// The absolute path the search starts from.
    pub path: PathBuf,
    /// What is there (a directory, or the one file to search).
    pub meta: Metadata,
    /// The environment's allowed roots, held open, when its files are on this machine: the
    /// walk opens everything through them. An environment whose files are elsewhere confines
    /// every path itself, and has none here.
    pub roots: Arc<Roots>,
}

/// Where a search of `raw_path` starts in `env`: resolved against its working directory,
/// with what is there and (on this machine) its allowed roots.
pub(crate) async fn search_root(
    env: &dyn ExecutionEnv,
    raw_path: &str,
) -> Result<SearchRoot, ToolError> {
    let path = resolve_path(env, raw_path);
    let meta = env.metadata(&path).await.map_err(|e| {
        ToolError::new(format!(
            "Cannot search `{raw_path}`: {} Check the path, or omit it to search the current directory.",
            sentence(&e)
        ))
    })?;
    let mut roots = Roots::default();
    if env.is_local() {
        for allowed in env.allowed_roots() {
            roots.add(allowed.clone()).map_err(|e| {
                ToolError::new(format!("Cannot search `{raw_path}`: {}", sentence(&e)))
            })?;
        }
    }
    Ok(SearchRoot {
        path,
        meta,
        roots: Arc::new(roots),
    })
}
