//! `[policy]` and its `[[policy.rule]]` entries, each rule's `examples` and `not_examples`
//! checked against the rule as the file loads.

use std::ops::Range;

use serde_json::json;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::super::error::line_column;
use super::{Loader, to_json};
use crate::policy::{ArgCondition, ArgTest, Decision, Policy, Rule};
use crate::tool::names;

const POLICY_KEYS: [&str; 2] = ["default", "rule"];
const RULE_KEYS: [&str; 8] = [
    "tool",
    "command",
    "path",
    "arg",
    "decision",
    "reason",
    "examples",
    "not_examples",
];

impl<'a> Loader<'a> {
    pub(super) fn policy_section(&mut self, table: &DeTable<'a>) -> Policy {
        let mut policy = Policy::default();
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "default" => {
                    if let Some(decision) = self.decision(value, "default") {
                        policy.default = decision;
                    }
                }
                "rule" => {
                    let DeValue::Array(items) = value.get_ref() else {
                        self.report(
                            value.span(),
                            "`rule` must be a list of tables; write each rule as a `[[policy.rule]]` section",
                        );
                        continue;
                    };
                    for item in items.iter() {
                        if let Some(table) = self.table(item, "[[policy.rule]]")
                            && let Some(rule) = self.rule(table, item.span())
                        {
                            policy.rules.push(rule);
                        }
                    }
                }
                other => self.unknown_key(key.span(), other, "[policy]", &POLICY_KEYS),
            }
        }
        policy
    }

    fn decision(&mut self, value: &Spanned<DeValue<'a>>, key: &str) -> Option<Decision> {
        let decision = value.get_ref().as_str().and_then(|s| s.parse().ok());
        if decision.is_none() {
            self.report(
                value.span(),
                format!("`{key}` must be \"allow\", \"ask\" or \"deny\""),
            );
        }
        decision
    }

    fn rule(&mut self, table: &DeTable<'a>, span: Range<usize>) -> Option<Rule> {
        // The `[[policy.rule]]` header (or an inline table's `{`): where the loader reports
        // problems of the rule as a whole, so a denial and a load error point at one place.
        let (line, column) = line_column(self.text, span.start);
        let mut rule = Rule {
            tools: Vec::new(),
            command: None,
            paths: None,
            arg: None,
            decision: Decision::Deny,
            reason: None,
            position: format!("{}:{line}:{column}", self.origin),
        };
        let before = self.problems.len();
        let (mut has_tool, mut has_decision) = (false, false);
        let mut examples = Vec::new();
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "tool" => {
                    has_tool = true;
                    if let Some(list) = self.one_or_many(value, "tool", "tool names or globs") {
                        for (name, span) in &list {
                            self.check_tool_name(name, span.clone());
                        }
                        rule.tools = list.into_iter().map(|(n, _)| n).collect();
                    }
                }
                "command" => rule.command = self.command_prefix(value),
                "path" => {
                    rule.paths = self
                        .one_or_many(value, "path", "path globs")
                        .map(|l| l.into_iter().map(|(p, _)| p).collect());
                }
                "arg" => rule.arg = self.arg_condition(value),
                "decision" => {
                    has_decision = true;
                    if let Some(decision) = self.decision(value, "decision") {
                        rule.decision = decision;
                    }
                }
                "reason" => match value.get_ref().as_str() {
                    Some(reason) => rule.reason = Some(reason.to_owned()),
                    None => self.report(value.span(), "`reason` must be a sentence in quotes"),
                },
                key @ ("examples" | "not_examples") => match value.get_ref() {
                    DeValue::Array(items) => {
                        let must = key == "examples";
                        examples.extend(items.iter().map(|i| (must, i)));
                    }
                    _ => self.report(
                        value.span(),
                        format!("`{key}` must be a list of commands in quotes or argument tables"),
                    ),
                },
                other => self.unknown_key(key.span(), other, "[[policy.rule]]", &RULE_KEYS),
            }
        }
        if !has_tool {
            self.report(
                span.clone(),
                "this rule names no tool; add `tool = \"bash\"` (a name, a glob such as \"github__*\", or a list)",
            );
        }
        if !has_decision {
            self.report(
                span,
                "this rule has no decision; add `decision = \"allow\"`, \"ask\" or \"deny\"",
            );
        }
        if self.problems.len() > before {
            return None;
        }
        self.check_examples(&rule, &examples);
        Some(rule)
    }

    fn check_examples(&mut self, rule: &Rule, examples: &[(bool, &Spanned<DeValue<'a>>)]) {
        let cwd = std::env::current_dir().unwrap_or_default();
        for &(must, example) in examples {
            let args = match example.get_ref() {
                DeValue::String(s) if rule.command.is_some() => json!({ "command": s.as_ref() }),
                DeValue::String(s) if rule.paths.is_some() => json!({ "path": s.as_ref() }),
                DeValue::Table(_) => to_json(example.get_ref()),
                _ => {
                    self.report(
                        example.span(),
                        "an example must be a command in quotes (for a rule with `command`), a path in quotes (for a rule with `path`) or a table of arguments such as { mode = \"force\" }",
                    );
                    continue;
                }
            };
            if rule.matches_example(&args, &cwd) != must {
                let (list, verb) = if must {
                    ("examples", "does not match")
                } else {
                    ("not_examples", "matches")
                };
                self.report(
                    example.span(),
                    format!(
                        "this example {verb} its rule ({}), but `{list}` lists what the rule must {}match; fix the rule's conditions or the example",
                        rule.summary(),
                        if must { "" } else { "not " }
                    ),
                );
            }
        }
    }

    /// A string or a list of strings, each with its position.
    fn one_or_many(
        &mut self,
        value: &Spanned<DeValue<'a>>,
        key: &str,
        what: &str,
    ) -> Option<Vec<(String, Range<usize>)>> {
        let list = match value.get_ref() {
            DeValue::String(s) => Some(vec![(s.to_string(), value.span())]),
            DeValue::Array(items) if !items.is_empty() => items
                .iter()
                .map(|i| i.get_ref().as_str().map(|s| (s.to_owned(), i.span())))
                .collect(),
            _ => None,
        };
        if list.is_none() {
            self.report(
                value.span(),
                format!("`{key}` must be one of {what} in quotes, or a non-empty list of them"),
            );
        }
        list
    }

    /// A rule about a tool that cannot exist would never apply: exact names must be
    /// registered (built in or the program's own), declared, or a mounted server's.
    fn check_tool_name(&mut self, name: &str, span: Range<usize>) {
        if names::is_glob(name) || name.contains(names::MOUNT_SEPARATOR) || self.is_registered(name)
        {
            return;
        }
        let message = self.unknown_tool(name);
        self.report(
            span,
            format!("{message}; a rule about it would never apply"),
        );
    }

    /// `["git", ["push", "fetch"]]`: words, each one string or a list of alternatives.
    fn command_prefix(&mut self, value: &Spanned<DeValue<'a>>) -> Option<Vec<Vec<String>>> {
        const SHAPE: &str = "`command` must be a non-empty list of words, each a string or a list of alternative strings, e.g. [\"git\", [\"push\", \"fetch\"]]";
        let DeValue::Array(items) = value.get_ref() else {
            self.report(value.span(), SHAPE);
            return None;
        };
        let words: Option<Vec<Vec<String>>> = items
            .iter()
            .map(|item| match item.get_ref() {
                DeValue::String(s) => Some(vec![s.to_string()]),
                DeValue::Array(alts) if !alts.is_empty() => alts
                    .iter()
                    .map(|a| a.get_ref().as_str().map(str::to_owned))
                    .collect(),
                _ => None,
            })
            .collect();
        match words {
            Some(words) if !words.is_empty() => Some(words),
            _ => {
                self.report(value.span(), SHAPE);
                None
            }
        }
    }

    /// `{ name = "mode", equals = "force" }` or `{ name = "url", matches = "https://*" }`.
    fn arg_condition(&mut self, value: &Spanned<DeValue<'a>>) -> Option<ArgCondition> {
        const SHAPE: &str = "`arg` must be a table with `name` and one of `equals` (any value) or `matches` (a glob in quotes), e.g. { name = \"mode\", equals = \"force\" }";
        let DeValue::Table(table) = value.get_ref() else {
            self.report(value.span(), SHAPE);
            return None;
        };
        let get = |key: &str| table.get(key).map(|v| v.get_ref());
        let name = get("name").and_then(DeValue::as_str);
        let test = match (get("equals"), get("matches")) {
            (Some(v), None) => Some(ArgTest::Equals(to_json(v))),
            (None, Some(DeValue::String(glob))) => Some(ArgTest::Matches(glob.to_string())),
            _ => None,
        };
        let extra = table
            .iter()
            .any(|(k, _)| !matches!(k.get_ref().as_ref(), "name" | "equals" | "matches"));
        match (name, test) {
            (Some(name), Some(test)) if !extra => Some(ArgCondition {
                name: name.to_owned(),
                test,
            }),
            _ => {
                self.report(value.span(), SHAPE);
                None
            }
        }
    }
}
