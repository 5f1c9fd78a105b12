//! Turning the path a model wrote into the path a tool opens.

use std::io;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use super::ExecutionEnv;

// The resolution of where a path leads is the sandbox's too (its roots and protected paths
// are resolved the same way): one algorithm, in the sandbox crate.
pub(crate) use pi_tools_sandbox::path::{
    MAX_LINKS, canonical_lenient, canonical_lenient_sync, follow_final_links, lexical_join,
    too_many_links,
};

/// Unicode spaces models (and macOS file names) put where an ASCII space is meant.
fn is_unicode_space(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Strips one leading `@` (models copy it from `@file` mentions) and turns Unicode spaces
/// into ASCII spaces.
///
/// ```
/// assert_eq!(pi_tools::env::normalize_path_input("@src/a\u{00A0}b.rs"), "src/a b.rs");
/// ```
pub fn normalize_path_input(raw: &str) -> String {
    let raw = raw.strip_prefix('@').unwrap_or(raw);
    raw.chars()
        .map(|c| if is_unicode_space(c) { ' ' } else { c })
        .collect()
}

/// Expands a leading `~` or `~/` to `home`; anything else (including `~user`) is kept.
pub fn expand_tilde(path: &str, home: Option<&Path>) -> PathBuf {
    match (path, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (p, Some(home)) if p.starts_with("~/") => home.join(&p[2..]),
        (p, _) => PathBuf::from(p),
    }
}

/// Resolves a model-written path against the environment: `@` and Unicode spaces
/// normalised, `~` expanded, relative paths joined to the env's cwd. Nothing is checked on
/// disk; `..` is kept (the file system resolves it).
pub fn resolve_path(env: &dyn ExecutionEnv, raw: &str) -> PathBuf {
    let normalized = normalize_path_input(raw);
    let path = expand_tilde(&normalized, env.home_dir().as_deref());
    if path.is_absolute() {
        path
    } else {
        env.cwd().join(path)
    }
}

/// Like [`resolve_path`], but when that path does not exist, also tries the spellings a
/// file name often has on disk but not in a model's text: Unicode NFD (macOS), a curly
/// apostrophe for `'`, and a narrow no-break space before `AM`/`PM` (macOS screenshots).
/// The first variant that exists wins; if none does, the plain path is returned.
pub async fn resolve_read_path(env: &dyn ExecutionEnv, raw: &str) -> PathBuf {
    let plain = resolve_path(env, raw);
    if env.metadata(&plain).await.is_ok() {
        return plain;
    }
    let Some(text) = plain.to_str() else {
        return plain;
    };
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    let screenshot = text
        .replace(" AM.", "\u{202F}AM.")
        .replace(" PM.", "\u{202F}PM.");
    for candidate in [nfd, curly, nfd_curly, screenshot] {
        if candidate == text {
            continue;
        }
        let candidate = PathBuf::from(candidate);
        if env.metadata(&candidate).await.is_ok() {
            return candidate;
        }
    }
    plain
}

/// The key a file's mutations are queued under: its canonical path (symbolic links, `.` and
/// `..` resolved, so every alias of one file shares a key). A path that does not exist yet
/// is keyed by its nearest existing ancestor, canonicalised, plus the rest of the path.
pub async fn mutation_key(env: &dyn ExecutionEnv, path: &Path) -> io::Result<PathBuf> {
    canonical_lenient(path, |probe| async move { env.canonicalize(&probe).await }).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_normalisation() {
        assert_eq!(normalize_path_input("@@a"), "@a");
        assert_eq!(normalize_path_input("a\u{3000}b\u{202F}c"), "a b c");
        assert_eq!(
            expand_tilde("~/x", Some(Path::new("/home/u"))),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(
            expand_tilde("~", Some(Path::new("/h"))),
            PathBuf::from("/h")
        );
        assert_eq!(
            expand_tilde("~bob/x", Some(Path::new("/h"))),
            PathBuf::from("~bob/x")
        );
        assert_eq!(expand_tilde("~/x", None), PathBuf::from("~/x"));
    }
}
