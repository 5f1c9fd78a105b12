//! The walk of grep and find through an execution environment's own operations
//! (`list_dir`, `read_file`, `metadata`), for files that are not on this machine: an SSH
//! host without the pi-tools helper, where every listing and every read is an SFTP request.
//!
//! It yields what the local walk ([`walk_sorted`](super::walk::walk_sorted)) yields, in the
//! same order: each directory's entries sorted by name, depth first; `.git` never entered;
//! the `.ignore`, `.gitignore` and `info/exclude` files of the root's ancestors and of every
//! directory below it applied by the same [`Rules`]; the same [`PathGlob`] selecting entries;
//! symbolic links yielded but not entered; the writes' temporary files left out. So a search
//! through it gives the model the same result as a local one.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ignore_rules::{
    IgnoreFiles, IgnoreTexts, MAX_IGNORE_FILE, Rules, exclude_in, git_dir_of,
};
use super::listing::Kind;
use super::path_glob::PathGlob;
use super::skipped::Skipped;
use crate::env::{ExecutionEnv, is_temp_file_name};

/// One path the walk yields (never the root itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvEntry {
    /// The path relative to the walk's root, with `/` separators.
    pub rel: String,
    /// The path in the environment.
    pub path: PathBuf,
    /// What the entry is (symbolic links not followed).
    pub kind: Kind,
    /// For a symbolic link: whether it leads to a regular file.
    pub link_to_file: bool,
}

/// A directory the walk is going through.
struct Open {
    path: PathBuf,
    rules: Option<Arc<Rules>>,
    entries: Vec<Listed>,
    next: usize,
}

struct Listed {
    name: String,
    rel: String,
    kind: Kind,
    link_to_file: bool,
    selected: bool,
}

/// An ordered walk below a directory of an execution environment; call
/// [`next`](Self::next) until it returns `None`.
pub(crate) struct EnvWalk<'a> {
    env: &'a dyn ExecutionEnv,
    only: Option<&'a PathGlob>,
    open: Vec<Open>,
    /// Directories that could not be read.
    pub skipped: Skipped,
}

impl<'a> EnvWalk<'a> {
    /// Starts a walk below `root` (an absolute directory path of `env`), yielding the entries
    /// `only` (when given) matches.
    pub(crate) async fn new(
        env: &'a dyn ExecutionEnv,
        root: &Path,
        only: Option<&'a PathGlob>,
    ) -> EnvWalk<'a> {
        let mut walk = EnvWalk {
            env,
            only,
            open: Vec::new(),
            skipped: Skipped::default(),
        };
        let mut rules = None;
        for dir in root
            .ancestors()
            .skip(1)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let texts = ignore_texts(env, dir, IgnoreFiles::all()).await;
            rules = Rules::from_texts(dir, rules, texts);
        }
        let top = walk.list(root, "", rules).await;
        walk.open.push(top);
        walk
    }

    /// The next entry in walk order.
    pub(crate) async fn next(&mut self) -> Option<EnvEntry> {
        loop {
            let dir = self.open.last_mut()?;
            let Some(entry) = dir.entries.get(dir.next) else {
                self.open.pop();
                continue;
            };
            dir.next += 1;
            let path = dir.path.join(&entry.name);
            let found = entry.selected.then(|| EnvEntry {
                rel: entry.rel.clone(),
                path: path.clone(),
                kind: entry.kind,
                link_to_file: entry.link_to_file,
            });
            if entry.kind == Kind::Dir {
                let (rel, rules) = (entry.rel.clone(), dir.rules.clone());
                let below = self.list(&path, &rel, rules).await;
                self.open.push(below);
            }
            if found.is_some() {
                return found;
            }
        }
    }

    /// Lists `dir` (relative path `rel`, with `parent_rules` in force there): its entries
    /// the rules let through, sorted by name. An unreadable directory lists as empty, and a
    /// refused one is noted in [`skipped`](Self::skipped), as locally.
    async fn list(&mut self, dir: &Path, rel: &str, parent_rules: Option<Arc<Rules>>) -> Open {
        let mut names = match self.env.list_dir(dir).await {
            Ok(names) => names,
            Err(err) => {
                if err.kind() == io::ErrorKind::PermissionDenied {
                    self.skipped.note(rel, "directory not readable");
                }
                Vec::new()
            }
        };
        names.retain(|e| !is_temp_file_name(e.name.as_bytes()));
        names.sort_unstable_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        let mut files = IgnoreFiles::default();
        for entry in &names {
            // Ignore files count when they are regular files or directories, as locally.
            if !entry.is_symlink && (entry.is_file || entry.is_dir) {
                files.note(entry.name.as_bytes());
            }
        }
        let rules = Rules::from_texts(dir, parent_rules, ignore_texts(self.env, dir, files).await);
        let mut entries = Vec::with_capacity(names.len());
        for entry in names {
            if entry.name == ".git" {
                continue;
            }
            let kind = if entry.is_symlink {
                Kind::Link
            } else if entry.is_dir {
                Kind::Dir
            } else if entry.is_file {
                Kind::File
            } else {
                Kind::Special
            };
            if rules
                .as_ref()
                .is_some_and(|r| r.is_ignored(&dir.join(&entry.name), kind == Kind::Dir))
            {
                continue;
            }
            let rel = if rel.is_empty() {
                entry.name.clone()
            } else {
                format!("{rel}/{}", entry.name)
            };
            let selected = self
                .only
                .is_none_or(|g| g.is_match(&rel, kind == Kind::Dir));
            entries.push(Listed {
                link_to_file: entry.is_symlink && entry.is_file,
                name: entry.name,
                rel,
                kind,
                selected,
            });
        }
        Open {
            path: dir.to_path_buf(),
            rules,
            entries,
            next: 0,
        }
    }
}

/// The texts of the ignore files `files` says `dir` holds.
async fn ignore_texts(env: &dyn ExecutionEnv, dir: &Path, files: IgnoreFiles) -> IgnoreTexts {
    if !files.any() {
        return IgnoreTexts::default();
    }
    let mut texts = IgnoreTexts::default();
    if files.ignore {
        texts.ignore = read_small(env, &dir.join(".ignore")).await;
    }
    if files.gitignore {
        texts.gitignore = read_small(env, &dir.join(".gitignore")).await;
    }
    if files.git {
        let git = dir.join(".git");
        let exclude = match env.metadata(&git).await {
            Ok(meta) if meta.is_dir => Some(git.join("info").join("exclude")),
            Ok(_) => match read_small(env, &git)
                .await
                .and_then(|text| git_dir_of(dir, &text))
            {
                Some(git_dir) => {
                    let commondir = read_small(env, &git_dir.join("commondir")).await;
                    Some(exclude_in(&git_dir, commondir.as_deref()))
                }
                None => None,
            },
            Err(_) => None,
        };
        if let Some(file) = exclude
            && let Some(text) = read_small(env, &file).await
        {
            texts.exclude = Some((file, text));
        }
    }
    texts
}

/// The text of a small regular file (`None`: missing, not a regular file, too big, or not
/// readable), as the local walk reads ignore files.
async fn read_small(env: &dyn ExecutionEnv, path: &Path) -> Option<String> {
    let meta = env.metadata(path).await.ok()?;
    if !meta.is_file || meta.len > MAX_IGNORE_FILE {
        return None;
    }
    let bytes = env.read_file(path).await.ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
