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

use crate::core::{ToolContext, ToolError};
use crate::env::{Metadata, ToolContextExt, resolve_path};

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

/// Where grep and find start: `raw_path` (default `.`) resolved against the env's cwd, with
/// its metadata. Both walk the file system in-process, so the env must be local; `elsewhere`
/// finishes the sentence that says what to do instead.
pub(crate) async fn search_root(
    ctx: &ToolContext,
    tool: &str,
    raw_path: Option<&str>,
    elsewhere: &str,
) -> Result<(PathBuf, Metadata), ToolError> {
    let env = ctx.env();
    if !env.is_local() {
        return Err(ToolError::new(format!(
            "{tool} reads the local file system, but this execution environment is not local. {elsewhere}"
        )));
    }
    let raw_path = raw_path.unwrap_or(".");
    let root = resolve_path(env.as_ref(), raw_path);
    let meta = env.metadata(&root).await.map_err(|e| {
        ToolError::new(format!(
            "Cannot search `{raw_path}`: {e}. Check the path, or omit it to search the current directory."
        ))
    })?;
    Ok((root, meta))
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

    /// A tree with many directories and ignore rules at several levels: `.gitignore` and
    /// `.ignore` files (with negations and directory-only rules), a `.git` directory with an
    /// `info/exclude`, hidden files, an ignore file above the walk's root, and a symlink.
    fn deep_tree() -> tempfile::TempDir {
        let top = tempfile::tempdir().expect("tempdir");
        let write = |rel: &str, text: &str| {
            let path = top.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(".gitignore", "*.above\n");
        write("root/.gitignore", "*.log\n/build/\nskipdir/\n!keep.log\n");
        write("root/.git/info/exclude", "*.excluded\n");
        write("root/.git/HEAD", "ref: refs/heads/main\n");
        write("root/.hidden", "h");
        for a in 0..6 {
            for b in 0..5 {
                for c in 0..4 {
                    let dir = format!("root/d{a}/e{b}/f{c}");
                    write(&format!("{dir}/x.rs"), "fn main() {}\n");
                    write(&format!("{dir}/y.log"), "log");
                    write(&format!("{dir}/keep.log"), "kept");
                    write(&format!("{dir}/z.excluded"), "ex");
                    write(&format!("{dir}/w.above"), "ab");
                    write(&format!("{dir}/tests/t{c}.rs"), "#[test] fn t() {}\n");
                    if c == 1 {
                        write(&format!("{dir}/.ignore"), "tests/\n!*.log\n");
                        write(&format!("{dir}/g/.gitignore"), "*.rs\n");
                        write(&format!("{dir}/g/h/i.rs"), "x");
                        write(&format!("{dir}/g/h/j.txt"), "x");
                    }
                    if c == 2 {
                        write(&format!("{dir}/skipdir/s.rs"), "x");
                        write(&format!("{dir}/build/b.rs"), "not anchored here");
                    }
                }
            }
        }
        write("root/build/out.rs", "anchored: ignored");
        write("root/Build/out.rs", "other case: kept");
        #[cfg(unix)]
        std::os::unix::fs::symlink(top.path().join("root/d0"), top.path().join("root/link"))
            .expect("symlink");
        top
    }

    fn collect(root: &Path, stop_after: Option<usize>) -> (Vec<(String, bool)>, WalkEnd) {
        let mut seen = Vec::new();
        let end = walk_sorted(root, &CancellationToken::new(), |e| {
            seen.push((e.rel, e.is_dir));
            if stop_after.is_some_and(|n| seen.len() >= n) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        (seen, end)
    }

    #[test]
    fn a_deep_tree_is_walked_sorted_with_every_ignore_rule_and_the_same_twice() {
        let top = deep_tree();
        let root = top.path().join("root");
        let (first, end) = collect(&root, None);
        assert_eq!(end, WalkEnd::Completed);
        let rels: Vec<&str> = first.iter().map(|(r, _)| r.as_str()).collect();
        assert!(rels.contains(&".hidden"));
        assert!(rels.contains(&"d0/e0/f0/keep.log"), "negated in .gitignore");
        assert!(rels.contains(&"d0/e0/f1/y.log"), "re-included by .ignore");
        assert!(rels.contains(&"Build/out.rs"));
        assert!(
            rels.contains(&"d0/e0/f2/build/b.rs"),
            "`/build/` is anchored"
        );
        assert!(rels.contains(&"d0/e0/f1/g/h/j.txt"));
        #[cfg(unix)]
        assert!(
            first.contains(&("link".to_string(), false)),
            "symlinks not followed"
        );
        for gone in [
            ".git",
            "build",
            "d0/e0/f0/y.log",
            "d0/e0/f0/z.excluded",
            "d0/e0/f0/w.above",
            "d0/e0/f1/tests",
            "d0/e0/f1/g/h/i.rs",
            "d0/e0/f2/skipdir",
        ] {
            assert!(!rels.contains(&gone), "{gone} should be ignored");
        }
        // Depth first, each directory's entries sorted by name.
        let pos = |r: &str| rels.iter().position(|x| *x == r).expect(r);
        assert!(pos("d0/e4/f3/x.rs") < pos("d1"));
        assert!(pos("d0/e0/f0/keep.log") < pos("d0/e0/f0/tests"));
        assert!(pos("d0/e0/f0/tests/t0.rs") < pos("d0/e0/f0/x.rs"));
        let (second, _) = collect(&root, None);
        assert_eq!(first, second);
        for n in [1, 100, first.len() - 1] {
            let (prefix, end) = collect(&root, Some(n));
            assert_eq!(end, WalkEnd::Stopped);
            assert_eq!(prefix, first[..n]);
        }
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
