//! Where a command line writes: the directory the shell is in at each redirection, followed
//! through `cd`, `pushd` and `popd`, and the names `ln`, `cp` and `mv` make within the line,
//! so that `cd secrets && echo x > key` writes `secrets/key` and `ln -s .env l; echo x > l`
//! writes `.env`. What the text cannot fix is unknown, and a write rule asks about it.
//!
//! The reading stays a function of the text alone: directories are kept as text relative to
//! the call's working directory, which the policy joins when it judges a write.

use super::{Reader, basename};

/// Past this many possible directories at one place, the directory counts as unknown.
const MAX_DIRS: usize = 8;

/// How many links in a row (`b` to `a` to `.env`) a write is followed through.
const MAX_LINK_CHAIN: usize = 4;

/// Every directory the shell may be in at one place of the text: relative to the call's
/// working directory (`""` for it) or absolute; `None` for one known only when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Dirs(Vec<Option<String>>);

impl Default for Dirs {
    fn default() -> Self {
        Dirs(vec![Some(String::new())])
    }
}

impl Dirs {
    /// A directory known only when the line runs.
    pub(super) fn unknown() -> Self {
        Dirs(vec![None])
    }

    /// Either of two: where a step may or may not have happened (a `cd` that may fail, a
    /// loop body that may run again), every directory of both stays possible.
    pub(super) fn union(&self, other: &Dirs) -> Dirs {
        let mut all = self.0.clone();
        for dir in &other.0 {
            if !all.contains(dir) {
                all.push(dir.clone());
            }
        }
        if all.len() > MAX_DIRS {
            return Dirs::unknown();
        }
        Dirs(all)
    }

    /// `path` as seen from each possible directory.
    fn join(&self, path: Option<&str>) -> Vec<Option<String>> {
        self.0
            .iter()
            .map(|dir| join(dir.as_deref(), path))
            .collect()
    }
}

/// `path` from `dir`; `None` when either is unknown and the path is relative.
fn join(dir: Option<&str>, path: Option<&str>) -> Option<String> {
    let path = path?;
    if path.starts_with('/') || path.starts_with('~') {
        return Some(path.to_owned());
    }
    match dir? {
        "" => Some(path.to_owned()),
        dir => Some(format!("{}/{path}", dir.trim_end_matches('/'))),
    }
}

/// A path with `.`, empty components and `dir/..` folded away, as text: what two spellings
/// of one name (`./a/../l` and `l`) have in common.
fn fold(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}

/// The parent directory of a folded path, as text (`""` for the working directory).
fn parent(path: &str) -> String {
    match path.rfind('/') {
        Some(0) => "/".to_owned(),
        Some(at) => path[..at].to_owned(),
        None => String::new(),
    }
}

/// A name a command of the line makes for a file (a link, a copy kept as a link, a moved
/// file): writing through `name` writes what `target` names. Both are folded paths from the
/// call's working directory; `None` where the text does not fix them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Link {
    name: Option<String>,
    target: Option<String>,
}

/// The operands of `ln`, `cp` or `mv` after their options.
struct Operands {
    /// Single-letter options given (`s` for `-s`, long ones mapped to theirs).
    flags: String,
    /// `-t DIR`: every operand is a source and lands in DIR.
    target_dir: Option<Option<String>>,
    operands: Vec<Option<String>>,
}

fn operands(rest: &[Option<String>]) -> Operands {
    let mut out = Operands {
        flags: String::new(),
        target_dir: None,
        operands: Vec::new(),
    };
    let mut at = 0;
    let mut options_end = false;
    while at < rest.len() {
        let word = rest[at].as_deref();
        at += 1;
        let Some(w) = word.filter(|w| !options_end && w.starts_with('-') && w.len() > 1) else {
            out.operands.push(word.map(str::to_owned));
            continue;
        };
        if w == "--" {
            options_end = true;
        } else if let Some(long) = w.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            match name {
                "target-directory" | "suffix" => {
                    let value = match value {
                        Some(v) => Some(v),
                        None => {
                            at += 1;
                            rest.get(at - 1).cloned().flatten()
                        }
                    };
                    if name == "target-directory" {
                        out.target_dir = Some(value);
                    }
                }
                "symbolic" => out.flags.push('s'),
                "relative" => out.flags.push('r'),
                "link" => out.flags.push('l'),
                "no-target-directory" => out.flags.push('T'),
                "no-dereference" | "archive" | "recursive" => out.flags.push('P'),
                "preserve" if value.as_deref().is_some_and(|v| v.contains("links")) => {
                    out.flags.push('P')
                }
                "symbolic-link" => out.flags.push('s'),
                _ => {}
            }
        } else {
            // A cluster of single letters; `-t` and `-S` take the rest of it or the next word.
            for (i, c) in w.char_indices().skip(1) {
                if c == 't' || c == 'S' {
                    let tail = &w[i + 1..];
                    let value = if tail.is_empty() {
                        at += 1;
                        rest.get(at - 1).cloned().flatten()
                    } else {
                        Some(tail.to_owned())
                    };
                    if c == 't' {
                        out.target_dir = Some(value);
                    }
                    break;
                }
                out.flags.push(c);
            }
        }
    }
    out
}

impl Reader<'_> {
    /// Reads what runs in a child or a subshell: a directory it changes to stays inside.
    pub(super) fn isolated(&mut self, read: impl FnOnce(&mut Self)) {
        let dirs = self.dirs.clone();
        let stack = self.stack.clone();
        read(self);
        self.dirs = dirs;
        self.stack = stack;
    }

    /// Reads code that may run any number of times (a loop's body). Where it moves, a
    /// second round may start where the first ended, so it is read from both places.
    pub(super) fn repeated(&mut self, read: impl Fn(&mut Self)) {
        let before = self.dirs.clone();
        let kept = std::mem::take(self.out);
        read(self);
        if self.dirs == before {
            let first = std::mem::replace(self.out, kept);
            self.out.commands.extend(first.commands);
            self.out.writes.extend(first.writes);
            return;
        }
        *self.out = kept;
        self.dirs = before.union(&self.dirs);
        read(self);
        // Zero rounds leave the shell where it was.
        self.dirs = before.union(&self.dirs);
    }

    /// A redirection writes `target` from every directory the shell may be in.
    pub(super) fn write(&mut self, target: Option<String>) {
        if self.deferred > 0 && target.as_deref().is_none_or(|t| !t.starts_with('/')) {
            self.deferred_write = true;
        }
        let joined = self.dirs.join(target.as_deref());
        self.out.writes.extend(joined);
    }

    /// `cd`, `pushd`, `popd`: where the shell may be from here on. A change that may fail
    /// keeps the old directory possible too.
    pub(super) fn change_dir(&mut self, name: &str, rest: &[Option<String>]) {
        self.moved = true;
        let args: Vec<&Option<String>> = rest
            .iter()
            .skip_while(|w| {
                w.as_deref()
                    .is_some_and(|w| w.starts_with('-') && w.len() > 1 && w != "--")
            })
            .skip_while(|w| w.as_deref() == Some("--"))
            .collect();
        // The shell's `cd` is logical unless told `-P`: `cd link/..` goes back to where the
        // text says, not above the link's target. So the directory is folded by its names
        // here; a path written from it is then resolved as the kernel opens it.
        let physical = rest
            .iter()
            .take_while(|w| {
                w.as_deref()
                    .is_some_and(|w| w.starts_with('-') && w != "--")
            })
            .any(|w| w.as_deref().is_some_and(|w| w.contains('P')));
        let next = match (name, args.first()) {
            // `cd` alone goes home, `cd -` back: neither is in the text.
            ("cd" | "pushd", Some(Some(dir))) if dir != "-" && !dir.starts_with('+') => {
                let dir = dir.clone();
                if name == "pushd" {
                    self.stack.push(self.dirs.clone());
                }
                Dirs(
                    self.dirs
                        .0
                        .iter()
                        .map(|d| {
                            let joined = join(d.as_deref(), Some(&dir))?;
                            Some(match physical || joined.starts_with('~') {
                                true => joined,
                                false => fold(&joined),
                            })
                        })
                        .collect(),
                )
            }
            ("popd", None) => self.stack.pop().unwrap_or_else(Dirs::unknown),
            _ => Dirs::unknown(),
        };
        self.dirs = self.dirs.union(&next);
    }

    /// `ln`, `link`, `cp` and `mv`: the names they make, and what each is judged as. A name
    /// made is a write of that name; a hard link is also a write of its target, since writing
    /// through the new name changes the target's contents whatever the name is called
    /// later. Links are recorded so that a later write through them in the line is judged as
    /// a write of what they name.
    pub(super) fn make_names(&mut self, name: &str, rest: &[Option<String>]) {
        let parsed = operands(rest);
        let symbolic = parsed.flags.contains('s');
        let hard = match name {
            "ln" => !symbolic,
            "link" => true,
            _ => parsed.flags.contains('l'),
        };
        // A plain copy is another file: it is followed only where it keeps links (`-s`,
        // `-l`, and `-d`, `-P`, `-a`, `-r` which copy a symbolic link as one).
        if name == "cp" && !parsed.flags.contains(['s', 'l', 'd', 'P', 'R', 'r', 'a']) {
            return;
        }
        let mut pairs: Vec<(Option<String>, Option<String>)> = Vec::new();
        let basename_in = |dir: &Option<String>, source: &Option<String>| match (dir, source) {
            (Some(d), Some(s)) => Some(format!("{d}/{}", basename(s.trim_end_matches('/')))),
            _ => None,
        };
        match &parsed.target_dir {
            Some(dir) => {
                for source in &parsed.operands {
                    pairs.push((source.clone(), basename_in(dir, source)));
                }
            }
            None => match parsed.operands.as_slice() {
                [] => {}
                // `ln TARGET` makes a link of that name here.
                [source] if name == "ln" => {
                    let here = source
                        .as_deref()
                        .map(|s| basename(s.trim_end_matches('/')).to_owned());
                    pairs.push((source.clone(), here));
                }
                [_] => {}
                [sources @ .., dest] => {
                    for source in sources {
                        // DEST is the new name, or a directory it lands in: the text cannot
                        // tell which, so both are taken.
                        if sources.len() == 1 {
                            pairs.push((source.clone(), dest.clone()));
                        }
                        if !parsed.flags.contains('T') {
                            pairs.push((source.clone(), basename_in(dest, source)));
                        }
                    }
                }
            },
        }
        let relative = name == "ln" && parsed.flags.contains('r');
        for (source, made) in pairs {
            for dir in self.dirs.0.clone() {
                let made_at = join(dir.as_deref(), made.as_deref()).map(|p| fold(&p));
                // A symbolic link's text is read from the link's own directory (unless
                // `-r` made it from ours); a hard link, a copy or a move names the file.
                let target = if symbolic && !relative && name != "mv" {
                    match (&made_at, &source) {
                        (Some(at), Some(s)) => join(Some(&parent(at)), Some(s)),
                        _ => None,
                    }
                } else {
                    join(dir.as_deref(), source.as_deref())
                };
                let target = target.map(|t| fold(&t));
                if name == "ln" || name == "link" {
                    self.out.writes.push(made_at.clone());
                }
                if hard && name != "mv" {
                    self.out.writes.push(target.clone());
                }
                self.links.push(Link {
                    name: made_at,
                    target,
                });
            }
        }
    }

    /// Ends a reading: writes through links made in the line become writes of what the links
    /// name, and writes of code run later (a function body, a trap) are read in an unknown
    /// directory when the line changes directory at all.
    pub(super) fn finish(&mut self) {
        if self.moved && self.deferred_write {
            self.out.writes.push(None);
        }
        if !self.links.is_empty() {
            let mut pending: Vec<String> = self.out.writes.iter().flatten().cloned().collect();
            for _ in 0..MAX_LINK_CHAIN {
                let mut found = Vec::new();
                for write in &pending {
                    let folded = fold(write);
                    for link in &self.links {
                        let Some(name) = &link.name else {
                            // A link whose name is not in the text may be any written file.
                            found.push(link.target.clone());
                            continue;
                        };
                        let rest = if folded == *name {
                            Some("")
                        } else {
                            folded
                                .strip_prefix(name.as_str())
                                .filter(|r| r.starts_with('/'))
                        };
                        if let Some(rest) = rest {
                            found.push(link.target.as_ref().map(|t| format!("{t}{rest}")));
                        }
                    }
                }
                pending.clear();
                for write in found {
                    if !self.out.writes.contains(&write) {
                        if let Some(w) = &write {
                            pending.push(w.clone());
                        }
                        self.out.writes.push(write);
                    }
                }
                if pending.is_empty() {
                    break;
                }
            }
        }
        let mut seen = Vec::with_capacity(self.out.writes.len());
        self.out.writes.retain(|w| {
            let new = !seen.contains(w);
            if new {
                seen.push(w.clone());
            }
            new
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{fold, join, parent};

    #[test]
    fn paths_fold_and_join_as_text() {
        assert_eq!(fold("./a/../l"), "l");
        assert_eq!(fold("a//b/."), "a/b");
        assert_eq!(fold("../x"), "../x");
        assert_eq!(fold("/a/../b"), "/b");
        assert_eq!(parent("a/b"), "a");
        assert_eq!(parent("b"), "");
        assert_eq!(
            join(Some("secrets"), Some("key")).as_deref(),
            Some("secrets/key")
        );
        assert_eq!(join(Some(""), Some("key")).as_deref(), Some("key"));
        assert_eq!(join(None, Some("key")), None);
        assert_eq!(join(None, Some("/etc/x")).as_deref(), Some("/etc/x"));
    }
}
