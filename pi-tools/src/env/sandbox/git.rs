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
//!   the session ([`GitGuard`]): a new or changed redirect file is removed or restored, and
//!   the call's output says so.
//!
//! In both modes, a submodule's `.git` that did not exist when the session started is
//! removed when one appears.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;

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
        let mut submodules: Vec<PathBuf> = gitlinks(&git_dir.join("index"))
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

/// The `path = …` entries of a `.gitmodules` file.
fn gitmodules_paths(file: &Path) -> Vec<PathBuf> {
    let Ok(text) = fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "path").then(|| PathBuf::from(value.trim().trim_matches('"')))
        })
        .filter(|p| p.is_relative() && !p.as_os_str().is_empty())
        .collect()
}

/// The paths of the gitlinks (submodules) in an index file, versions 2 to 4; nothing when
/// it cannot be read.
fn gitlinks(index: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(data) = fs::read(index) else {
        return Vec::new();
    };
    let be32 = |at: usize| {
        data.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if data.get(..4) != Some(b"DIRC".as_slice()) {
        return Vec::new();
    }
    let (Some(version), Some(count)) = (be32(4), be32(8)) else {
        return Vec::new();
    };
    // SHA-256 repositories have 32-byte object names; the entry's flags follow the name.
    let oid = match index
        .parent()
        .and_then(|dir| fs::read_to_string(dir.join("config")).ok())
    {
        Some(config) if config.to_lowercase().contains("objectformat = sha256") => 32,
        _ => 20,
    };
    let mut links = Vec::new();
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let Some(mode) = be32(at + 24) else { break };
        let flags_at = at + 40 + oid;
        let Some(flags) = data
            .get(flags_at..flags_at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
        else {
            break;
        };
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let name = if version >= 4 {
            // The number of bytes to drop from the previous name, then the rest of this one.
            let Some((drop, used)) = varint(&data[name_at.min(data.len())..]) else {
                break;
            };
            let start = name_at + used;
            let Some(end) = data[start.min(data.len())..]
                .iter()
                .position(|&b| b == 0)
                .map(|n| start + n)
            else {
                break;
            };
            let keep = previous.len().saturating_sub(drop);
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(&data[start..end]);
            at = end + 1;
            name
        } else {
            let Some(end) = data[name_at.min(data.len())..]
                .iter()
                .position(|&b| b == 0)
                .map(|n| name_at + n)
            else {
                break;
            };
            // Entries are padded with NULs to a multiple of eight bytes.
            let len = end - at;
            at += (len + 8) & !7;
            data[name_at..end].to_vec()
        };
        if mode & 0o170000 == 0o160000 {
            links.push(PathBuf::from(std::ffi::OsStr::from_bytes(&name)));
        }
        previous = name;
    }
    links
}

/// Git's offset varint (index v4): the value and the bytes it took.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut used = 0;
    let mut byte = *bytes.first()?;
    used += 1;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        byte = *bytes.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_shl(7)? | usize::from(byte & 0x7f);
    }
    Some((value, used))
}

/// When a file last changed, as far as a stat tells (its change time cannot be set back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    len: u64,
    ctime: i64,
    ctime_nsec: i64,
}

/// What a watched path is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    File(Stamp),
    Other,
}

/// What a watched path held when the session started (a file's bytes, to restore them).
#[derive(Debug, Clone)]
struct Saved {
    seen: Seen,
    bytes: Option<Vec<u8>>,
}

fn stat(path: &Path) -> Option<Seen> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(path).ok()?;
    Some(if meta.is_file() {
        Seen::File(Stamp {
            ino: meta.ino(),
            len: meta.len(),
            ctime: meta.ctime(),
            ctime_nsec: meta.ctime_nsec(),
        })
    } else {
        Seen::Other
    })
}

/// The gitlinks of an index, and the stamp of the index they were read from.
type IndexLinks = (Seen, Vec<PathBuf>);

/// Catches, after every call and at the session's end, what the kernel could not stop: a
/// redirect file a command created, changed or removed in a writable git directory, or a
/// submodule `.git` that appeared. A check is stats only (and a read of the index when it
/// changed); contents are read once, at the start, to restore them.
#[derive(Debug)]
pub(super) struct GitGuard {
    repositories: Vec<Repository>,
    /// Whether the git directories are writable (commit mode): only then are they scanned.
    scan_git_dirs: bool,
    saved: Mutex<BTreeMap<PathBuf, Saved>>,
    /// Each repository's gitlinks, by the stamp of the index they were read from.
    links: Mutex<Vec<Option<IndexLinks>>>,
}

impl GitGuard {
    /// Remembers what every watched path holds now.
    pub(super) fn new(repositories: Vec<Repository>, access: GitAccess) -> GitGuard {
        let count = repositories.len();
        let guard = GitGuard {
            repositories,
            scan_git_dirs: access == GitAccess::Commit,
            saved: Mutex::new(BTreeMap::new()),
            links: Mutex::new(vec![None; count]),
        };
        let now = guard
            .current()
            .into_iter()
            .map(|(path, seen)| {
                let bytes = matches!(seen, Seen::File(_))
                    .then(|| fs::read(&path).ok())
                    .flatten();
                (path, Saved { seen, bytes })
            })
            .collect();
        *guard.saved.lock().unwrap_or_else(|e| e.into_inner()) = now;
        guard
    }

    /// Whether there is anything to watch.
    pub(super) fn is_empty(&self) -> bool {
        self.repositories.is_empty()
    }

    /// The gitlinks of repository `at`, read again only when its index changed.
    fn gitlinks(&self, at: usize) -> Vec<PathBuf> {
        let index = self.repositories[at].git_dir.join("index");
        let stamp = stat(&index);
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        match (&links[at], stamp) {
            (Some((seen, found)), Some(now)) if *seen == now => found.clone(),
            _ => {
                let found = gitlinks(&index);
                links[at] = stamp.map(|s| (s, found.clone()));
                found
            }
        }
    }

    /// The watched paths that exist now.
    fn current(&self) -> BTreeMap<PathBuf, Seen> {
        let mut found = BTreeMap::new();
        for (at, repo) in self.repositories.iter().enumerate() {
            for dot_git in &repo.submodules {
                note(&mut found, dot_git);
            }
            if !self.scan_git_dirs {
                continue;
            }
            // A gitlink staged during the session, with a `.git` planted beneath it.
            for link in self.gitlinks(at) {
                note(&mut found, &repo.root.join(link).join(".git"));
            }
            for dir in repo.git_dirs() {
                for name in ["commondir", "config.worktree", "config"] {
                    note(&mut found, &dir.join(name));
                }
                note_tree(&mut found, &dir.join("hooks"), 0, true);
                note_tree(&mut found, &dir.join("modules"), 0, false);
                if let Ok(entries) = fs::read_dir(dir.join("worktrees")) {
                    for entry in entries.flatten() {
                        let wt = entry.path();
                        for name in ["commondir", "config.worktree", "config"] {
                            note(&mut found, &wt.join(name));
                        }
                        note_tree(&mut found, &wt.join("hooks"), 0, true);
                    }
                }
            }
        }
        found
    }

    /// Undoes what changed since the session started; one sentence per path undone.
    pub(super) fn undo(&self) -> Vec<String> {
        let mut saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.current();
        let mut undone = Vec::new();
        for (path, seen) in &now {
            match saved.get_mut(path) {
                Some(before) if before.seen == *seen => {}
                Some(Saved {
                    seen: before,
                    bytes: Some(bytes),
                }) => {
                    if restore(path, bytes).is_ok() {
                        *before = stat(path).unwrap_or(*before);
                        undone.push(format!("restored {}", path.display()));
                    }
                }
                _ => {
                    if remove(path).is_ok() {
                        undone.push(format!("removed {}", path.display()));
                    }
                }
            }
        }
        for (path, before) in saved.iter_mut() {
            if now.contains_key(path) {
                continue;
            }
            if let Some(bytes) = &before.bytes
                && restore(path, bytes).is_ok()
            {
                before.seen = stat(path).unwrap_or(before.seen);
                undone.push(format!("restored {}", path.display()));
            }
        }
        undone
    }
}

/// Records `path` if it exists (a link is recorded as itself, never followed).
fn note(found: &mut BTreeMap<PathBuf, Seen>, path: &Path) {
    if let Some(seen) = stat(path) {
        found.insert(path.to_path_buf(), seen);
    }
}

/// Records the files beneath `dir` that can redirect git: all of them in `hooks`, and in
/// `modules` the settings, hooks and redirect files of every submodule's git directory
/// (objects and refs are left out).
fn note_tree(found: &mut BTreeMap<PathBuf, Seen>, dir: &Path, depth: usize, hooks: bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            if depth < 16 && !matches!(name.to_str(), Some("objects" | "refs" | "logs")) {
                note_tree(found, &path, depth + 1, hooks || name == "hooks");
            }
        } else if hooks
            || matches!(
                name.to_str(),
                Some("config" | "commondir" | "config.worktree" | "gitdir")
            )
        {
            note(found, &path);
        }
    }
}

fn restore(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        remove(path)?;
    }
    fs::write(path, bytes)
}

fn remove(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    }
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

    #[test]
    fn the_offset_varint_reads_as_git_writes_it() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x81, 0x7f]), Some((383, 2)));
        assert_eq!(varint(&[0x80]), None);
    }
}
