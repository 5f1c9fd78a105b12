//! Turning the path a model wrote into the path a tool opens.

use std::future::Future;
use std::io;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use super::ExecutionEnv;

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

/// The canonical form of `path`, or for a path that does not exist yet, its nearest existing
/// ancestor canonicalised (by `canonicalize`) plus the rest of the path, resolved lexically.
/// The one algorithm behind [`mutation_key`] and the confinement's view of where a path
/// leads.
pub(crate) async fn canonical_lenient<F, Fut>(
    path: &Path,
    mut canonicalize: F,
) -> io::Result<PathBuf>
where
    F: FnMut(PathBuf) -> Fut,
    Fut: Future<Output = io::Result<PathBuf>>,
{
    match canonicalize(path.to_path_buf()).await {
        Ok(canonical) => return Ok(canonical),
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        Err(_) => {}
    }
    let mut rest: Vec<Component<'_>> = Vec::new();
    let mut ancestor = path;
    loop {
        let Some(parent) = ancestor.parent() else {
            return Ok(lexical_join(path, &[]));
        };
        if let Some(last) = ancestor.components().next_back() {
            rest.push(last);
        }
        ancestor = parent;
        let probe = if ancestor.as_os_str().is_empty() {
            Path::new(".")
        } else {
            ancestor
        };
        match canonicalize(probe.to_path_buf()).await {
            Ok(base) => {
                rest.reverse();
                return Ok(lexical_join(&base, &rest));
            }
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            Err(_) => {}
        }
    }
}

/// [`canonical_lenient`] on this machine's file system, from synchronous code (the probes
/// are plain `canonicalize` calls, so the future is ready at once).
pub(crate) fn canonical_lenient_sync(path: &Path) -> io::Result<PathBuf> {
    futures::executor::block_on(canonical_lenient(path, |probe| {
        std::future::ready(std::fs::canonicalize(probe))
    }))
}

/// Follows the symbolic links `path` itself is (its parents are left alone) as far as they
/// go: for a link whose target does not exist yet, that target. Stops after 40 links, as the
/// kernel does. `read_link` tells what a path is: `Some(target)` for a link, `None` for
/// anything else or nothing at all. The one algorithm behind [`follow_final_links`] and the
/// SSH environment's.
pub(crate) async fn follow_final_links_with<F, Fut>(
    path: &Path,
    mut read_link: F,
) -> io::Result<PathBuf>
where
    F: FnMut(PathBuf) -> Fut,
    Fut: Future<Output = io::Result<Option<PathBuf>>>,
{
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match read_link(current.clone()).await? {
            Some(target) => {
                current = match current.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            None => return Ok(current),
        }
    }
    Err(too_many_links(path))
}

/// [`follow_final_links_with`] on this machine's file system, from synchronous code.
pub(crate) fn follow_final_links(path: &Path) -> io::Result<PathBuf> {
    futures::executor::block_on(follow_final_links_with(path, |probe| {
        std::future::ready(match std::fs::symlink_metadata(&probe) {
            Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(&probe).map(Some),
            Ok(_) => Ok(None),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        })
    }))
}

/// How many symbolic links a path may go through, as the kernel allows.
pub(crate) const MAX_LINKS: usize = 40;

/// The error for a path that goes through more than [`MAX_LINKS`] links.
pub(crate) fn too_many_links(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} goes through more than {MAX_LINKS} symbolic links (a loop?)",
        path.display()
    ))
}

/// Appends components, resolving `.` and `..` lexically (they name directories that do
/// not exist yet, so there is no link to follow).
pub(crate) fn lexical_join(base: &Path, rest: &[Component<'_>]) -> PathBuf {
    let mut out = base.to_path_buf();
    for component in rest {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
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
