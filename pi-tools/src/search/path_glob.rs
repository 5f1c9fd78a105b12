//! The glob rule grep and find use to pick paths, relative to the directory they search.

use crate::core::glob::{Glob, GlobSyntax};

/// A glob over paths relative to the search directory.
///
/// A pattern without `/` matches the file name at any depth (`*.rs`). A pattern with `/`
/// matches the whole relative path, with a leading `**/` implied unless the pattern is
/// anchored by a leading `/` or `./` (`src/**/mod.rs` also matches `crates/a/src/mod.rs`;
/// `/src/*.rs` only the top-level `src`). `*` never crosses a `/`; `**` does. A trailing `/`
/// matches directories only.
#[derive(Debug, Clone)]
pub struct PathGlob {
    matcher: Glob,
    whole_path: bool,
    dirs_only: bool,
}

impl PathGlob {
    /// Compiles a pattern; the error is a sentence for the model.
    pub fn new(pattern: &str) -> Result<PathGlob, String> {
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
        let matcher = Glob::new(&effective, GlobSyntax::PathsFull).map_err(|e| {
                format!(
                    "The glob pattern `{pattern}` is invalid: {}. Fix the pattern (e.g. `*.rs`, `**/*.spec.ts`, `src/**/mod.rs`).",
                    e.kind()
                )
            })?;
        Ok(PathGlob {
            matcher,
            whole_path,
            dirs_only,
        })
    }

    /// Whether an entry with this relative path matches.
    pub fn is_match(&self, rel: &str, is_dir: bool) -> bool {
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
