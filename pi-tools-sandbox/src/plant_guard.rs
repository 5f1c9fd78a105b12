//! Undoing what a command planted at a protected path that did not exist when it started.
//!
//! A protected path that exists is a read-only bind mount in the command's mount
//! namespace, so the kernel refuses every change to it. One that does not exist has
//! nothing to mount on, and Landlock cannot refuse one name inside a directory it grants:
//! a command may create `pi-tools.toml`, `.envrc` or `.vscode/tasks.json` in the
//! workspace. So before each call the guard notes, for every protected path, the first
//! component of it that is missing, and after the call it takes away what appeared there:
//! the path itself, or a link or directory made in its way. As the git guard does, it
//! never follows a link, removes only what was wholly made or changed during the call
//! (change times, which a command cannot set back), and renames anything older out of the
//! way (`<name>.pi-tools-disabled`) instead of removing it.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::fs::FileType;

use crate::dir_names;
use crate::git_guard::now;
use crate::nofollow::{changed_since, move_aside, open_subdir, remove_at, stat_at};
use crate::plant_way::Way;
use crate::shared::Shared;

/// How far a file's change time may trail the clock read before the call (coarse file
/// system clocks).
const CLOCK_SLACK: Duration = Duration::from_secs(2);

/// One protected path: a writable root and the path's components below it.
#[derive(Debug, Clone)]
struct Watched {
    root: PathBuf,
    parts: Vec<OsString>,
}

#[derive(Debug, Default)]
struct State {
    /// A command of the session may still be running (what it plants counts as the
    /// sandbox's until the next check).
    busy: bool,
    /// When the state was taken.
    since: i128,
    /// For each watched path missing then, how many of its components existed.
    missing: Vec<(usize, usize)>,
}

/// The guard of one resolved sandbox.
#[derive(Debug)]
pub(super) struct PlantGuard {
    /// Shared by the guards over the same paths (see [`watched_of`]).
    watched: Arc<[Watched]>,
    state: Mutex<State>,
}

/// What the guards over given roots and paths watch. The list follows from them alone (no
/// look at the file system), so the guards of one workspace's sessions share it.
fn watched_of(roots: &[PathBuf], paths: &[PathBuf]) -> Arc<[Watched]> {
    static LISTS: Shared<(Vec<PathBuf>, Vec<PathBuf>), [Watched]> = Shared::new();
    LISTS.get_or_make((roots.to_vec(), paths.to_vec()), |(roots, paths)| {
        watched_list(roots, paths).into()
    })
}

/// The protected paths among `paths` that lie below one of `roots`, in order.
fn watched_list(roots: &[PathBuf], paths: &[PathBuf]) -> Vec<Watched> {
    let mut watched = Vec::new();
    for path in paths {
        let Some(root) = roots.iter().find(|r| path.starts_with(r) && *r != path) else {
            continue;
        };
        let Ok(rest) = path.strip_prefix(root) else {
            continue;
        };
        let parts: Option<Vec<OsString>> = rest
            .components()
            .map(|c| match c {
                Component::Normal(name) => Some(name.to_os_string()),
                _ => None,
            })
            .collect();
        if let Some(parts) = parts.filter(|p| !p.is_empty()) {
            watched.push(Watched {
                root: root.clone(),
                parts,
            });
        }
    }
    // In order, so that the paths below one directory (a repository's protected files)
    // follow each other and the look before a call opens that directory once.
    watched.sort_by(|a, b| (&a.root, &a.parts).cmp(&(&b.root, &b.parts)));
    watched.dedup_by(|a, b| a.root == b.root && a.parts == b.parts);
    watched
}

impl PlantGuard {
    /// A guard over `paths` (absolute, each below one of `roots`); `None` when none is.
    pub(super) fn new(roots: &[PathBuf], paths: &[PathBuf]) -> Option<PlantGuard> {
        let watched = watched_of(roots, paths);
        (!watched.is_empty()).then(|| PlantGuard {
            watched,
            state: Mutex::new(State::default()),
        })
    }

    /// Before a command starts: unless a command of the session may still be planting,
    /// notes which protected paths are missing now (the user's own changes between calls
    /// are theirs).
    pub(super) fn before_call(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !state.busy {
            state.since = now();
            state.missing = self.missing_now();
        }
        state.busy = true;
    }

    /// After a call (`still_running`: the session left processes running): takes away what
    /// appeared at a protected path that was missing; one sentence per path.
    pub(super) fn after_call(&self, still_running: bool) -> Vec<String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let undone = self.undo(&state);
        state.busy = still_running;
        undone
    }

    /// At the session's end, once its processes are gone.
    pub(super) fn end_session(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.busy {
            self.undo(&state);
        }
        state.busy = false;
    }

    /// Takes away what appeared at the paths missing before the call. For each, the way
    /// down to its first missing component is opened (shared with the path before it) and
    /// that name looked at; only where something is there now does [`take_away`] walk it.
    fn undo(&self, state: &State) -> Vec<String> {
        let since = state.since - CLOCK_SLACK.as_nanos() as i128;
        let mut undone = Vec::new();
        let mut way = Way::default();
        let mut start = 0;
        for group in self.watched.chunk_by(|a, b| a.root == b.root) {
            let end = start + group.len();
            let in_group = |i: usize| (start..end).contains(&i);
            // The paths missing from the root's top before the call: one read of the
            // root says whether any of them appeared.
            let first = sorted(
                state
                    .missing
                    .iter()
                    .filter(|&&(i, present)| present == 0 && in_group(i))
                    .filter_map(|&(i, _)| self.watched.get(i))
                    .map(|w| w.parts[0].as_os_str()),
            );
            let mut top: Option<Option<Vec<bool>>> = None;
            for &(i, present) in state.missing.iter().filter(|(i, _)| in_group(*i)) {
                let Some(w) = self.watched.get(i) else {
                    continue;
                };
                if !way.start(&w.root, &w.parts) {
                    continue;
                }
                if present == 0 {
                    let top = top.get_or_insert_with(|| {
                        way.dir(0).and_then(|d| dir_names::present(d, &first))
                    });
                    if at_top(top.as_deref(), &first, &w.parts[0]) == Some(false) {
                        continue;
                    }
                }
                // The directories that existed; a link or file now in their place goes the
                // careful way.
                let reached = w.parts[..present]
                    .iter()
                    .skip(way.depth().min(present))
                    .all(|name| way.down(name));
                if reached
                    && way.depth() >= present
                    && let Some(dir) = way.dir(present)
                    && stat_at(dir, &w.parts[present]).is_none()
                {
                    continue;
                }
                if let Some(root) = way.dir(0)
                    && let Some(note) = take_away(root, w, present, since)
                {
                    undone.push(note);
                }
            }
            start = end;
        }
        undone
    }

    /// Each watched path missing now, with how many of its leading components exist (the
    /// last of them may be a link or a file). Each root is opened and read once (most
    /// protected paths start with a name missing at its top), and each directory on the
    /// way once for all the paths below it (see `plant_way.rs`).
    fn missing_now(&self) -> Vec<(usize, usize)> {
        let mut missing = Vec::new();
        let mut way = Way::default();
        let mut start = 0;
        for group in self.watched.chunk_by(|a, b| a.root == b.root) {
            let first = sorted(group.iter().map(|w| w.parts[0].as_os_str()));
            let mut top: Option<Option<Vec<bool>>> = None;
            for (k, w) in group.iter().enumerate() {
                let i = start + k;
                // A root that cannot be opened has nothing to plant in.
                if !way.start(&w.root, &w.parts) {
                    continue;
                }
                let top = top
                    .get_or_insert_with(|| way.dir(0).and_then(|d| dir_names::present(d, &first)));
                if !at_top(top.as_deref(), &first, &w.parts[0]).unwrap_or(true) {
                    missing.push((i, 0));
                    continue;
                }
                let present = present_parts(&mut way, w);
                if present < w.parts.len() {
                    missing.push((i, present));
                }
            }
            start += group.len();
        }
        missing
    }
}

/// How many of `w`'s components exist, going down `way` (started at `w`'s root).
fn present_parts<'w>(way: &mut Way<'w>, w: &'w Watched) -> usize {
    for (depth, name) in w.parts.iter().enumerate().skip(way.depth()) {
        let Some(st) = way.dir(depth).and_then(|dir| stat_at(dir, name)) else {
            return depth;
        };
        let last = depth + 1 == w.parts.len();
        if last || FileType::from_raw_mode(st.st_mode) != FileType::Directory || !way.down(name) {
            return depth + 1;
        }
    }
    w.parts.len()
}

/// The names given, sorted and without repeats (a root's listing is asked about them).
fn sorted<'a>(names: impl Iterator<Item = &'a OsStr>) -> Vec<&'a OsStr> {
    let mut names: Vec<&OsStr> = names.collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Whether `name` is at the root's top by its listing `top` of the names `first`; `None`
/// when the listing could not be made (the caller looks).
fn at_top(top: Option<&[bool]>, first: &[&OsStr], name: &OsStr) -> Option<bool> {
    let at = first.binary_search(&name).ok()?;
    top?.get(at).copied()
}

/// Walks down `w` from its root, past the `present` components that existed, and takes
/// away the first thing that stands at or in the way of the protected path: a link, a file
/// where a directory was expected, or the path itself. Directories the call made on the
/// way stay (they may hold the call's other work); what is beneath them is looked at.
fn take_away(root: BorrowedFd<'_>, w: &Watched, present: usize, since: i128) -> Option<String> {
    let mut sub: Option<OwnedFd> = None;
    let mut at = w.root.clone();
    for (i, name) in w.parts.iter().enumerate() {
        let dir = sub.as_ref().map_or(root, |fd| fd.as_fd());
        at.push(name);
        let st = stat_at(dir, name)?;
        let last = i + 1 == w.parts.len();
        let kind = FileType::from_raw_mode(st.st_mode);
        if i >= present && (last || kind != FileType::Directory) {
            return clear(dir, name, &at, since);
        }
        if last || kind != FileType::Directory {
            return None;
        }
        sub = Some(open_subdir(dir, name)?);
    }
    None
}

/// Removes `name` when all of it was made or changed since `since`; otherwise renames it
/// aside, never removing what may be the user's. The sentence for the call's note.
fn clear(dir: BorrowedFd<'_>, name: &std::ffi::OsStr, at: &Path, since: i128) -> Option<String> {
    if changed_since(dir, name, since) {
        remove_at(dir, name).ok()?;
        return Some(format!("removed {}", at.display()));
    }
    let aside = move_aside(dir, name).ok()?;
    Some(format!(
        "moved {} aside to {}",
        at.display(),
        at.with_file_name(aside).display()
    ))
}
