//! The one glob matcher of the library, ripgrep's `globset`, in the readings its callers
//! need: tool names and argument values (`*` any run of characters), the policy's paths
//! (`*` within one component, `**` across them) and the search's paths (the same, with
//! `[...]` classes, `{a,b}` alternatives and `\` escapes). It sits in the kernel because tool
//! names, the lowest layer that matches globs, need it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use globset::{GlobBuilder, GlobMatcher};

/// How a pattern is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GlobSyntax {
    /// `*` stands for any run of characters, `/` included, and `?` for one character (one
    /// byte of a character beyond ASCII); every other character is itself. Tool names and
    /// argument values.
    Text,
    /// `*` and `?` stay within one `/`-separated component and `**` as a whole component
    /// spans any number of them (none included); every other character is itself. The
    /// policy's path rules.
    Paths,
    /// [`GlobSyntax::Paths`], and also `[...]` classes, `{a,b}` alternatives and `\`
    /// escapes. The search's globs.
    // Only the search (`builtins`) reads globs this way.
    #[cfg_attr(not(feature = "builtins"), allow(dead_code))]
    PathsFull,
}

/// A compiled glob.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    matcher: GlobMatcher,
}

impl Glob {
    /// Compiles `pattern` read as `syntax`; the error is globset's.
    pub(crate) fn new(pattern: &str, syntax: GlobSyntax) -> Result<Glob, globset::Error> {
        let text = match syntax {
            GlobSyntax::Text => literal_brackets(&collapse_stars(pattern)),
            GlobSyntax::Paths => literal_brackets(pattern),
            GlobSyntax::PathsFull => pattern.to_owned(),
        };
        let glob = GlobBuilder::new(&text)
            .literal_separator(syntax != GlobSyntax::Text)
            .backslash_escape(true)
            .build()?;
        Ok(Glob {
            matcher: glob.compile_matcher(),
        })
    }

    /// Whether `text` matches, whole.
    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.matcher.is_match(text)
    }

    /// Whether `text` matches `pattern` read as `syntax`, the pattern compiled once for the
    /// process (a policy matches the same few patterns on every call). A pattern globset
    /// refuses matches only itself.
    pub(crate) fn matches(pattern: &str, syntax: GlobSyntax, text: &str) -> bool {
        match cached(pattern, syntax) {
            Some(glob) => glob.is_match(text),
            None => pattern == text,
        }
    }
}

/// The most patterns the process keeps compiled; past it the cache starts again.
const MAX_CACHED: usize = 1024;

/// The compiled patterns of each syntax (in [`GlobSyntax`]'s order), by pattern; `None`
/// for one globset refuses.
static CACHES: Mutex<[Option<Compiled>; 3]> = Mutex::new([None, None, None]);

/// The patterns of one syntax compiled so far.
type Compiled = HashMap<String, Option<Arc<Glob>>>;

fn cached(pattern: &str, syntax: GlobSyntax) -> Option<Arc<Glob>> {
    let mut caches = CACHES.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = caches[syntax as usize].get_or_insert_with(HashMap::new);
    if let Some(glob) = cache.get(pattern) {
        return glob.clone();
    }
    if cache.len() >= MAX_CACHED {
        cache.clear();
    }
    let glob = Glob::new(pattern, syntax).ok().map(Arc::new);
    cache.insert(pattern.to_owned(), glob.clone());
    glob
}

/// `pattern` with each run of `*` as one: in [`GlobSyntax::Text`] `**` means what `*` does,
/// and globset would read `/**/` as components.
fn collapse_stars(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

/// `pattern` with the characters globset gives a meaning beyond `*` and `?` escaped, so
/// that they stand for themselves.
fn literal_brackets(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if matches!(c, '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: &str, t: &str) -> bool {
        Glob::matches(p, GlobSyntax::Text, t)
    }

    #[test]
    fn text_globs_cross_everything() {
        assert!(text("*", ""));
        assert!(text("https://*", "https://example.com/a/b"));
        assert!(text("a/**/b", "a//b"));
        assert!(!text("a/**/b", "a/b"));
        // globset matches bytes: `?` is one byte of a character beyond ASCII (tool names
        // are ASCII; the policy's paths were matched by bytes already).
        assert!(text("??", "é"));
        assert!(text("?", "e"));
        assert!(text("*\n", "x\n"));
        assert!(text("[a]*", "[a]bc"));
        assert!(!text("[a]*", "abc"));
        assert!(text("{a,b}", "{a,b}"));
        assert!(text("a\\b", "a\\b"));
        assert!(!text("", "x"));
        assert!(text("", ""));
    }

    #[test]
    fn path_globs_keep_brackets_literal() {
        let paths = |p, t| Glob::matches(p, GlobSyntax::Paths, t);
        assert!(paths("a[1].txt", "a[1].txt"));
        assert!(!paths("a[1].txt", "a1.txt"));
        assert!(!paths("*.rs", "a/b.rs"));
        assert!(paths("a**", "abc"));
        assert!(!paths("a**", "a/c"));
        let full = |p, t| Glob::matches(p, GlobSyntax::PathsFull, t);
        assert!(full("a[12].txt", "a1.txt"));
        assert!(full("*.{rs,md}", "x.md"));
    }
}
