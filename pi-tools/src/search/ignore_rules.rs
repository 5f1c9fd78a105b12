//! The ignore rules in force in one directory of a walk: the directory's own `.ignore`,
//! `.gitignore` and `.git/info/exclude` files, and through its parent those of every
//! directory above it, up to the file system's root.
//!
//! Each file is compiled by ripgrep's own `ignore::gitignore` matcher; this module only
//! decides which files apply and in what precedence, the way ripgrep does with repositories
//! not required: for each kind of file the deepest directory whose file says anything about a
//! path decides (so a `!negation` deeper down re-includes what a parent ignored), and a
//! `.ignore` file's verdict beats a `.gitignore` file's, which beats `info/exclude`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore rules of one directory, linked to those of its parent.
#[derive(Debug)]
pub(crate) struct Rules {
    parent: Option<Arc<Rules>>,
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// Which ignore-related names a directory listing showed.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IgnoreFiles {
    pub(crate) ignore: bool,
    pub(crate) gitignore: bool,
    pub(crate) git: bool,
}

impl IgnoreFiles {
    /// Every kind, for a directory that was not listed (the ones above a walk's root).
    pub(crate) fn all() -> IgnoreFiles {
        IgnoreFiles {
            ignore: true,
            gitignore: true,
            git: true,
        }
    }

    /// Notes one name (its bytes) from a directory listing.
    pub(crate) fn note(&mut self, name: &[u8]) {
        match name {
            b".ignore" => self.ignore = true,
            b".gitignore" => self.gitignore = true,
            b".git" => self.git = true,
            _ => {}
        }
    }

    pub(crate) fn any(self) -> bool {
        self.ignore || self.gitignore || self.git
    }
}

impl Rules {
    /// The rules the directories above `root` (not `root` itself) put in force there.
    /// `root` must be absolute.
    pub(crate) fn above(root: &Path) -> Option<Arc<Rules>> {
        let ancestors: Vec<&Path> = root.ancestors().skip(1).collect();
        ancestors.into_iter().rev().fold(None, |chain, dir| {
            Rules::within(dir, chain, IgnoreFiles::all())
        })
    }

    /// The rules in force inside `dir`: `parent`'s, plus those of the ignore files `dir`
    /// holds. Without any, this is `parent` itself.
    pub(crate) fn within(
        dir: &Path,
        parent: Option<Arc<Rules>>,
        files: IgnoreFiles,
    ) -> Option<Arc<Rules>> {
        if !files.any() {
            return parent;
        }
        let texts = IgnoreTexts {
            ignore: files
                .ignore
                .then(|| read_small_regular(&dir.join(".ignore")))
                .flatten(),
            gitignore: files
                .gitignore
                .then(|| read_small_regular(&dir.join(".gitignore")))
                .flatten(),
            exclude: files
                .git
                .then(|| git_exclude_file(dir))
                .flatten()
                .and_then(|file| read_small_regular(&file).map(|text| (file, text))),
        };
        Rules::from_texts(dir, parent, texts)
    }

    /// The rules in force inside `dir`: `parent`'s, plus those of the ignore files whose
    /// text is given (read by whoever walks: this machine's file system, or an execution
    /// environment's). Without any, this is `parent` itself.
    pub(crate) fn from_texts(
        dir: &Path,
        parent: Option<Arc<Rules>>,
        texts: IgnoreTexts,
    ) -> Option<Arc<Rules>> {
        let ignore = texts
            .ignore
            .and_then(|text| compile(dir, &dir.join(".ignore"), &text));
        let gitignore = texts
            .gitignore
            .and_then(|text| compile(dir, &dir.join(".gitignore"), &text));
        let exclude = texts
            .exclude
            .and_then(|(file, text)| compile(dir, &file, &text));
        if ignore.is_none() && gitignore.is_none() && exclude.is_none() {
            return parent;
        }
        Some(Arc::new(Rules {
            parent,
            ignore,
            gitignore,
            exclude,
        }))
    }

    /// Whether `path` (absolute, below the directory these rules belong to) is ignored.
    pub(crate) fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let (mut ignore, mut gitignore, mut exclude) = (Match::None, Match::None, Match::None);
        let mut level = Some(self);
        while let Some(rules) = level {
            decide(&mut ignore, rules.ignore.as_ref(), path, is_dir);
            decide(&mut gitignore, rules.gitignore.as_ref(), path, is_dir);
            decide(&mut exclude, rules.exclude.as_ref(), path, is_dir);
            if !ignore.is_none() {
                break;
            }
            level = rules.parent.as_deref();
        }
        ignore.or(gitignore).or(exclude).is_ignore()
    }
}

/// Lets `matcher` decide `verdict` unless a deeper file already did.
fn decide(verdict: &mut Match<()>, matcher: Option<&Gitignore>, path: &Path, is_dir: bool) {
    if let (true, Some(matcher)) = (verdict.is_none(), matcher) {
        *verdict = matcher.matched(path, is_dir).map(|_| ());
    }
}

/// Compiles one ignore file (`file`, holding `text`) whose patterns are relative to `dir`.
/// An empty file gives nothing; lines that are not valid globs are skipped, as git does.
fn compile(dir: &Path, file: &Path, text: &str) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    for line in text.lines() {
        // An invalid line is skipped; every valid one is kept.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    let matcher = builder.build().ok()?;
    (!matcher.is_empty()).then_some(matcher)
}

/// Where the `info/exclude` file of the repository whose top is `dir` lives: inside `.git`
/// when it is a directory, and for a worktree or submodule (`.git` is then a file saying
/// `gitdir: …`) in the repository's common directory.
fn git_exclude_file(dir: &Path) -> Option<PathBuf> {
    let git = dir.join(".git");
    let meta = std::fs::metadata(&git).ok()?;
    if meta.is_dir() {
        return Some(git.join("info").join("exclude"));
    }
    let git_dir = git_dir_of(dir, &read_small_regular(&git)?)?;
    let commondir = read_small_regular(&git_dir.join("commondir"));
    Some(exclude_in(&git_dir, commondir.as_deref()))
}

/// The git directory a `.git` file in `dir` points to (`gitdir: …`).
pub(crate) fn git_dir_of(dir: &Path, git_file: &str) -> Option<PathBuf> {
    Some(dir.join(git_file.trim().strip_prefix("gitdir:")?.trim()))
}

/// The `info/exclude` file of the git directory `git_dir`, whose `commondir` file (if it has
/// one) says this.
pub(crate) fn exclude_in(git_dir: &Path, commondir: Option<&str>) -> PathBuf {
    let common = match commondir {
        Some(common) => git_dir.join(common.trim()),
        None => git_dir.to_path_buf(),
    };
    common.join("info").join("exclude")
}

/// The texts of one directory's ignore files, as read.
#[derive(Debug, Default)]
pub(crate) struct IgnoreTexts {
    /// `.ignore`.
    pub ignore: Option<String>,
    /// `.gitignore`.
    pub gitignore: Option<String>,
    /// The repository's `info/exclude` (where it is, and its text).
    pub exclude: Option<(PathBuf, String)>,
}

/// Ignore files bigger than this are not read.
pub(crate) const MAX_IGNORE_FILE: u64 = 4 << 20;

/// The text of a small regular file, opened without blocking (`None`: missing, not a
/// regular file, too big, or not readable): a FIFO named `.gitignore` must not stall a walk.
fn read_small_regular(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_IGNORE_FILE {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_IGNORE_FILE).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
