//! What keeps a repository found below the top of a root (see `git_nested.rs`) from being
//! redirected by a command, per git mode, as the top one is: the paths its session's mounts
//! keep read-only, and the `.git` directories anchored in place.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::git::{GitAccess, git_dirs_from_file};

/// What keeps a repository found below the top of a root from being redirected by a
/// command, per git mode, as for the top one: the paths mounted read-only and the `.git`
/// directories anchored (mounted onto themselves so they cannot be renamed away).
#[derive(Debug, Default)]
pub(super) struct NestedPaths {
    pub protected: Vec<PathBuf>,
    pub anchors: Vec<PathBuf>,
    /// The git directories read-only as a whole (`git = "read-only"`).
    pub read_only: Vec<PathBuf>,
    /// The repositories (their directories) whose `.git` these mounts hold in place.
    pub held: BTreeSet<PathBuf>,
    /// What the repositories' settings name outside their git directories (see
    /// `git_config`): read-only where they exist, taken away after a call that made one.
    /// (Not anchored: a repository below the top may be moved, and the guard follows it.)
    pub named: Vec<PathBuf>,
}

/// Adds to `paths` what protects the repository whose `.git` is in `dir`: with `git =
/// "read-only"` its git directory as a whole; with `git = "commit"` the `.git/…` entries
/// of `protected` (settings and hooks by default) and `modules`, its `.git` directory
/// anchored. A `.git` file is read-only in both modes, and only git directories inside the
/// writable `roots` are mounted (Landlock keeps the others read-only). A `.git` file git
/// cannot use is kept read-only as it is; a `.git` link is left to the guard.
pub(super) fn protect(
    paths: &mut NestedPaths,
    dir: &Path,
    access: GitAccess,
    protected: &[PathBuf],
    roots: &[PathBuf],
) {
    let dot_git = dir.join(".git");
    // Not `Repository::find`: its submodules (read from the index) are found by the walk.
    let (git_dir, common) = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_dir() => {
            paths.held.insert(dir.to_path_buf());
            (dot_git.clone(), dot_git.clone())
        }
        Ok(meta) if meta.is_file() => {
            paths.held.insert(dir.to_path_buf());
            paths.protected.push(dot_git.clone());
            match git_dirs_from_file(&dot_git) {
                Ok(dirs) => dirs,
                Err(_) => return,
            }
        }
        _ => return,
    };
    let inside = |p: &PathBuf| roots.iter().any(|r| p.starts_with(r));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    for path in
        crate::git_config::redirects_of(dir, &git_dir, &common, home.as_deref(), xdg.as_deref())
    {
        if !paths.named.contains(&path) {
            paths.named.push(path);
        }
    }
    let mut git_dirs = vec![git_dir];
    if common != git_dirs[0] {
        git_dirs.push(common);
    }
    for git_dir in git_dirs.iter().filter(|d| inside(d)) {
        match access {
            GitAccess::ReadOnly => {
                paths.protected.push(git_dir.to_path_buf());
                paths.read_only.push(git_dir.to_path_buf());
            }
            GitAccess::Commit => {
                for rel in protected {
                    if let Ok(rest) = rel.strip_prefix(".git") {
                        paths.protected.push(git_dir.join(rest));
                    }
                }
                paths.protected.push(git_dir.join("modules"));
                if *git_dir == dot_git {
                    paths.anchors.push(git_dir.to_path_buf());
                }
            }
        }
    }
}
