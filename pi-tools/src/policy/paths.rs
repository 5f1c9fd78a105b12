//! Path conditions: a file tool's `path` argument resolved the way the tools resolve it
//! (`@` and `~` as [`resolve_path`](crate::env::resolve_path) takes them, relative to the
//! working directory, `..` folded, symlinks followed where the path exists), then matched
//! against globs.

use std::path::{Component, Path, PathBuf};

use crate::env::{expand_tilde, normalize_path_input};

/// The spellings a glob is matched against: the path relative to the working directory
/// (when it lies inside it) and the absolute path.
pub(super) fn candidates(raw: &str, cwd: &Path) -> Vec<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = expand_tilde(&normalize_path_input(raw), home.as_deref());
    let absolute = resolve(&fold(&cwd.join(path)));
    let cwd = resolve(&fold(cwd));
    let mut out = Vec::with_capacity(2);
    if let Ok(relative) = absolute.strip_prefix(&cwd) {
        out.push(relative.to_string_lossy().into_owned());
    }
    out.push(absolute.to_string_lossy().into_owned());
    out
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

/// Symlinks followed through the longest part of `path` that exists.
fn resolve(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
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
/// number of them; a pattern without `/` matches a file name at any depth (as in
/// `.gitignore`).
pub fn path_glob(pattern: &str, path: &str) -> bool {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    if !pattern.contains('/') {
        return path
            .rsplit('/')
            .next()
            .is_some_and(|name| segment(pattern.as_bytes(), name.as_bytes()));
    }
    let pattern: Vec<&str> = pattern.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    segments(&pattern, &path)
}

fn segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((name, tail)) => {
                segment(first.as_bytes(), name.as_bytes()) && segments(rest, tail)
            }
            None => false,
        },
    }
}

fn segment(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| segment(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && segment(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && segment(rest, &name[1..]),
    }
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
    }
}
