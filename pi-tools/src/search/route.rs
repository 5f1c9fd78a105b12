//! The one place a search's route is chosen. grep and find say what they want (a
//! [`ContentQuery`], or a glob over paths) from where they start ([`SearchStart`]); the route
//! is picked here once, by [`SearchStart::route`]: the search index, a walk of this machine's
//! files, or a walk through the environment's own file operations (its files are
//! elsewhere). Whatever the route, the result is the same.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use grep_regex::RegexMatcherBuilder;
use tokio_util::sync::CancellationToken;

use super::index::{self, Index, query_for};
use super::path_glob::PathGlob;
use super::root::{SearchRoot, search_root};
use super::scan::{SearchOutcome, SearchSpec, search, search_listed};
use super::skipped::Skipped;
use super::through_env::{find_through_env, search_through_env};
use super::walk::{WalkBase, WalkEnd, spare_cores, walk_sorted};
use crate::core::ToolError;
use crate::env::{ExecutionEnv, SearchIndex};

/// How a search reaches the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// On this machine: through the search index when it can answer, else by a walk.
    Local,
    /// Through the environment's own file operations (its files are not on this machine),
    /// one listing or read at a time.
    ThroughEnv,
}

/// What a content search looks for, and when it stops.
#[derive(Debug, Clone)]
pub struct ContentQuery {
    /// A regular expression (Rust regex syntax), or the exact text when `literal`.
    pub pattern: String,
    /// Take `pattern` as the text itself.
    pub literal: bool,
    /// Match regardless of case.
    pub ignore_case: bool,
    /// Only files whose path matches this glob (see [`PathGlob`]'s rule); blank: all.
    pub glob: Option<String>,
    /// Lines of context before and after each match.
    pub context: usize,
    /// Matches to return at most.
    pub limit: usize,
    /// Stop collecting once the formatted output would have more lines than this…
    pub max_lines: usize,
    /// …or more bytes than this.
    pub max_bytes: usize,
}

/// What a search of paths looks for, and when it stops.
#[derive(Debug, Clone)]
pub struct PathQuery {
    /// The glob the paths must match (see [`PathGlob`]'s rule).
    pub glob: String,
    /// Paths to return at most.
    pub limit: usize,
    /// Stop once the paths, one a line, are more lines than this…
    pub max_lines: usize,
    /// …or more bytes than this.
    pub max_bytes: usize,
}

/// What a search of paths found.
#[derive(Debug, Default)]
pub struct PathsFound {
    /// Each path, relative to the directory searched, in walk order; directories end in `/`.
    pub paths: Vec<String>,
    /// The limit cut them short: more paths match.
    pub more: bool,
    /// The search was cancelled before it finished.
    pub cancelled: bool,
    /// The directories that could not be read.
    pub skipped: Skipped,
    /// The directory searched could not be opened.
    pub failed: Option<std::io::Error>,
    /// Their size as lines, line ends included.
    bytes: usize,
}

impl PathsFound {
    /// Takes the path `rel` unless `limit` paths are there already; breaks once the output
    /// limits are passed (nothing more would be shown).
    fn take(&mut self, query: &PathQuery, rel: &str, is_dir: bool) -> ControlFlow<()> {
        if self.paths.len() == query.limit {
            self.more = true;
            return ControlFlow::Break(());
        }
        let mut line = rel.to_owned();
        if is_dir {
            line.push('/');
        }
        self.bytes += line.len() + 1;
        self.paths.push(line);
        if self.bytes > query.max_bytes || self.paths.len() > query.max_lines {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// Where a search starts: the path it was given, resolved in its execution environment.
pub struct SearchStart {
    env: Arc<dyn ExecutionEnv>,
    root: SearchRoot,
}

impl SearchStart {
    /// Where a search of `path` (relative to the working directory, `~` and `@` as the
    /// tools take them) starts in `env`. The error is a sentence for the model.
    pub async fn resolve(env: Arc<dyn ExecutionEnv>, path: &str) -> Result<Self, ToolError> {
        let root = search_root(env.as_ref(), path).await?;
        Ok(SearchStart { env, root })
    }

    /// Whether the search starts at a directory (else it is one file).
    pub fn is_dir(&self) -> bool {
        self.root.meta.is_dir
    }

    /// The route a search from here takes. Chosen here only.
    pub fn route(&self) -> Route {
        if self.env.is_local() {
            Route::Local
        } else {
            Route::ThroughEnv
        }
    }

    /// The search index this search may use (and may start), by the environment's
    /// [`SearchIndex`] setting; `None` on a route without one.
    fn index(&self) -> Option<Arc<Index>> {
        if self.route() != Route::Local || !self.is_dir() {
            return None;
        }
        index::for_search(self.env.cwd(), &self.root.roots, self.env.search_index())
    }

    /// Searches the contents of the files below the start (or of the one file) for
    /// `query`. The error is a sentence for the model (a bad pattern or glob).
    pub async fn contents(
        self,
        query: &ContentQuery,
        cancel: &CancellationToken,
    ) -> Result<(SearchOutcome, Route), ToolError> {
        let spec = spec(query, &self.root)?;
        let route = self.route();
        if route == Route::ThroughEnv {
            let outcome = search_through_env(self.env, Arc::new(spec), cancel).await;
            return Ok((outcome, route));
        }
        let narrowing = self.index().map(|index| {
            let query = query_for(&query.pattern, query.literal, query.ignore_case);
            (index, query)
        });
        let cancel = cancel.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            if let Some((index, query)) = narrowing
                && let Some(files) = index.candidates(&spec.root, &query, spec.glob.as_ref())
                && let Ok(base) = WalkBase::open(&spec.roots, &spec.root)
            {
                return search_listed(&spec, &base, &cancel, files);
            }
            search(&spec, &cancel)
        })
        .await
        .map_err(|e| ToolError::new(format!("The search failed unexpectedly: {e}.")))?;
        Ok((outcome, route))
    }

    /// Lists the files and directories below the start directory whose path (relative to
    /// it) matches the query's glob, in walk order: sorted by name, depth first, ignore
    /// rules kept. The error is a sentence for the model (a bad glob).
    pub async fn paths(
        self,
        query: PathQuery,
        cancel: &CancellationToken,
    ) -> Result<(PathsFound, Route), ToolError> {
        let glob = PathGlob::new(&query.glob).map_err(ToolError::new)?;
        let mut found = PathsFound::default();
        let route = self.route();
        if route == Route::ThroughEnv {
            let take = |rel: &str, is_dir| found.take(&query, rel, is_dir);
            let (skipped, cancelled) =
                find_through_env(self.env.as_ref(), &self.root.path, &glob, cancel, take).await;
            (found.skipped, found.cancelled) = (skipped, cancelled);
            return Ok((found, route));
        }
        let index = self.index();
        let cancel = cancel.clone();
        let SearchRoot {
            path: root, roots, ..
        } = self.root;
        let found = tokio::task::spawn_blocking(move || {
            let base = match WalkBase::open(&roots, &root) {
                Ok(base) => base,
                Err(e) => {
                    found.failed = Some(e);
                    return found;
                }
            };
            // The search index's list of the walk's entries, when it has one for this
            // directory: the same entries in the same order, without walking.
            if let Some(index) = index
                && index
                    .listing(&root, &glob, |rel, is_dir| found.take(&query, rel, is_dir))
                    .is_some()
            {
                return found;
            }
            let mut skipped = Skipped::default();
            let end = walk_sorted(
                &base,
                &cancel,
                spare_cores(),
                Some(&glob),
                &mut skipped,
                |entry| found.take(&query, entry.rel, entry.is_dir),
            );
            found.skipped = skipped;
            found.cancelled = end == WalkEnd::Cancelled;
            found
        })
        .await
        .map_err(|e| ToolError::new(format!("The search failed unexpectedly: {e}.")))?;
        Ok((found, route))
    }
}

/// What to search for and where, from the query: the matcher, the glob and the limits.
fn spec(query: &ContentQuery, start: &SearchRoot) -> Result<SearchSpec, ToolError> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(query.ignore_case)
        .fixed_strings(query.literal)
        .line_terminator(Some(b'\n'))
        .build(&query.pattern)
        .map_err(|e| {
            ToolError::new(format!(
                "The pattern is not a valid regular expression: {e}\nFix the pattern, or set literal: true to search for the text as it is."
            ))
        })?;
    let glob = match query.glob.as_deref().map(str::trim) {
        Some(g) if !g.is_empty() => Some(PathGlob::new(g).map_err(ToolError::new)?),
        _ => None,
    };
    Ok(SearchSpec {
        root: start.path.clone(),
        roots: Arc::clone(&start.roots),
        single_file: !start.meta.is_dir,
        matcher,
        glob,
        context: query.context,
        limit: query.limit,
        max_lines: query.max_lines,
        max_bytes: query.max_bytes,
    })
}

/// The search index of the directory `dir` (the working directory of a
/// [`LocalEnv`](crate::env::local::LocalEnv) with its search index on): started now if no search
/// has started it, then waited for up to `timeout`. `None` when it is not built by then.
/// For benchmarks and tests; a search never waits for the index.
pub fn index_stats(dir: &Path, timeout: std::time::Duration) -> Option<index::IndexStats> {
    let dir = std::path::absolute(dir).ok()?;
    index::for_search(&dir, &Arc::default(), SearchIndex::Always)?.wait_ready(timeout)
}

/// Whether this process holds a search index of the directory `dir`, built or being built.
/// Starts none. For tests: a one-shot search must start no build.
pub fn index_exists(dir: &Path) -> bool {
    std::path::absolute(dir).is_ok_and(|dir| index::exists(&dir))
}
