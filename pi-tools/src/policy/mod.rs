//! A policy over every tool call: rules from `[policy]` in `pi-tools.toml` that allow, ask
//! about or deny a call by its tool, its shell command's words, its path or any argument;
//! the strictest matching decision wins, and a call no rule covers gets the default.
//!
//! ```
//! use pi_tools::policy::{Decision, Policy};
//! use pi_tools::config::Config;
//!
//! // A rule names registered tools (here the built-ins); a name nothing registers is an error.
//! let registry = pi_tools::Registry::from_inventory().expect("the tools register");
//! let registered: Vec<_> = registry.iter().cloned().collect();
//! let config = Config::parse(r#"
//! [policy]
//! default = "allow"
//!
//! [[policy.rule]]
//! tool = "bash"
//! command = ["git", ["push", "fetch"]]
//! decision = "deny"
//! reason = "A person pushes and fetches."
//! "#, "pi-tools.toml", &registered).expect("valid");
//! let cwd = std::env::current_dir().unwrap();
//! let verdict = config.policy.check("bash", &serde_json::json!({"command": "git status && git push"}), &cwd);
//! assert_eq!(verdict.decision, Decision::Deny);
//! ```
//!
//! A rule's `path` holds globs over a tool's `path` argument (relative ones against the
//! working directory), a rule's `arg` a condition on any argument; each field of [`Rule`]
//! names the key it is read from:
//!
//! ```
//! use pi_tools::policy::Decision;
//! use pi_tools::config::Config;
//! use serde_json::json;
//!
//! # let registry = pi_tools::Registry::from_inventory().expect("the tools register");
//! # let registered: Vec<_> = registry.iter().cloned().collect();
//! let config = Config::parse(r#"
//! [policy]
//! default = "allow"
//!
//! [[policy.rule]]
//! tool = ["write", "edit"]
//! path = ["/etc/**", "**/.env"]
//! decision = "deny"
//! reason = "Configuration outside the project is a person's to change."
//!
//! [[policy.rule]]
//! tool = "bash"
//! arg = { name = "timeout", equals = 0 }
//! decision = "ask"
//! reason = "A command without a timeout may run forever."
//! "#, "pi-tools.toml", &registered).expect("valid");
//! let rule = &config.policy.rules[0];
//! assert_eq!(rule.paths.as_deref(), Some(&["/etc/**".to_owned(), "**/.env".to_owned()][..]));
//! let cwd = std::path::Path::new("/work/project");
//! let check = |tool, args| config.policy.check(tool, &args, cwd).decision;
//! assert_eq!(check("write", json!({"path": "/etc/hosts", "content": ""})), Decision::Deny);
//! assert_eq!(check("edit", json!({"path": "app/.env"})), Decision::Deny);
//! assert_eq!(check("write", json!({"path": "src/main.rs", "content": ""})), Decision::Allow);
//! assert_eq!(check("bash", json!({"command": "make", "timeout": 0})), Decision::Ask);
//! ```
//!
//! Shell commands are read by a real parser ([`shell`]); enforcement is a before-call hook
//! ([`PolicyHook`]) the [`Toolbox`](crate::toolbox::Toolbox) installs; a person is asked
//! through an [`Approver`].

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value as Json;

mod hook;
mod native;
mod paths;
pub mod shell;

pub use hook::{Approval, ApprovalRequest, Approver, PolicyHook, denial, question};
pub use paths::path_glob;
use shell::{ShellReading, SimpleCommand, basename};

/// The note of a redirection to a file with more than one name.
const OTHER_NAMES: &str =
    "a write to a file with other names (hard links), which the path rules cannot see";

/// What a rule (or the default) says of a call; ordered from the most to the least lenient,
/// so the strictest of several is their maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// The call runs.
    Allow,
    /// A person decides; where no one can be asked, the call is denied.
    Ask,
    /// The call does not run.
    Deny,
}

impl Decision {
    /// The word the configuration uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl std::str::FromStr for Decision {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "allow" => Ok(Decision::Allow),
            "ask" => Ok(Decision::Ask),
            "deny" => Ok(Decision::Deny),
            _ => Err(()),
        }
    }
}

/// A condition on one argument, a rule's `arg` key: `arg = { name = "mode", equals = "force" }`
/// or `arg = { name = "url", matches = "https://*.internal/*" }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgCondition {
    /// `name`: the argument's name (a top-level key of the arguments object).
    pub name: String,
    /// `equals` or `matches`: what its value must be.
    pub test: ArgTest,
}

/// How an argument's value is tested.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgTest {
    /// `equals = ...`: equal, as JSON, to this value.
    Equals(Json),
    /// `matches = "..."`: a string matching this glob (`*` any run of characters, `?` one).
    Matches(String),
}

/// One `[[policy.rule]]`. Each field's doc starts with the key of the file it comes from
/// (the Rust name may differ: `tool` fills `tools`, `path` fills `paths`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// `tool = "bash"` or `tool = ["write", "github__*"]`: tool names or globs the rule is
    /// about.
    pub tools: Vec<String>,
    /// `command = ["git", ["push", "fetch"]]`: a prefix of a shell command's words, each
    /// element one word or a list of alternatives.
    pub command: Option<Vec<Vec<String>>>,
    /// `path = "/etc/**"` or `path = ["/etc/**", "**/.env"]`: globs over the tool's `path`
    /// argument, resolved against the working directory.
    pub paths: Option<Vec<String>>,
    /// `arg = { name = "...", equals = ... }` or `{ name = "...", matches = "..." }`: a
    /// condition on one argument.
    pub arg: Option<ArgCondition>,
    /// `decision = "allow" | "ask" | "deny"`: what the rule says.
    pub decision: Decision,
    /// `reason = "..."`: why, shown to the model (and the person asked).
    pub reason: Option<String>,
    /// Where the rule is written: `file:line:column` of its `[[policy.rule]]` header.
    pub position: String,
}

/// Whether a condition holds; `Maybe` where the text leaves it open (a word known only when
/// the command runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    Yes,
    Maybe,
    No,
}

impl Rule {
    /// Whether the rule is about `tool`.
    pub fn covers(&self, tool: &str) -> bool {
        // An exact name is compared as is: the glob matcher allocates, and runs per rule.
        self.tools.iter().any(|p| {
            if crate::tool::names::is_glob(p) {
                crate::tool::names::glob_match(p, tool)
            } else {
                p == tool
            }
        })
    }

    /// Whether the conditions other than `command` hold for these arguments.
    fn args_hold(&self, args: &Json, path: &mut ResolvedPath<'_>) -> bool {
        if let Some(globs) = &self.paths {
            let Some(candidates) = path.candidates(args) else {
                return false;
            };
            if !globs_match(globs, candidates) {
                return false;
            }
        }
        if let Some(arg) = &self.arg {
            let value = args.get(&arg.name);
            let holds = match (&arg.test, value) {
                (ArgTest::Equals(want), Some(v)) => v == want,
                (ArgTest::Matches(glob), Some(Json::String(s))) => {
                    crate::tool::names::glob_match(glob, s)
                }
                _ => false,
            };
            if !holds {
                return false;
            }
        }
        true
    }

    /// Whether the `command` prefix matches one simple command.
    fn prefix_hit(&self, command: &SimpleCommand) -> Hit {
        let Some(prefix) = &self.command else {
            return Hit::Yes;
        };
        for (i, alternatives) in prefix.iter().enumerate() {
            match command.words.get(i) {
                None if command.open_tail => return Hit::Maybe,
                None => return Hit::No,
                Some(None) => return Hit::Maybe,
                Some(Some(word)) => {
                    let word = if i == 0 { basename(word) } else { word };
                    // `ends_with` first: it rules out nearly every alternative without
                    // searching it for a `/`.
                    if !alternatives
                        .iter()
                        .any(|a| a == word || (i == 0 && a.ends_with(word) && basename(a) == word))
                    {
                        return Hit::No;
                    }
                }
            }
        }
        Hit::Yes
    }

    /// Whether the rule matches a call (for a `command` rule: some simple command of it),
    /// as the rule's `examples` are checked.
    pub fn matches_example(&self, args: &Json, cwd: &Path) -> bool {
        if !self.args_hold(args, &mut ResolvedPath::new(cwd)) {
            return false;
        }
        match (&self.command, args.get("command").and_then(Json::as_str)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(_), Some(text)) => shell::read(text)
                .commands
                .iter()
                .any(|c| c.unreadable.is_none() && self.prefix_hit(c) == Hit::Yes),
        }
    }

    /// The rule in one line: its tools and conditions.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!("tool = {}", self.tools.join("|"))];
        if let Some(prefix) = &self.command {
            let words: Vec<String> = prefix.iter().map(|alts| alts.join("|")).collect();
            parts.push(format!("command = {}", words.join(" ")));
        }
        if let Some(globs) = &self.paths {
            parts.push(format!("path = {}", globs.join("|")));
        }
        if let Some(arg) = &self.arg {
            match &arg.test {
                ArgTest::Equals(v) => parts.push(format!("{} = {v}", arg.name)),
                ArgTest::Matches(g) => parts.push(format!("{} ~ {g}", arg.name)),
            }
        }
        parts.join(", ")
    }
}

fn globs_match(globs: &[String], candidates: &[String]) -> bool {
    globs
        .iter()
        .any(|g| candidates.iter().any(|c| path_glob(g, c)))
}

/// A call's `path` argument resolved once, on first need, for every path rule.
struct ResolvedPath<'c> {
    cwd: &'c Path,
    resolved: Option<Option<Vec<String>>>,
}

impl<'c> ResolvedPath<'c> {
    fn new(cwd: &'c Path) -> Self {
        ResolvedPath {
            cwd,
            resolved: None,
        }
    }

    fn candidates(&mut self, args: &Json) -> Option<&[String]> {
        let cwd = self.cwd;
        self.resolved
            .get_or_insert_with(|| {
                let raw = args.get("path").and_then(Json::as_str)?;
                Some(paths::candidates(raw, cwd))
            })
            .as_deref()
    }
}

/// `[policy]`: the default and the rules, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// `default = "allow" | "ask" | "deny"`: the decision for a call no rule covers.
    pub default: Decision,
    /// `[[policy.rule]]`, each one a table: the rules, in file order.
    pub rules: Vec<Rule>,
}

impl Default for Policy {
    /// No rules, everything allowed: a configuration without `[policy]`.
    fn default() -> Self {
        Policy {
            default: Decision::Allow,
            rules: Vec::new(),
        }
    }
}

/// What decided one part of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct PartVerdict {
    /// The part: a simple command's words, or `> file` for a redirection.
    pub text: String,
    /// Its decision.
    pub decision: Decision,
    /// The index of the rule that made it (`None`: the default, or unreadable text).
    pub rule: Option<usize>,
    /// Why the part could not be read, or that a rule may match it.
    pub note: Option<String>,
}

/// The policy's answer for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The strictest decision over the call and its parts.
    pub decision: Decision,
    /// The rule that made it (`None`: the default, or an unreadable command).
    pub rule: Option<usize>,
    /// For a shell command, each simple command and each file it writes, with its decision.
    pub parts: Vec<PartVerdict>,
}

impl Verdict {
    /// The part that decided the call (the first with the call's decision), if any.
    pub fn deciding_part(&self) -> Option<&PartVerdict> {
        self.parts.iter().find(|p| p.decision == self.decision)
    }
}

/// The strictest of several (decision, rule) pairs; the first written wins a tie.
fn strictest(
    pairs: impl IntoIterator<Item = (Decision, Option<usize>)>,
) -> Option<(Decision, Option<usize>)> {
    pairs.into_iter().fold(None, |best, pair| match best {
        Some(b) if b.0 >= pair.0 => Some(b),
        _ => Some(pair),
    })
}

impl Policy {
    /// Whether the policy can ever say anything but allow (else no hook is needed).
    pub fn is_active(&self) -> bool {
        self.default != Decision::Allow || self.rules.iter().any(|r| r.decision != Decision::Allow)
    }

    /// The rule at `index`.
    pub fn rule(&self, index: usize) -> Option<&Rule> {
        self.rules.get(index)
    }

    /// Decides a call of `tool` with `args`, relative paths resolved against `cwd`.
    pub fn check(&self, tool: &str, args: &Json, cwd: &Path) -> Verdict {
        self.check_with(tool, args, cwd, |text| Arc::new(shell::read(text)))
    }

    /// [`Policy::check`], a shell command's reading got from `read` (which may keep readings
    /// of commands seen before: a reading depends on the text alone). It is asked only when
    /// some rule could judge the command or a file it writes.
    ///
    /// A call of a tool that serves a provider's native shape (`apply_patch`,
    /// `str_replace_based_edit_tool`) is judged as itself and as each built-in call it
    /// stands for (see `native.rs`: rules for `edit` and `write` apply to it), the strictest
    /// decision winning.
    pub fn check_with(
        &self,
        tool: &str,
        args: &Json,
        cwd: &Path,
        read: impl FnOnce(&str) -> Arc<ShellReading>,
    ) -> Verdict {
        let own = self.check_one(tool, args, cwd, read);
        native::stands_for(tool, args)
            .into_iter()
            .fold(own, |best, (builtin, args)| {
                let verdict = self.check_one(builtin, &args, cwd, |t| Arc::new(shell::read(t)));
                if verdict.decision > best.decision {
                    verdict
                } else {
                    best
                }
            })
    }

    /// [`Policy::check_with`] for one call, as itself only.
    fn check_one(
        &self,
        tool: &str,
        args: &Json,
        cwd: &Path,
        read: impl FnOnce(&str) -> Arc<ShellReading>,
    ) -> Verdict {
        let mut path = ResolvedPath::new(cwd);
        let covering: Vec<usize> = (0..self.rules.len())
            .filter(|&i| self.rules[i].covers(tool) && self.rules[i].args_hold(args, &mut path))
            .collect();
        let whole = strictest(
            covering
                .iter()
                .filter(|&&i| self.rules[i].command.is_none())
                .map(|&i| (self.rules[i].decision, Some(i))),
        );
        let base = whole.unwrap_or((self.default, None));
        let command_rules: Vec<usize> = covering
            .iter()
            .copied()
            .filter(|&i| self.rules[i].command.is_some())
            .collect();
        let plain = Verdict {
            decision: base.0,
            rule: base.1,
            parts: Vec::new(),
        };
        // Write rules are looked for only in a call with a command (most calls have none).
        let Some(text) = args.get("command").and_then(Json::as_str) else {
            return plain;
        };
        let write_rules: Vec<usize> = (0..self.rules.len())
            .filter(|&i| {
                let r = &self.rules[i];
                r.paths.is_some() && r.command.is_none() && r.arg.is_none() && r.covers("write")
            })
            .collect();
        if command_rules.is_empty() && write_rules.is_empty() {
            return plain;
        }
        let reading = read(text);
        let mut parts = Vec::new();
        for command in &reading.commands {
            parts.push(self.command_part(command, &command_rules, base));
        }
        for write in &reading.writes {
            parts.push(self.write_part(write.as_deref(), &write_rules, cwd));
        }
        let (decision, rule) =
            strictest(parts.iter().map(|p| (p.decision, p.rule))).unwrap_or(base);
        Verdict {
            decision,
            rule,
            parts,
        }
    }

    fn command_part(
        &self,
        command: &SimpleCommand,
        rules: &[usize],
        base: (Decision, Option<usize>),
    ) -> PartVerdict {
        if let Some(why) = &command.unreadable {
            // Unreadable text matters only where some rule or the default could refuse it.
            let could_refuse = self.default != Decision::Allow
                || rules
                    .iter()
                    .any(|&i| self.rules[i].decision != Decision::Allow);
            let (decision, rule) = if !could_refuse {
                base
            } else {
                strictest([base, (Decision::Ask, None)]).unwrap_or(base)
            };
            return PartVerdict {
                text: command.text(),
                decision,
                rule,
                note: Some(format!("unreadable: {why}")),
            };
        }
        let mut note = None;
        let mut pairs = Vec::new();
        for &i in rules {
            match self.rules[i].prefix_hit(command) {
                Hit::Yes => pairs.push((self.rules[i].decision, Some(i))),
                // A word known only when it runs may make the rule match: a person decides.
                Hit::Maybe if self.rules[i].decision != Decision::Allow => {
                    note.get_or_insert_with(|| {
                        format!(
                            "may match the rule at {} once its words are known",
                            self.rules[i].position
                        )
                    });
                    pairs.push((Decision::Ask, Some(i)));
                }
                Hit::Maybe | Hit::No => {}
            }
        }
        let matched = !pairs.is_empty();
        if let Some(whole) = base.1.map(|_| base) {
            pairs.push(whole);
        }
        let (decision, rule) = match strictest(pairs) {
            Some(pair) if matched || base.1.is_some() => pair,
            _ => (self.default, None),
        };
        PartVerdict {
            text: command.text(),
            decision,
            rule,
            note,
        }
    }

    fn write_part(&self, target: Option<&str>, rules: &[usize], cwd: &Path) -> PartVerdict {
        // A write no path rule names adds nothing: the command's words decide.
        let Some(target) = target else {
            let decision = if rules.is_empty() {
                Decision::Allow
            } else {
                Decision::Ask
            };
            return PartVerdict {
                text: "> …".to_owned(),
                decision,
                rule: None,
                note: Some("unreadable: the file written is known only when it runs".to_owned()),
            };
        };
        let candidates = paths::candidates(target, cwd);
        let hit = strictest(rules.iter().filter_map(|&i| {
            let globs = self.rules[i].paths.as_deref()?;
            globs_match(globs, &candidates).then_some((self.rules[i].decision, Some(i)))
        }));
        if hit.is_none() && !rules.is_empty() && paths::has_other_names(&candidates) {
            return PartVerdict {
                text: format!("> {target}"),
                decision: Decision::Ask,
                rule: None,
                note: Some(OTHER_NAMES.to_owned()),
            };
        }
        let (decision, rule) = hit.unwrap_or((Decision::Allow, None));
        PartVerdict {
            text: format!("> {target}"),
            decision,
            rule,
            note: hit.map(|_| "a write, judged by the write tool's path rules".to_owned()),
        }
    }
}
