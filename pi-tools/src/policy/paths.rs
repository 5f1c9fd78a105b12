//! Path conditions: a file tool's `path` argument resolved the way the tools resolve it
//! (`@` and `~` as [`resolve_path`](crate::env::resolve_path) takes them, relative to the
//! working directory, `..` folded, symlinks followed where the path exists), then matched
//! against globs.

use std::path::{Component, Path, PathBuf};

use crate::core::glob::{Glob, GlobSyntax};
use crate::env::{expand_tilde, normalize_path_input};

/// The spellings a glob is matched against: the path relative to the working directory
/// (when it lies inside it) and the absolute path.
pub(super) fn candidates(raw: &str, cwd: &Path) -> Vec<String> {
    resolved(raw, cwd).0
}

/// [`candidates`], and whether the file they name has other names when the resolution saw
/// that already (its last `lstat`), so a write is not asked about with a `stat` of its own.
pub(super) fn resolved(raw: &str, cwd: &Path) -> (Vec<String>, Option<bool>) {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = expand_tilde(&normalize_path_input(raw), home.as_deref());
    let folded_cwd = fold(cwd);
    let real_cwd = resolve(&folded_cwd, None);
    let folded = fold(&cwd.join(path));
    // Below the working directory, its resolution is reused: the shell resolves the same
    // prefix to the same directory, and each resolution walks the disk.
    let (absolute, other_names) = match folded.strip_prefix(&folded_cwd) {
        Ok(rest) => resolve_below(&real_cwd, rest),
        Err(_) => (resolve(&folded, None), None),
    };
    let mut out = Vec::with_capacity(2);
    if let Ok(relative) = absolute.strip_prefix(&real_cwd) {
        out.push(relative.to_string_lossy().into_owned());
    }
    out.push(absolute.to_string_lossy().into_owned());
    (out, other_names)
}

/// Whether the file a write reaches (the last of [`candidates`], its absolute path) is a
/// regular file with more than one name: a hard link to it may have been made under a name
/// a path rule protects (`ln .env notes` in an earlier call), and the rule cannot see the
/// other names, so such a write is asked about.
pub(super) fn has_other_names(candidates: &[String]) -> bool {
    use std::os::unix::fs::MetadataExt;
    candidates
        .last()
        .and_then(|path| std::fs::metadata(path).ok())
        .is_some_and(|meta| meta.is_file() && meta.nlink() > 1)
}

/// `..` and `.` folded away without touching the disk.
fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// [`resolve`] for `rest` (plain names, already folded) below `real`, a resolved directory:
/// each name is looked at once (one `lstat`) rather than the whole path resolved again
/// component by component; at the first symbolic link the whole path is resolved. Also
/// whether the last name is a regular file with other names, where the walk saw it.
fn resolve_below(real: &Path, rest: &Path) -> (PathBuf, Option<bool>) {
    use std::os::unix::fs::MetadataExt;
    let mut out = real.to_path_buf();
    let mut names = rest.components();
    let mut other_names = None;
    while let Some(name) = names.next() {
        out.push(name);
        match std::fs::symlink_metadata(&out) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return (resolve(&real.join(rest), Some(real)), None);
            }
            Ok(meta) => other_names = Some(meta.is_file() && meta.nlink() > 1),
            // What does not exist is taken as written, as `resolve` takes it.
            Err(_) => {
                out.push(names.as_path());
                return (out, Some(false));
            }
        }
    }
    (out, other_names)
}

/// Symlinks followed through the longest part of `path` that exists; `real` is a resolved
/// directory known to exist that `path` may lie in, where the search stops.
fn resolve(path: &Path, real: Option<&Path>) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    loop {
        let found = if real == Some(existing.as_path()) {
            Ok(existing.clone())
        } else {
            std::fs::canonicalize(&existing)
        };
        if let Ok(real) = found {
            let mut out = real;
            for part in tail.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                tail.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether `pattern` matches `path`: `*` and `?` within one component, `**` across any
/// number of them (`dir/**` names `dir` too); a pattern without `/` matches a file name at
/// any depth (as in `.gitignore`). Every other character stands for itself.
pub fn path_glob(pattern: &str, path: &str) -> bool {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    if !pattern.contains('/') {
        let name = path.rsplit('/').next().unwrap_or(path);
        return Glob::matches(pattern, GlobSyntax::Paths, name);
    }
    let mut dir = pattern;
    while let Some(up) = dir.strip_suffix("/**") {
        dir = up;
    }
    (dir != pattern && Glob::matches(dir, GlobSyntax::Paths, path))
        || Glob::matches(pattern, GlobSyntax::Paths, path)
}

#[cfg(test)]
mod tests {
    use super::path_glob;

    #[test]
    fn globs_match_components() {
        assert!(path_glob("**/.env", ".env"));
        assert!(path_glob("**/.env", "a/b/.env"));
        assert!(!path_glob("**/.env", "a/.envrc"));
        assert!(path_glob("secrets/**", "secrets/x/y"));
        assert!(!path_glob("secrets/**", "src/secrets"));
        assert!(path_glob("*.pem", "keys/server.pem"));
        assert!(path_glob("/etc/**", "/etc/passwd"));
        assert!(!path_glob("src/*.rs", "src/a/b.rs"));
        assert!(path_glob("a/**/b", "a/b"));
        assert!(path_glob("a/**/b", "a/x/y/b"));
        assert!(!path_glob("a/**/b", "a/x/y/c"));
        assert!(path_glob("a/**", "a"));
        assert!(path_glob("a/", "a/"));
        assert!(!path_glob("a/", "a"));
        assert!(!path_glob("a/b", "a/b/c"));
        assert!(path_glob("**/x/.env", "a/x/.env"));
        assert!(!path_glob("**/x/.env", "a/x/.envrc"));
        assert!(path_glob("a/**/", "a/b/"));
    }
}
