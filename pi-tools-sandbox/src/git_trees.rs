//! The repository search of a directory, shared by its sessions.
//!
//! A [`Tree`] is what is beneath a set of writable roots: the directories (their watch, or
//! their change times) and the repositories among them. That is a fact of the directory,
//! not of a session, and it costs an inotify instance and memory per directory below the
//! roots. So the sessions of one directory (an HTTP gateway's, say) share one: the first
//! walks, the others bring it up to date with a look (`sweep`), and it goes with the last
//! of them. Any session's look updates it for all; what each session's guard compares with
//! is its own (see `git_guard.rs`), so one session looking cannot hide a repository from
//! another.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::git_nested::Tree;

/// A tree as its sessions hold it.
pub(super) type SharedTree = Arc<Mutex<Tree>>;

/// The live trees, by their roots.
type Table = Mutex<HashMap<Vec<PathBuf>, Weak<Mutex<Tree>>>>;

fn trees() -> &'static Table {
    static TREES: OnceLock<Table> = OnceLock::new();
    TREES.get_or_init(Mutex::default)
}

/// The tree of `roots`: the one another session holds, brought up to date, or a new walk.
pub(super) fn shared(roots: &[PathBuf]) -> io::Result<SharedTree> {
    let key = roots.to_vec();
    let held = {
        let mut trees = trees().lock().unwrap_or_else(|e| e.into_inner());
        trees.retain(|_, tree| tree.strong_count() > 0);
        trees.get(&key).and_then(Weak::upgrade)
    };
    if let Some(tree) = held {
        tree.lock().unwrap_or_else(|e| e.into_inner()).sweep();
        return Ok(tree);
    }
    // Walked outside the table's lock: another directory's session need not wait. Two
    // first sessions of one directory may both walk; the table keeps the later.
    let tree = Arc::new(Mutex::new(Tree::scan(roots)?));
    trees()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, Arc::downgrade(&tree));
    Ok(tree)
}

/// A session sleeps: when no other session holds its tree, the tree rests (its watch and
/// what it knows of each directory go; see [`Tree::rest`]).
pub(super) fn rest(tree: &SharedTree) {
    if Arc::strong_count(tree) == 1 {
        tree.lock().unwrap_or_else(|e| e.into_inner()).rest();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sessions of one directory share its tree; a repository made after the first
    /// walk is found by the second session's look; the last holder lets it go.
    #[test]
    fn sessions_of_one_directory_share_its_tree() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(top.path()).expect("canonical");
        std::fs::create_dir_all(root.join("a/.git")).expect("mkdir");
        let first = shared(std::slice::from_ref(&root)).expect("walked");
        std::fs::create_dir_all(root.join("b/.git")).expect("mkdir");
        let second = shared(std::slice::from_ref(&root)).expect("shared");
        assert!(Arc::ptr_eq(&first, &second));
        let repos: Vec<PathBuf> = second
            .lock()
            .expect("lock")
            .repos()
            .iter()
            .cloned()
            .collect();
        assert_eq!(repos, vec![root.join("a"), root.join("b")]);
        drop((first, second));
        let third = shared(std::slice::from_ref(&root)).expect("walked again");
        assert_eq!(Arc::strong_count(&third), 1);
    }
}
