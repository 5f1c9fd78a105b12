//! The ordered, ignore-aware directory walk shared by grep and find, and the glob rule both
//! use to pick paths.
//!
//! Hidden files are included, `.gitignore` and `.ignore` files are respected hierarchically
//! (also in the search directory's parents, and also outside a git repository), and `.git`
//! itself is never entered. Entries come in a deterministic order: each directory's entries
//! sorted by name, depth first. The walk stops as soon as the visitor says so or the call is
//! cancelled, so a limited query never scans the whole tree.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

/// One path the walk yields (never the root itself).
#[derive(Debug, Clone)]
pub(crate) struct WalkEntry {
    /// The path as the file system knows it.
    pub path: PathBuf,
    /// The path relative to the walk's root, with `/` separators.
    pub rel: String,
    /// Whether the entry is a directory (symlinks are not followed).
    pub is_dir: bool,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WalkEnd {
    /// Every entry was visited.
    Completed,
    /// The visitor asked to stop.
    Stopped,
    /// The cancellation token fired.
    Cancelled,
}

/// Walks `root` in sorted order, calling `visit` for every file and directory below it that
/// the ignore rules let through. Unreadable entries are skipped.
pub(crate) fn walk_sorted(
    root: &Path,
    cancel: &CancellationToken,
    mut visit: impl FnMut(WalkEntry) -> ControlFlow<()>,
) -> WalkEnd {
    for item in builder(root).build() {
        if cancel.is_cancelled() {
            return WalkEnd::Cancelled;
        }
        let Ok(entry) = item else { continue };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel = relative_string(rel);
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let entry = WalkEntry {
            path: entry.into_path(),
            rel,
            is_dir,
        };
        if visit(entry).is_break() {
            return WalkEnd::Stopped;
        }
    }
    WalkEnd::Completed
}

/// The walk configuration: ripgrep's defaults, plus hidden files, minus `.git`, and ignore
/// files honoured without a repository.
fn builder(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// A relative path as text with `/` separators.
pub(crate) fn relative_string(rel: &Path) -> String {
    let text = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

/// A glob over paths relative to the search directory.
///
/// A pattern without `/` matches the file name at any depth (`*.rs`). A pattern with `/`
/// matches the whole relative path, with a leading `**/` implied unless the pattern is
/// anchored by a leading `/` or `./` (`src/**/mod.rs` also matches `crates/a/src/mod.rs`;
/// `/src/*.rs` only the top-level `src`). `*` never crosses a `/`; `**` does. A trailing `/`
/// matches directories only.
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    whole_path: bool,
    dirs_only: bool,
}

impl PathGlob {
    /// Compiles a pattern; the error is a sentence for the model.
    pub(crate) fn new(pattern: &str) -> Result<PathGlob, String> {
        let mut text = pattern.trim();
        let dirs_only = text.len() > 1 && text.ends_with('/');
        if dirs_only {
            text = text.trim_end_matches('/');
        }
        if text.is_empty() {
            return Err(
                "The glob pattern is empty. Give a pattern such as `*.rs` or `src/**/*.ts`."
                    .to_string(),
            );
        }
        let whole_path = text.contains('/');
        let effective = if !whole_path {
            text.to_string()
        } else if let Some(anchored) = text.strip_prefix("./") {
            anchored.to_string()
        } else if let Some(anchored) = text.strip_prefix('/') {
            anchored.to_string()
        } else if text.starts_with("**/") {
            text.to_string()
        } else {
            format!("**/{text}")
        };
        let glob = GlobBuilder::new(&effective)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| {
                format!(
                    "The glob pattern `{pattern}` is invalid: {}. Fix the pattern (e.g. `*.rs`, `**/*.spec.ts`, `src/**/mod.rs`).",
                    e.kind()
                )
            })?;
        Ok(PathGlob {
            matcher: glob.compile_matcher(),
            whole_path,
            dirs_only,
        })
    }

    /// Whether an entry with this relative path matches.
    pub(crate) fn is_match(&self, rel: &str, is_dir: bool) -> bool {
        if self.dirs_only && !is_dir {
            return false;
        }
        if self.whole_path {
            self.matcher.is_match(rel)
        } else {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            self.matcher.is_match(name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str) -> PathGlob {
        PathGlob::new(p).expect("valid glob")
    }

    #[test]
    fn name_patterns_match_at_any_depth() {
        let g = glob("*.rs");
        assert!(g.is_match("a.rs", false));
        assert!(g.is_match("src/deep/a.rs", false));
        assert!(!g.is_match("a.rs.txt", false));
    }

    #[test]
    fn slash_patterns_match_the_whole_path_with_implied_prefix() {
        let g = glob("src/**/x");
        assert!(g.is_match("src/x", false));
        assert!(g.is_match("src/a/b/x", true));
        assert!(g.is_match("crate/src/a/x", false));
        assert!(!g.is_match("src/a/xy", false));
        let g = glob("**/*.spec.ts");
        assert!(g.is_match("a.spec.ts", false));
        assert!(g.is_match("web/app/a.spec.ts", false));
    }

    #[test]
    fn anchored_patterns_start_at_the_root() {
        let g = glob("/src/*.rs");
        assert!(g.is_match("src/a.rs", false));
        assert!(!g.is_match("x/src/a.rs", false));
        assert!(!g.is_match("src/a/b.rs", false));
        assert!(glob("./src/*.rs").is_match("src/a.rs", false));
        assert!(!glob("./src/*.rs").is_match("y/src/a.rs", false));
    }

    #[test]
    fn trailing_slash_means_directories() {
        let g = glob("tests/");
        assert!(g.is_match("a/tests", true));
        assert!(!g.is_match("a/tests", false));
    }

    #[test]
    fn bad_and_empty_globs_are_sentences() {
        let err = PathGlob::new("a[").expect_err("unclosed class");
        assert!(
            err.starts_with("The glob pattern `a[` is invalid:"),
            "{err}"
        );
        assert!(PathGlob::new("  ").is_err());
    }
}
