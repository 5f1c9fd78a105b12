//! Git, safely: nothing a sandboxed command does may make a later git command outside the
//! sandbox run code.
//!
//! Git runs code named by its settings (`core.fsmonitor`, `core.hooksPath`, aliases, ...)
//! and its hooks, and several files redirect it to settings and hooks elsewhere: a git
//! directory's `commondir` and `config.worktree`, each `worktrees/*/commondir`, the git
//! directories of submodules (`modules/**/config`, `modules/**/hooks`) and the `.git` entry
//! of each submodule in the work tree. Landlock cannot deny a name inside a directory it
//! grants, so:
//!
//! - with `[sandbox] git = "read-only"` (the default) the whole git directory (and a
//!   worktree's `.git` file and common directory, and each submodule's `.git`) is mounted
//!   read-only: git can read the repository but not commit;
//! - with `git = "commit"` the git directory is writable but its `config` and `hooks` are
//!   not, and everything the kernel cannot stop is caught after every call and at the end of
//!   the session (the guard in `git_guard.rs`): a redirect file the call created or changed
//!   is removed or restored, and the call's output says so.
//!
//! In both modes, a submodule's `.git` that a call made is removed after it, and so is one
//! of a repository that encloses the workspace (the workspace is a directory inside it):
//! those that exist are mounted read-only like the workspace repository's own.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::git_index::{gitlinks, gitmodules_paths};

/// How sandboxed commands may use a repository's `.git`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GitAccess {
    /// `.git` is read-only: `git status`, `diff` and `log` work, commits do not.
    #[default]
    ReadOnly,
    /// Commits work; `config` and `hooks` stay read-only, and redirect files a command
    /// writes are undone after every call.
    Commit,
}

impl GitAccess {
    /// The spelling used in the configuration: `read-only`, `commit`.
    pub fn as_str(self) -> &'static str {
        match self {
            GitAccess::ReadOnly => "read-only",
            GitAccess::Commit => "commit",
        }
    }
}

impl fmt::Display for GitAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GitAccess {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(GitAccess::ReadOnly),
            "commit" => Ok(GitAccess::Commit),
            other => Err(format!(
                "`{other}` is not a git access; use \"read-only\" or \"commit\""
            )),
        }
    }
}

/// One repository at the top of a writable root.
#[derive(Debug, Clone)]
pub(super) struct Repository {
    /// The work tree's top directory.
    pub root: PathBuf,
    /// `<root>/.git`, a directory or (in a worktree) a file.
    pub dot_git: PathBuf,
    /// This work tree's git directory.
    pub git_dir: PathBuf,
    /// The repository's common git directory (the git directory itself, but in a worktree).
    pub common: PathBuf,
    /// The `.git` entry of every submodule (gitlinks of the index and `.gitmodules` paths).
    pub submodules: Vec<PathBuf>,
}

impl Repository {
    /// The repository whose `.git` is at the top of `root`, if any.
    pub(super) fn find(root: &Path) -> io::Result<Option<Repository>> {
        let dot_git = root.join(".git");
        let (git_dir, common) = match fs::symlink_metadata(&dot_git) {
            Ok(meta) if meta.is_dir() => (dot_git.clone(), dot_git.clone()),
            Ok(meta) if meta.is_file() => git_dirs_from_file(&dot_git)?,
            _ => return Ok(None),
        };
        let mut submodules: Vec<PathBuf> = gitlinks(&git_dir)
            .into_iter()
            .chain(gitmodules_paths(&root.join(".gitmodules")))
            .map(|p| root.join(p).join(".git"))
            .collect();
        submodules.sort();
        submodules.dedup();
        Ok(Some(Repository {
            root: root.to_path_buf(),
            dot_git,
            git_dir,
            common,
            submodules,
        }))
    }

    /// The git directories (this work tree's and the common one).
    pub(super) fn git_dirs(&self) -> Vec<&Path> {
        if self.git_dir == self.common {
            vec![&self.git_dir]
        } else {
            vec![&self.git_dir, &self.common]
        }
    }

    /// Whether writing `path` (a real location) could redirect a later git command: a
    /// setting, a hook, a redirect file, a submodule's git directory or `.git` entry.
    pub(super) fn is_redirect(&self, path: &Path) -> bool {
        if self.submodules.iter().any(|s| path.starts_with(s)) {
            return true;
        }
        self.git_dirs()
            .iter()
            .any(|dir| path.strip_prefix(dir).is_ok_and(redirect_within_git_dir))
    }
}

/// The `.git` entries beneath `root` of the submodules of the repository that encloses
/// `root` (the nearest directory above it with a `.git`, where git finds it), for a `root`
/// that is not a repository's top itself: the user's `git status` in that repository reads
/// them, so they are kept and watched like a workspace repository's own submodules.
pub(super) fn enclosing_submodules(root: &Path) -> Vec<PathBuf> {
    let Some(top) = root
        .ancestors()
        .skip(1)
        .find(|dir| fs::symlink_metadata(dir.join(".git")).is_ok())
    else {
        return Vec::new();
    };
    // One that cannot be read names no submodule git could use either.
    let Ok(Some(repo)) = Repository::find(top) else {
        return Vec::new();
    };
    repo.submodules
        .into_iter()
        .filter(|dot_git| dot_git.starts_with(root))
        .collect()
}

/// Whether `rel`, inside a git directory, is one of the files that make git run code or
/// look elsewhere for it.
fn redirect_within_git_dir(rel: &Path) -> bool {
    let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
    match parts.as_slice() {
        [] => false,
        ["modules", ..] => true,
        ["worktrees", _, rest @ ..] => redirect_name(rest),
        rest => redirect_name(rest),
    }
}

fn redirect_name(parts: &[&str]) -> bool {
    matches!(
        parts,
        ["commondir"] | ["config.worktree"] | ["config"] | ["gitdir"] | ["hooks", ..]
    )
}

/// The worktree's own git directory and the repository's common one, from a `.git` file
/// (`gitdir: <path>`, and that directory's `commondir`, when it has one).
pub(super) fn git_dirs_from_file(dot_git: &Path) -> io::Result<(PathBuf, PathBuf)> {
    let unreadable = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} {what}, so the sandbox cannot tell which git directory to protect; fix the file or set [sandbox] mode = \"off\"",
                dot_git.display()
            ),
        )
    };
    let text =
        fs::read_to_string(dot_git).map_err(|e| unreadable(format!("cannot be read ({e})")))?;
    let pointer = text
        .lines()
        .find_map(|l| l.strip_prefix("gitdir:"))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| unreadable("has no `gitdir: <path>` line".to_owned()))?;
    let base = dot_git.parent().unwrap_or(Path::new("/"));
    let git_dir = fs::canonicalize(base.join(pointer))
        .map_err(|e| unreadable(format!("points to {pointer}, which cannot be used ({e})")))?;
    let common = match fs::read_to_string(git_dir.join("commondir")) {
        Ok(common) => fs::canonicalize(git_dir.join(common.trim())).map_err(|e| {
            unreadable(format!(
                "names a repository whose common directory cannot be used ({e})"
            ))
        })?,
        Err(_) => git_dir.clone(),
    };
    Ok((git_dir, common))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_files_are_told_apart_from_commit_data() {
        for rel in [
            "commondir",
            "config",
            "config.worktree",
            "hooks/pre-commit",
            "worktrees/wt/commondir",
            "worktrees/wt/hooks/x",
            "modules/sub/config",
            "modules/sub/objects/ab",
        ] {
            assert!(redirect_within_git_dir(Path::new(rel)), "{rel}");
        }
        for rel in [
            "index",
            "HEAD",
            "objects/ab/cd",
            "refs/heads/main",
            "COMMIT_EDITMSG",
        ] {
            assert!(!redirect_within_git_dir(Path::new(rel)), "{rel}");
        }
    }
}
