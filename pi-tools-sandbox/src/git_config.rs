//! What a repository's settings make git run from outside its git directory: the hooks
//! directory `core.hooksPath` names (husky, lefthook and many projects keep their hooks in
//! the work tree) and the files `include.path` and `includeIf.<condition>.path` pull settings
//! from. Protecting `.git/config` and `.git/hooks` holds nothing when the settings say that
//! the hooks are in `.husky` or that more settings are in `../.gitconfig`: a command writes
//! a hook or a setting there, and the user's next `git commit` outside the sandbox runs it.
//!
//! So the sandbox reads the settings git reads for the repository (the user's own, the
//! repository's `config` and `config.worktree`, and every file they include, whatever the
//! include's condition: keeping an unused one read-only costs nothing) and protects what
//! they name inside a writable root. Only these keys are read; values are taken as git
//! writes them (quoted or not, `#` and `;` comments, `\` escapes and line continuations).
//! A `core.hooksPath` of husky's layout (`…/_`, whose hooks run the scripts one level up)
//! protects that level too.
//!
//! The settings also name programs git runs (`core.fsmonitor`, `filter.<driver>.clean`,
//! `diff.<driver>.textconv`, `credential.helper`, an alias's `!command`, …). Any value's
//! word that is written as a path (`./tools/clean.sh`, `scripts/textconv`, `~/bin/x`) and
//! names a file that exists is protected too, relative to the work tree's top, where git
//! runs them: a script the settings run is no less a hook for being named elsewhere.

use std::fs;
use std::path::{Path, PathBuf};

use crate::git::Repository;

/// How deep includes are followed (git stops at 10 too).
const MAX_DEPTH: usize = 10;

/// The paths the settings of `repo` make git run or read, besides its git directory: the
/// hooks directory and the included files, absolute and lexically clean (they may not
/// exist). `home` and `xdg_config` locate the user's own settings.
pub(crate) fn redirects(
    repo: &Repository,
    home: Option<&Path>,
    xdg_config: Option<&Path>,
) -> Vec<PathBuf> {
    redirects_of(&repo.root, &repo.git_dir, &repo.common, home, xdg_config)
}

/// [`redirects`] of the work tree `root` whose git directories are `git_dir` and `common`.
pub(crate) fn redirects_of(
    root: &Path,
    git_dir: &Path,
    common: &Path,
    home: Option<&Path>,
    xdg_config: Option<&Path>,
) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(dir) = xdg_config
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join(".config")))
    {
        files.push(dir.join("git/config"));
    }
    if let Some(home) = home {
        files.push(home.join(".gitconfig"));
    }
    files.push(common.join("config"));
    files.push(git_dir.join("config.worktree"));
    let mut found = Found::default();
    for file in files {
        found.read(&file, home, 0);
    }
    let mut out = found.included;
    for word in &found.words {
        let path = expand(word, home, root);
        if path.is_file() {
            out.push(path);
        }
    }
    if let Some(hooks) = found.hooks_path {
        let hooks = expand(&hooks, home, root);
        // husky 9: `core.hooksPath = .husky/_`, whose hooks run `.husky/<hook>`.
        if hooks.file_name().is_some_and(|n| n == "_")
            && let Some(parent) = hooks.parent()
        {
            out.push(parent.to_path_buf());
        }
        out.push(hooks);
    }
    out.sort();
    out.dedup();
    out
}

/// What the settings files read so far say.
#[derive(Default)]
struct Found {
    /// The last `core.hooksPath` (a later file overrides an earlier one), as written.
    hooks_path: Option<String>,
    /// Every file an include names.
    included: Vec<PathBuf>,
    /// The words of other values written as paths (see [`path_words`]).
    words: Vec<String>,
}

impl Found {
    fn read(&mut self, file: &Path, home: Option<&Path>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Ok(text) = fs::read_to_string(file) else {
            return;
        };
        let dir = file.parent().unwrap_or(Path::new("/"));
        for (section, key, value) in entries(&text) {
            match (section.as_str(), key.as_str()) {
                ("core", "hookspath") => self.hooks_path = Some(value),
                ("include", "path") | ("includeif", "path") => {
                    let included = expand(&value, home, dir);
                    if !self.included.contains(&included) {
                        self.included.push(included.clone());
                        self.read(&included, home, depth + 1);
                    }
                }
                _ => {
                    for word in path_words(&value) {
                        if !self.words.contains(&word) {
                            self.words.push(word);
                        }
                    }
                }
            }
        }
    }
}

/// The words of a setting's value that are written as paths to a program or file: starting
/// with `/`, `./`, `../` or `~/`, or holding a `/` that is not part of a URL or a remote
/// (`https://…`, `git@host:repo`). An alias's leading `!` and shell punctuation around words
/// are not part of them.
fn path_words(value: &str) -> Vec<String> {
    value
        .trim_start_matches('!')
        .split(|c: char| c.is_whitespace() || "'\"`;&|()<>=".contains(c))
        .filter(|word| {
            !word.is_empty()
                && !word.contains("://")
                && (word.starts_with(['/', '~'])
                    || word.starts_with("./")
                    || word.starts_with("../")
                    || (word.contains('/') && !word.contains(':') && !word.starts_with('-')))
        })
        .map(str::to_owned)
        .collect()
}

/// `value` as git takes a path: `~/` from the home directory, relative from `base`.
fn expand(value: &str, home: Option<&Path>, base: &Path) -> PathBuf {
    let path = match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => base.join(value),
    };
    clean(&path)
}

/// `path` with `.` and `..` folded by its names (a protected path is matched by name).
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `(section, key, value)` entries of a settings file: the section's name and the key
/// lower-cased (the subsection, which is case-sensitive, dropped: only its section
/// matters here), the value unquoted and unescaped.
fn entries(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(header) = trimmed.strip_prefix('[') {
            let name = header.split([']', ' ', '"', '\t']).next().unwrap_or("");
            // `[section.subsection]`, the old spelling.
            section = name.split('.').next().unwrap_or("").to_ascii_lowercase();
            // A key may follow the header on its line.
            let Some(rest) = header.split_once(']').map(|(_, rest)| rest.trim()) else {
                continue;
            };
            if rest.is_empty() {
                continue;
            }
            let (key, value) = entry(rest, &mut lines);
            out.push((section.clone(), key, value));
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = entry(trimmed, &mut lines);
        out.push((section.clone(), key, value));
    }
    out
}

/// One `key = value` (or a bare `key`, which is true) starting on `line`, reading the next
/// lines while a value ends in `\`.
fn entry<'a>(line: &str, lines: &mut impl Iterator<Item = &'a str>) -> (String, String) {
    let (key, raw) = match line.split_once('=') {
        Some((key, raw)) => (key, raw.to_owned()),
        None => (line, String::new()),
    };
    let key = key
        .split(['#', ';'])
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let mut value = String::new();
    let mut quoted = false;
    let mut chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    loop {
        if i >= chars.len() {
            break;
        }
        match chars[i] {
            '\\' if i + 1 == chars.len() => {
                // A continuation: the value goes on on the next line.
                match lines.next() {
                    Some(next) => {
                        chars.truncate(i);
                        chars.extend(next.chars());
                        continue;
                    }
                    None => break,
                }
            }
            '\\' => {
                i += 1;
                value.push(match chars[i] {
                    'n' => '\n',
                    't' => '\t',
                    'b' => '\u{8}',
                    other => other,
                });
            }
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            c => value.push(c),
        }
        i += 1;
    }
    (key, value.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_as_git_writes_them() {
        let text = "# a comment\n[core]\n\thooksPath = .husky/_ ; husky\n\
                    [include]\n\tpath = \"../shared.gitconfig\"\n\
                    [includeIf \"gitdir:~/work/\"]\n\tpath = ~/work.gitconfig\n\
                    [Core] HooksPath = \"a\\\"b\" # quoted\n\
                    [alias]\n\tlong = !echo one \\\n two\n\tbare\n";
        assert_eq!(
            entries(text),
            [
                ("core".into(), "hookspath".into(), ".husky/_".into()),
                (
                    "include".into(),
                    "path".into(),
                    "../shared.gitconfig".into()
                ),
                ("includeif".into(), "path".into(), "~/work.gitconfig".into()),
                ("core".into(), "hookspath".into(), "a\"b".into()),
                ("alias".into(), "long".into(), "!echo one  two".into()),
                ("alias".into(), "bare".into(), String::new()),
            ]
        );
    }

    #[test]
    fn path_words_are_those_written_as_paths() {
        assert_eq!(
            path_words("!sh ./tools/x.sh --flag ../up/y; scripts/z | cat"),
            ["./tools/x.sh", "../up/y", "scripts/z"]
        );
        assert_eq!(
            path_words("git@github.com:org/repo https://host/a/b --opt=./a/b ~/bin/c /usr/bin/d"),
            ["./a/b", "~/bin/c", "/usr/bin/d"]
        );
        assert!(path_words("true").is_empty());
    }

    #[test]
    fn a_program_the_settings_run_from_the_work_tree_is_found() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path().join("ws");
        let git = root.join(".git");
        fs::create_dir_all(&git).expect("git");
        fs::create_dir_all(root.join("tools")).expect("tools");
        fs::write(root.join("tools/clean.sh"), "#!/bin/sh\ncat\n").expect("script");
        fs::write(
            git.join("config"),
            "[filter \"x\"]\n\tclean = tools/clean.sh %f\n\tsmudge = tools/missing.sh\n\
             [remote \"origin\"]\n\turl = git@example.com:org/repo.git\n",
        )
        .expect("config");
        let repo = Repository::find(&root)
            .expect("read")
            .expect("a repository");
        assert_eq!(redirects(&repo, None, None), [root.join("tools/clean.sh")]);
    }

    #[test]
    fn the_hooks_and_every_included_file_are_found_through_the_includes() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path().join("ws");
        let git = root.join(".git");
        let home = top.path().join("home");
        fs::create_dir_all(&git).expect("git");
        fs::create_dir_all(&home).expect("home");
        fs::write(
            git.join("config"),
            "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../team.gitconfig\n",
        )
        .expect("config");
        // Included, and including a file of its own; one that does not exist is named too.
        fs::write(
            root.join("team.gitconfig"),
            "[includeIf \"onbranch:main\"]\n\tpath = conf/more.gitconfig\n[include]\n\tpath = missing.gitconfig\n",
        )
        .expect("team");
        fs::create_dir_all(root.join("conf")).expect("conf");
        fs::write(
            root.join("conf/more.gitconfig"),
            "[core]\n\thooksPath = hooks\n",
        )
        .expect("more");
        let repo = Repository::find(&root)
            .expect("read")
            .expect("a repository");
        assert_eq!(
            redirects(&repo, Some(&home), None),
            [
                root.join("conf/more.gitconfig"),
                root.join("hooks"),
                root.join("missing.gitconfig"),
                root.join("team.gitconfig"),
            ]
        );
        // The user's own settings count too, and the repository's come after them.
        fs::write(
            home.join(".gitconfig"),
            "[core]\n\thooksPath = ~/githooks\n",
        )
        .expect("user");
        fs::write(git.join("config"), "[core]\n\thooksPath = .husky/_\n").expect("config");
        assert_eq!(
            redirects(&repo, Some(&home), None),
            [root.join(".husky"), root.join(".husky/_")]
        );
        fs::write(git.join("config"), "[user]\n\tname = x\n").expect("config");
        assert_eq!(redirects(&repo, Some(&home), None), [home.join("githooks")]);
    }
}
