//! [`GitGuard`]: catches, after every call and at the session's end, what the kernel could
//! not stop in a repository: a redirect file a command created, changed or removed in a
//! writable git directory, a submodule `.git` that appeared (of the workspace's repository
//! or of one that encloses the workspace), or the settings and hooks of a
//! repository made (`git init`) at the top of a writable root that had none, or below the
//! top of a root (or there already: see `git_nested.rs`).
//!
//! Two rules keep the guard from doing harm of its own:
//!
//! - it never follows a symbolic link (see `nofollow.rs`): a directory turned into a link
//!   to somewhere else is not looked into, and the link itself is what gets removed;
//! - it only undoes what a sandboxed command can have done: the state it compares with is
//!   taken again at the start of every call made while no command of the session runs, so
//!   what the user changed between calls stays; and what it takes away (something not
//!   watched before, a directory or link in place of the watched one) is removed only when
//!   it and everything beneath it were made or changed after that state was taken, and
//!   otherwise renamed out of git's way (`<name>.pi-tools-disabled`), never removed: a
//!   nested repository under a newly staged gitlink keeps its history even when the call
//!   committed in it.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{FileType, Stat};

use crate::git::{GitAccess, Repository};
use crate::git_follow::{self, Known};
use crate::git_index::gitlinks;
use crate::git_trees::{self, SharedTree};
use crate::nofollow::{
    changed_since, move_aside, names, open_beneath, open_dir, open_parent, open_subdir, read_at,
    remove_at, stat_at, write_at,
};

/// How far a file's change time may trail the clock read when the state was taken: file
/// times come from a coarser clock, and some file systems keep whole seconds (or two).
const CLOCK_SLACK: Duration = Duration::from_secs(2);

/// What a watched path is, as far as a stat tells (a change time cannot be set back).
#[derive(Debug, Clone, Copy)]
struct Seen {
    kind: FileType,
    ino: u64,
    len: u64,
    /// Change time, in nanoseconds since the epoch.
    ctime: i128,
}

impl Seen {
    fn of(st: &Stat) -> Seen {
        Seen {
            kind: FileType::from_raw_mode(st.st_mode),
            ino: st.st_ino,
            len: u64::try_from(st.st_size).unwrap_or(0),
            ctime: i128::from(st.st_ctime) * 1_000_000_000 + i128::from(st.st_ctime_nsec),
        }
    }

    /// Unchanged: a directory is the same one (what is in it is watched on its own), a
    /// file or link has not been touched.
    fn same(&self, other: &Seen) -> bool {
        match (self.kind, other.kind) {
            (FileType::Directory, FileType::Directory) => self.ino == other.ino,
            _ => {
                self.kind == other.kind
                    && self.ino == other.ino
                    && self.len == other.len
                    && self.ctime == other.ctime
            }
        }
    }
}

/// What a watched path held in the trusted state (a file's bytes and mode, to restore it).
#[derive(Debug, Clone)]
struct Saved {
    seen: Seen,
    bytes: Option<Vec<u8>>,
    mode: u32,
}

/// The gitlinks of an index, and the stamp of the index they were read from.
type IndexLinks = (Seen, Vec<PathBuf>);

#[derive(Debug)]
struct State {
    /// What every watched path held when no sandboxed command could have changed it.
    trusted: BTreeMap<PathBuf, Saved>,
    /// When `trusted` was taken, in nanoseconds since the epoch.
    since: i128,
    /// Whether a sandboxed command may have run since `trusted` was taken: a call in
    /// flight, or processes a finished call left running.
    busy: bool,
}

/// Watches a session's repositories; see the module's documentation. A check is stats
/// only (and a read of the index when it changed, and of a file whose stamp changed).
#[derive(Debug)]
pub(super) struct GitGuard {
    repositories: Vec<Repository>,
    /// Writable roots that had no repository at the start: a `.git` that appears at the
    /// top of one (`git init`) is watched as a whole, whatever the git access.
    bare_roots: Vec<PathBuf>,
    /// The `.git` entries beneath writable roots of the submodules of repositories that
    /// enclose them (see `git::enclosing_submodules`), watched whatever the git access.
    enclosing: Vec<PathBuf>,
    /// Whether the git directories are writable (commit mode): only then are they scanned.
    scan_git_dirs: bool,
    /// The directories beneath the writable roots, to find every repository below their
    /// top (there at the start or made since), whose `.git` is watched as a whole.
    tree: SharedTree,
    /// The repositories below the top whose `.git` the session's mounts hold in place
    /// (read-only as a whole with `git = "read-only"`): only their git directories' other
    /// redirect files are looked at, in commit mode. Those made since are looked at whole.
    held: BTreeSet<PathBuf>,
    state: Mutex<State>,
    /// Each repository's gitlinks, by the stamp of the index they were read from.
    links: Mutex<Vec<Option<IndexLinks>>>,
    /// Where each repository below the top was when the state was taken, by identity
    /// (see `git_follow.rs`), and the tree's count of changes then: while it stays the
    /// same nothing beneath the roots moved, so no repository needs looking for.
    known: Mutex<(Known, Option<u64>)>,
}

impl GitGuard {
    /// Remembers what every watched path holds now.
    pub(super) fn new(
        repositories: Vec<Repository>,
        bare_roots: Vec<PathBuf>,
        enclosing: Vec<PathBuf>,
        tree: SharedTree,
        held: BTreeSet<PathBuf>,
        access: GitAccess,
    ) -> GitGuard {
        let count = repositories.len();
        let guard = GitGuard {
            repositories,
            bare_roots,
            enclosing,
            scan_git_dirs: access == GitAccess::Commit,
            tree,
            held,
            state: Mutex::new(State {
                trusted: BTreeMap::new(),
                since: 0,
                busy: false,
            }),
            links: Mutex::new(vec![None; count]),
            known: Mutex::new((Known::new(), None)),
        };
        guard.before_call();
        guard.state.lock().unwrap_or_else(|e| e.into_inner()).busy = false;
        guard
    }

    /// Whether there is anything to watch.
    pub(super) fn is_empty(&self) -> bool {
        self.repositories.is_empty()
            && self.bare_roots.is_empty()
            && self.enclosing.is_empty()
            && self.nested().0.is_empty()
            && self.bare().is_empty()
    }

    /// The git directories under another name than `.git` now.
    fn bare(&self) -> Vec<PathBuf> {
        let tree = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        tree.bare().iter().cloned().collect()
    }

    /// The directories below the top of a root that hold a `.git` now (after a look for
    /// new ones when `sweep`), and the roots they are below.
    fn nested(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let tree = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        (
            tree.repos().iter().cloned().collect(),
            tree.roots().to_vec(),
        )
    }

    /// Looks for repositories made or moved below the top of a root since the last look.
    fn sweep(&self) -> u64 {
        let mut tree = self.tree.lock().unwrap_or_else(|e| e.into_inner());
        tree.sweep();
        tree.changes()
    }

    /// Before a command starts: when no command of the session can have changed anything
    /// since the last check, what is there now (the user's changes included) becomes the
    /// trusted state.
    pub(super) fn before_call(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.busy {
            let since = now();
            // A repository the user added between calls is theirs, watched from now on.
            let changes = self.sweep();
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            if known.1 != Some(changes) {
                *known = (git_follow::note(self.nested().0), Some(changes));
            }
            drop(known);
            let current = self.current();
            let previous = std::mem::take(&mut state.trusted);
            state.trusted = current
                .into_iter()
                .map(|(path, (seen, mode))| {
                    let bytes = match previous.get(&path) {
                        Some(old) if old.seen.same(&seen) => old.bytes.clone(),
                        _ if seen.kind == FileType::RegularFile => read(&path),
                        _ => None,
                    };
                    (path, Saved { seen, bytes, mode })
                })
                .collect();
            state.since = since;
        }
        state.busy = true;
    }

    /// After a call (`still_running`: it or another call left processes running): undoes
    /// what changed since the trusted state; one sentence per path undone.
    #[cfg_attr(not(feature = "process"), allow(dead_code))]
    pub(super) fn after_call(&self, still_running: bool) -> Vec<String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let undone = self.undo(&mut state);
        state.busy = still_running;
        undone
    }

    /// The session sleeps: the repository watch goes, unless another session of the
    /// directory holds it (see `git_trees.rs`).
    pub(super) fn hibernate(&self) {
        git_trees::rest(&self.tree);
    }

    /// At the session's end, once its processes are gone: undoes what they changed since
    /// the last check, if any can have run since.
    pub(super) fn end_session(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.busy {
            self.undo(&mut state);
        }
        state.busy = false;
    }

    fn undo(&self, state: &mut State) -> Vec<String> {
        let changes = self.sweep();
        // A repository the command moved is put back first, so that what it holds is
        // compared where it was, and the newcomer in its place is seen as one. Nothing
        // moved when the tree saw no change since the state was taken.
        let mut undone = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            if known.1 == Some(changes) {
                Vec::new()
            } else {
                git_follow::bring_back(&known.0, self.nested().0)
            }
        };
        if !undone.is_empty() {
            self.sweep();
        }
        let now = self.current();
        let since = state.since - CLOCK_SLACK.as_nanos() as i128;
        for (path, (seen, _)) in &now {
            match state.trusted.get_mut(path) {
                Some(before) if before.seen.same(seen) => {}
                Some(before) if before.bytes.is_some() => {
                    // A directory in a watched file's place that the call did not wholly
                    // make is moved aside rather than removed (see `clear`).
                    if seen.kind == FileType::Directory && !planted(path, since) {
                        undone.extend(clear(path, since));
                    }
                    if let Some(after) = restore(path, before) {
                        before.seen = after;
                        undone.push(format!("restored {}", path.display()));
                    }
                }
                // Not watched when the state was taken, or a directory or link other than
                // the one watched.
                _ => undone.extend(clear(path, since)),
            }
        }
        for (path, before) in state.trusted.iter_mut() {
            if now.contains_key(path) || before.bytes.is_none() {
                continue;
            }
            if let Some(after) = restore(path, before) {
                before.seen = after;
                undone.push(format!("restored {}", path.display()));
            }
        }
        undone
    }

    /// The gitlinks of repository `at`, read again only when its index changed (a shared
    /// index of a split one is only used through an index naming it).
    fn gitlinks(&self, at: usize) -> Vec<PathBuf> {
        let index = self.repositories[at].git_dir.join("index");
        let stamp = open_parent(&index)
            .and_then(|(dir, name)| stat_at(dir.as_fd(), &name))
            .map(|st| Seen::of(&st));
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        match (&links[at], stamp) {
            (Some((seen, found)), Some(now)) if seen.same(&now) => found.clone(),
            _ => {
                let found = stamp
                    .map(|_| gitlinks(&self.repositories[at].git_dir))
                    .unwrap_or_default();
                links[at] = stamp.map(|s| (s, found.clone()));
                found
            }
        }
    }

    /// The watched paths that exist now, reached without following a link, with their mode.
    fn current(&self) -> BTreeMap<PathBuf, (Seen, u32)> {
        let mut found = BTreeMap::new();
        for (at, repo) in self.repositories.iter().enumerate() {
            let Some(root) = open_dir(&repo.root) else {
                continue;
            };
            let mut work_tree: Vec<PathBuf> = repo
                .submodules
                .iter()
                .filter_map(|s| s.strip_prefix(&repo.root).ok())
                .map(Path::to_path_buf)
                .collect();
            if self.scan_git_dirs {
                // A gitlink staged during the session, with a `.git` planted beneath it.
                work_tree.extend(self.gitlinks(at).into_iter().map(|l| l.join(".git")));
            }
            for rel in work_tree {
                note_beneath(&mut found, root.as_fd(), &repo.root, &rel);
            }
            if !self.scan_git_dirs {
                continue;
            }
            for dir in repo.git_dirs() {
                if let Some(fd) = open_dir(dir) {
                    note_repository(&mut found, fd.as_fd(), dir);
                }
            }
        }
        for dot_git in &self.enclosing {
            if let (Some((dir, name)), Some(parent)) = (open_parent(dot_git), dot_git.parent()) {
                note(&mut found, dir.as_fd(), parent, &name);
            }
        }
        for root in &self.bare_roots {
            if let Some(fd) = open_dir(root) {
                note_top(&mut found, fd.as_fd(), root, true);
            }
        }
        // Git directories under another name, in both modes (their settings and hooks
        // that were there at the start are also read-only mounts).
        for dir in self.bare() {
            if let Some(fd) = open_dir(&dir) {
                note_repository(&mut found, fd.as_fd(), &dir);
            }
        }
        // Their own gitlinks' `.git` are found as repositories below the top too. Each is
        // opened from its root's handle, not from `/` (a few names rather than a dozen).
        let (nested, roots) = self.nested();
        let looked_at: Vec<PathBuf> = nested
            .into_iter()
            .filter(|dir| self.scan_git_dirs || !self.held.contains(dir))
            .collect();
        if looked_at.is_empty() {
            return found;
        }
        let roots: Vec<(PathBuf, Option<OwnedFd>)> = roots
            .into_iter()
            .map(|root| {
                let fd = open_dir(&root);
                (root, fd)
            })
            .collect();
        for dir in looked_at {
            let beneath = roots.iter().find_map(|(root, fd)| {
                let rel = dir.strip_prefix(root).ok()?;
                open_beneath(fd.as_ref()?.as_fd(), rel)
            });
            if let Some(fd) = beneath {
                note_top(&mut found, fd.as_fd(), &dir, false);
            }
        }
        found
    }
}

/// The clock, in nanoseconds since the epoch.
pub(super) fn now() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// Records what redirects git in the `.git` at the top of the work tree `root` (open as
/// `fd`): in a git directory, its settings, hooks, redirect files (and, when `with_links`,
/// the `.git` of its gitlinks); a `.git` file or link itself (it points git elsewhere).
fn note_top(
    found: &mut BTreeMap<PathBuf, (Seen, u32)>,
    fd: BorrowedFd<'_>,
    root: &Path,
    with_links: bool,
) {
    let dot_git = OsStr::new(".git");
    let Some(dir) = open_subdir(fd, dot_git) else {
        note(found, fd, root, dot_git);
        return;
    };
    let path = root.join(dot_git);
    note_repository(found, dir.as_fd(), &path);
    if with_links {
        for link in gitlinks(&path) {
            note_beneath(found, fd, root, &link.join(".git"));
        }
    }
}

/// Records the redirect files of the git directory `dir` (open as `fd`) and of its
/// worktrees' git directories.
fn note_repository(found: &mut BTreeMap<PathBuf, (Seen, u32)>, fd: BorrowedFd<'_>, dir: &Path) {
    note_git_dir(found, fd, dir);
    let Some(worktrees) = open_subdir(fd, OsStr::new("worktrees")) else {
        // A link (or file) in its place would lead every linked worktree's git elsewhere.
        note(found, fd, dir, OsStr::new("worktrees"));
        return;
    };
    let base = dir.join("worktrees");
    for name in names(worktrees.as_fd()) {
        match open_subdir(worktrees.as_fd(), &name) {
            Some(wt) => note_git_dir(found, wt.as_fd(), &base.join(&name)),
            None => note(found, worktrees.as_fd(), &base, &name),
        }
    }
}

/// Records the redirect files of the git directory `dir` (open as `fd`).
fn note_git_dir(found: &mut BTreeMap<PathBuf, (Seen, u32)>, fd: BorrowedFd<'_>, dir: &Path) {
    for name in ["commondir", "config.worktree", "config"] {
        note(found, fd, dir, OsStr::new(name));
    }
    note_tree(found, fd, dir, OsStr::new("hooks"), 0, true);
    note_tree(found, fd, dir, OsStr::new("modules"), 0, false);
}

/// Records `name` in `dir` if it exists (a link is recorded as itself, never followed).
fn note(found: &mut BTreeMap<PathBuf, (Seen, u32)>, dir: BorrowedFd<'_>, at: &Path, name: &OsStr) {
    if let Some(st) = stat_at(dir, name) {
        found.insert(at.join(name), (Seen::of(&st), st.st_mode & 0o777));
    }
}

/// Records `rel` beneath `dir` (at `at`), when every directory on the way is one.
fn note_beneath(
    found: &mut BTreeMap<PathBuf, (Seen, u32)>,
    dir: BorrowedFd<'_>,
    at: &Path,
    rel: &Path,
) {
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return;
    };
    if let Some(fd) = open_beneath(dir, parent) {
        note(found, fd.as_fd(), &at.join(parent), name);
    }
}

/// Records the entries beneath `name` in `dir` that can redirect git: all of them in
/// `hooks`, and in `modules` the settings, hooks and redirect files of every submodule's
/// git directory (objects and refs are left out), and every link (a link is never
/// followed; one in place of a directory could point git elsewhere).
fn note_tree(
    found: &mut BTreeMap<PathBuf, (Seen, u32)>,
    dir: BorrowedFd<'_>,
    at: &Path,
    name: &OsStr,
    depth: usize,
    hooks: bool,
) {
    // Git never runs a sample hook (`git init` makes them), whatever it is: not even
    // looked at, as every repository below the top has a dozen.
    if hooks && depth > 0 && name.as_encoded_bytes().ends_with(b".sample") {
        return;
    }
    let Some(st) = stat_at(dir, name) else { return };
    let kind = FileType::from_raw_mode(st.st_mode);
    let hooks = hooks || name == "hooks";
    if kind != FileType::Directory {
        let redirect = matches!(
            name.to_str(),
            Some("config" | "commondir" | "config.worktree" | "gitdir")
        );
        if hooks || redirect || kind == FileType::Symlink || depth == 0 {
            note(found, dir, at, name);
        }
        return;
    }
    if depth >= 16 || matches!(name.to_str(), Some("objects" | "refs" | "logs")) {
        return;
    }
    let Some(sub) = open_subdir(dir, name) else {
        return;
    };
    let path = at.join(name);
    for entry in names(sub.as_fd()) {
        note_tree(found, sub.as_fd(), &path, &entry, depth + 1, hooks);
    }
}

fn read(path: &Path) -> Option<Vec<u8>> {
    let (dir, name) = open_parent(path)?;
    read_at(dir.as_fd(), &name)
}

/// Puts the saved bytes back at `path` (its directory reached without following a link);
/// what is there now, when the write worked.
fn restore(path: &Path, saved: &Saved) -> Option<Seen> {
    let (dir, name) = open_parent(path)?;
    write_at(dir.as_fd(), &name, saved.bytes.as_deref()?, saved.mode).ok()?;
    stat_at(dir.as_fd(), &name).map(|st| Seen::of(&st))
}

/// Whether what is at `path`, and everything beneath it, was made or changed since `since`.
fn planted(path: &Path, since: i128) -> bool {
    open_parent(path).is_some_and(|(dir, name)| changed_since(dir.as_fd(), &name, since))
}

/// Takes what is at `path` (itself, a link not followed) out of git's way: removed when
/// all of it was made or changed since `since`, so the call planted it; otherwise renamed
/// aside (see [`move_aside`]), never removed, since it may hold the user's work (a nested
/// repository a gitlink staged in the call now leads git to, a directory the call only
/// committed in, something prepared before the call and moved here). The sentence for the
/// call's note.
fn clear(path: &Path, since: i128) -> Option<String> {
    let (dir, name) = open_parent(path)?;
    if changed_since(dir.as_fd(), &name, since) {
        remove_at(dir.as_fd(), &name).ok()?;
        return Some(format!("removed {}", path.display()));
    }
    let aside = move_aside(dir.as_fd(), &name).ok()?;
    Some(format!(
        "moved {} aside to {}",
        path.display(),
        path.with_file_name(aside).display()
    ))
}
