//! One simple command's words as they run: wrappers (`env`, `command`, `exec`, `nohup`,
//! `time`, …) seen through, strings run as code (`sh -c`, `eval`, `xargs`, `find -exec`, a
//! shell's here-document) read in turn, and the commands that move the shell or make names
//! for files noted for the writes after them.

use super::{Reader, SHELLS, SimpleCommand, basename};

impl Reader<'_> {
    /// One simple command's words: wrappers seen through, code strings read.
    pub(super) fn run(
        &mut self,
        words: Vec<Option<String>>,
        stdin_code: Option<String>,
        open_tail: bool,
    ) {
        let Some(first) = words.first() else {
            return;
        };
        let Some(first) = first.as_deref() else {
            self.unreadable(
                words,
                "its command name is computed when it runs (a substitution or expansion)",
            );
            return;
        };
        let name = basename(first);
        let rest = &words[1..];
        match name {
            "env" => return self.env(&words, stdin_code, open_tail),
            "command" | "builtin" | "nohup" | "exec" | "time" | "nice" | "timeout" | "sudo"
            | "doas" | "setsid" | "stdbuf" | "ionice"
                if !rest.is_empty() =>
            {
                let skip = wrapper_options(name, rest);
                if skip < rest.len() {
                    return self.run(rest[skip..].to_vec(), stdin_code, open_tail);
                }
            }
            n if SHELLS.contains(&n) => {
                return self.isolated(|r| r.shell(words, stdin_code));
            }
            "cd" | "pushd" | "popd" => self.change_dir(name, rest),
            "ln" | "link" | "cp" | "mv" => self.make_names(name, rest),
            "eval" => {
                let code: Option<Vec<&str>> = rest.iter().map(|w| w.as_deref()).collect();
                match code {
                    Some(code) => self.script(&code.join(" ")),
                    None => self.unreadable(words, "`eval` runs a string known only when it runs"),
                }
                return;
            }
            "source" | "." => {
                self.unreadable(
                    words,
                    "it runs a file as code, which the policy cannot read",
                );
                return;
            }
            "xargs" => {
                self.out.commands.push(SimpleCommand {
                    words: words.clone(),
                    open_tail,
                    unreadable: None,
                });
                let (skip, replace) = xargs_options(rest);
                let mut inner = if skip < rest.len() {
                    rest[skip..].to_vec()
                } else {
                    vec![Some("echo".to_owned())]
                };
                // With `-I R`, the input takes R's place in any word holding it.
                match replace {
                    Some(Some(r)) => {
                        for word in &mut inner {
                            if word.as_deref().is_some_and(|w| w.contains(r.as_str())) {
                                *word = None;
                            }
                        }
                    }
                    Some(None) => inner.iter_mut().for_each(|w| *w = None),
                    None => {}
                }
                return self.isolated(|r| r.run(inner, None, true));
            }
            "find" => {
                self.out.commands.push(SimpleCommand {
                    words: words.clone(),
                    open_tail,
                    unreadable: None,
                });
                let mut at = 1;
                while at < words.len() {
                    let action = words[at].as_deref();
                    at += 1;
                    if matches!(action, Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
                        let start = at;
                        while at < words.len() && !matches!(words[at].as_deref(), Some(";" | "+")) {
                            at += 1;
                        }
                        // `{}` is a file's path, which may be any word (`find push -exec git
                        // {} \;` runs `git push`).
                        let inner = words[start..at]
                            .iter()
                            .map(|w| w.clone().filter(|w| !w.contains("{}")))
                            .collect();
                        self.isolated(|r| r.run(inner, None, false));
                    }
                }
                return;
            }
            _ => self.builtin_code(name, &words),
        }
        self.out.commands.push(SimpleCommand {
            words,
            open_tail,
            unreadable: None,
        });
    }

    /// `env [-i] [-u NAME] [NAME=VALUE]… [-S STRING | COMMAND …]`.
    fn env(&mut self, words: &[Option<String>], stdin_code: Option<String>, open_tail: bool) {
        let mut at = 1;
        while let Some(word) = words.get(at) {
            let Some(w) = word.as_deref() else {
                break;
            };
            if w == "--" {
                at += 1;
                break;
            } else if matches!(w, "-u" | "--unset" | "-C" | "--chdir") {
                at += 2;
            } else if w == "-S" || w == "--split-string" {
                match words.get(at + 1).cloned().flatten() {
                    Some(code) => {
                        let mut split: Vec<Option<String>> = code
                            .split_whitespace()
                            .map(|s| Some(s.to_owned()))
                            .collect();
                        split.extend(words.iter().skip(at + 2).cloned());
                        return self.run(split, stdin_code, open_tail);
                    }
                    None => {
                        return self.unreadable(
                            words.to_vec(),
                            "`env -S` splits a string known only when it runs",
                        );
                    }
                }
            } else if w.starts_with('-') {
                at += 1;
            } else if let Some((name, value)) = w.split_once('=').filter(|(n, _)| !n.is_empty()) {
                self.variable(name, Some(value));
                at += 1;
            } else {
                break;
            }
        }
        if at < words.len() {
            self.run(words[at..].to_vec(), stdin_code, open_tail);
        } else {
            self.out.commands.push(SimpleCommand {
                words: words.to_vec(),
                open_tail,
                unreadable: None,
            });
        }
    }

    /// `sh -c CODE`, `bash script.sh`, `bash <<EOF … EOF`.
    fn shell(&mut self, words: Vec<Option<String>>, stdin_code: Option<String>) {
        let mut at = 1;
        let mut dash_c = false;
        while let Some(Some(w)) = words.get(at) {
            if w == "--" {
                at += 1;
                break;
            }
            if w == "-o" || w == "+o" {
                at += 2;
                continue;
            }
            if !(w.starts_with('-') || w.starts_with('+')) {
                break;
            }
            if w.starts_with('-') && !w.starts_with("--") && w.contains('c') {
                dash_c = true;
            }
            at += 1;
        }
        match (dash_c, words.get(at)) {
            (true, Some(Some(code))) => {
                let code = code.clone();
                self.script(&code);
            }
            (true, _) => self.unreadable(words, "it runs a string known only when it runs"),
            (false, Some(Some(file))) => {
                let why = format!("it runs the script file `{file}`, which the policy cannot read");
                self.unreadable(words, why);
            }
            (false, Some(None)) => self.unreadable(
                words,
                "it runs a script whose name is known only when it runs",
            ),
            (false, None) => match stdin_code {
                Some(code) => self.script(&code),
                None => self.unreadable(
                    words,
                    "it runs its standard input as code, which the policy cannot read",
                ),
            },
        }
    }
}

/// How many of a wrapper's leading words are its own options (and their values).
fn wrapper_options(name: &str, rest: &[Option<String>]) -> usize {
    let mut at = 0;
    // `timeout 5 cmd` and `nice -n 5 cmd` take a value; `timeout` also its duration.
    let mut duration_pending = name == "timeout";
    while let Some(Some(w)) = rest.get(at) {
        if w == "--" {
            return at + 1;
        }
        if w.starts_with('-') && w.len() > 1 {
            let takes_value = match name {
                "exec" => w == "-a",
                "nice" => w == "-n",
                "timeout" => matches!(w.as_str(), "-s" | "-k" | "--signal" | "--kill-after"),
                "sudo" => matches!(
                    w.as_str(),
                    "-u" | "-g" | "-C" | "-D" | "-h" | "-p" | "-r" | "-t" | "-T" | "-U"
                ),
                "doas" => matches!(w.as_str(), "-u" | "-C"),
                "stdbuf" => matches!(w.as_str(), "-i" | "-o" | "-e"),
                "ionice" => matches!(w.as_str(), "-c" | "-n" | "-p" | "-P" | "-u"),
                _ => false,
            };
            at += if takes_value { 2 } else { 1 };
        } else if duration_pending {
            duration_pending = false;
            at += 1;
        } else {
            break;
        }
    }
    at
}

/// How many of `xargs`'s leading words are its own options (and their values), and the
/// replace string of `-I R`, `-IR`, `-i` or `--replace[=R]` (`Some(None)`: not in the text).
fn xargs_options(rest: &[Option<String>]) -> (usize, Option<Option<String>>) {
    const WITH_VALUE: [&str; 14] = [
        "-I",
        "-n",
        "-P",
        "-L",
        "-d",
        "-a",
        "-E",
        "-s",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ];
    let mut at = 0;
    let mut replace = None;
    while let Some(word) = rest.get(at) {
        let Some(w) = word.as_deref() else {
            // An option known only when it runs may be `-I` with any replace string.
            replace = Some(None);
            break;
        };
        if w == "--" {
            return (at + 1, replace);
        }
        if !w.starts_with('-') || w.len() == 1 {
            break;
        }
        if w == "-I" {
            replace = Some(rest.get(at + 1).cloned().flatten());
        } else if let Some(r) = w.strip_prefix("-I") {
            replace = Some(Some(r.to_owned()));
        } else if w == "-i" || w == "--replace" {
            replace = Some(Some("{}".to_owned()));
        } else if let Some(r) = w
            .strip_prefix("-i")
            .or_else(|| w.strip_prefix("--replace="))
        {
            replace = Some(Some(r.to_owned()));
        }
        at += if WITH_VALUE.contains(&w) { 2 } else { 1 };
    }
    (at, replace)
}
