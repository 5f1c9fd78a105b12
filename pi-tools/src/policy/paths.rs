//! Path conditions: a file tool's `path` argument resolved the way the tools resolve it
//! (`@` and `~` as [`resolve_path`](crate::env::resolve_path) takes them, relative to the
//! working directory, then where it leads as the file system resolves it: symbolic links
//! and `..` as the kernel takes them where the path exists), then matched against globs.

use std::path::{Component, Path, PathBuf};

use crate::core::glob::{Glob, GlobSyntax};
use pi_tools_sandbox::path::{canonical_lenient_sync, lexical_join};

use crate::env::{expand_tilde, normalize_path_input};

/// The spellings a glob is matched against: the path relative to the working directory
/// (when it lies inside it) and the absolute path.
///
/// Where the path leads is found as the file system finds it, by the one algorithm the
/// tools and the sandbox use ([`canonical_lenient_sync`]): what exists is resolved by the
/// kernel, so a `..` after a symbolic link climbs from the link's target (`link/../x`, with
/// `link` pointing into `secrets/sub`, is `secrets/x`), and only the part that does not
/// exist yet is folded by its names. Folding the whole path first would judge `link/../x`
/// as `x` while the write lands in `secrets/`.
pub(super) fn candidates(raw: &str, cwd: &Path) -> Vec<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let path = expand_tilde(&normalize_path_input(raw), home.as_deref());
    let real_cwd = leads_to(cwd);
    let absolute = match below_by_names(&path) {
        Some(names) => walk_below(&real_cwd, &names),
        None => leads_to(&cwd.join(path)),
    };
    let mut out = Vec::with_capacity(2);
    if let Ok(relative) = absolute.strip_prefix(&real_cwd) {
        out.push(relative.to_string_lossy().into_owned());
    }
    out.push(absolute.to_string_lossy().into_owned());
    out
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

/// Where `path` (absolute) leads: [`canonical_lenient_sync`]; where the file system
/// cannot tell (a link loop, a file where a directory is named, no permission), the path
/// with `.` and `..` folded by their names, since the tool's own open then fails there too.
fn leads_to(path: &Path) -> PathBuf {
    canonical_lenient_sync(path).unwrap_or_else(|_| {
        let names: Vec<Component<'_>> = path.components().collect();
        lexical_join(Path::new(""), &names)
    })
}

/// The names of a relative path with no `..` (`.` left out): such a path leads below the
/// working directory by its names alone, so the walk of [`walk_below`] finds where it leads.
fn below_by_names(path: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect()
}

/// Where `names` lead below `real` (a resolved directory), as [`leads_to`] finds it with one
/// `lstat` a name rather than a resolution of the whole path: at the first symbolic link the
/// rest is resolved through it, and from the first name that does not exist the rest is
/// taken as written (it holds no `..`).
fn walk_below(real: &Path, names: &[&std::ffi::OsStr]) -> PathBuf {
    let mut out = real.to_path_buf();
    for (at, name) in names.iter().enumerate() {
        out.push(name);
        match std::fs::symlink_metadata(&out) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return leads_to(&names[at + 1..].iter().fold(out, |path, n| path.join(n)));
            }
            Ok(_) => {}
            Err(_) => {
                return names[at + 1..].iter().fold(out, |path, n| path.join(n));
            }
        }
    }
    out
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
