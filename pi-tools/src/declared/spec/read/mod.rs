//! Reading a declared tool (`[tool.<name>]` with `command` or `script`) and checking it as
//! it is read: every mistake is reported at its key, placeholder or value. The configuration
//! loader calls [`read`] for each such section, with its problems.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use serde_json::Value;

use super::{
    ArgTemplate, DeclaredAction, DeclaredOutput, DeclaredParam, DeclaredTool, ParamKind, Piece,
};
use crate::core::ExecutionMode;
use crate::toml_read::{Problems, integer};
use crate::tool::{ToolDefinition, ToolRole};

mod params;

const TOOL_KEYS: [&str; 17] = [
    "description",
    "label",
    "snippet",
    "guidelines",
    "command",
    "script",
    "params",
    "timeout_secs",
    "read_only",
    "destructive",
    "mode",
    "role",
    "cwd",
    "env",
    "success_codes",
    "output",
    "output_schema",
];

/// Whether a `[tool.<name>]` table declares a tool (it has `command` or `script`).
pub(crate) fn declares(table: &DeTable<'_>) -> bool {
    table
        .keys()
        .any(|k| matches!(k.get_ref().as_ref(), "command" | "script"))
}

/// Whether `name` can be a parameter: lower case letters, digits and `_`, not starting with
/// a digit (it is also an environment variable's name for a script).
fn param_name_ok(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// What a command element says before the parameters are known: its pieces, with the span
/// of the element for reports.
type RawArg = (Vec<Piece>, Range<usize>);

/// A command element as read: a string's pieces, or (for a group) its elements' pieces.
type RawElement = (RawArg, Option<Vec<RawArg>>);

/// Reads the declared tool of the section `[tool.<name>]`; `None` (with the problems
/// reported into `problems`) when it cannot be used.
pub(crate) fn read(
    name: &Spanned<std::borrow::Cow<'_, str>>,
    table: &DeTable<'_>,
    problems: &mut Problems,
) -> Option<DeclaredTool> {
    Reader {
        problems,
        unread_params: Vec::new(),
        headers: Vec::new(),
    }
    .section(name, table)
}

/// One declared tool's reader: the problems it reports into, and what it learnt on the way.
struct Reader<'p> {
    problems: &'p mut Problems,
    /// The parameters of the tool that are declared but could not be read (their mistake
    /// is reported): a placeholder naming one is not a second mistake.
    unread_params: Vec<String>,
    /// The `header` names of the parameters read so far, in lower case: one per tool.
    headers: Vec<String>,
}

impl Reader<'_> {
    fn report(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.problems.report(span, message);
    }

    /// Reads a declared tool; `None` (with the problems reported) when it cannot be used.
    fn section(
        &mut self,
        name: &Spanned<std::borrow::Cow<'_, str>>,
        table: &DeTable<'_>,
    ) -> Option<DeclaredTool> {
        let tool = name.get_ref().to_string();
        let header = format!("[tool.{tool}]");
        let mut declared = DeclaredTool {
            name: tool.clone(),
            description: String::new(),
            label: None,
            snippet: None,
            guidelines: Vec::new(),
            read_only: false,
            destructive: false,
            mode: ExecutionMode::Parallel,
            role: ToolRole::General,
            params: Vec::new(),
            action: DeclaredAction::Script(String::new()),
            timeout: None,
            cwd: None,
            env: BTreeMap::new(),
            success_codes: vec![0],
            output: DeclaredOutput::Text,
        };
        let mut output_schema: Option<(Value, Range<usize>)> = None;
        let mut command: Option<(Vec<RawElement>, Range<usize>)> = None;
        let mut script = None;
        let mut description = false;
        let problems_before = self.problems.len();
        for (key, value) in table {
            let span = value.span();
            match key.get_ref().as_ref() {
                "description" => {
                    description = true;
                    if let Some(text) = self.text(value, "description") {
                        declared.description = text;
                    }
                }
                "label" => declared.label = self.text(value, "label"),
                "snippet" => declared.snippet = self.text(value, "snippet"),
                "guidelines" => declared.guidelines = self.texts(value, "guidelines"),
                "read_only" => declared.read_only = self.flag(value, "read_only"),
                "destructive" => declared.destructive = self.flag(value, "destructive"),
                "mode" => {
                    if let Some(mode) = self.problems.mode(value, "mode") {
                        declared.mode = mode;
                    }
                }
                "role" => match value.get_ref().as_str() {
                    Some("general") => declared.role = ToolRole::General,
                    Some("explore") => declared.role = ToolRole::Explore,
                    _ => self.report(
                        span,
                        "`role` must be \"general\" or \"explore\" (a declared tool is not a shell)",
                    ),
                },
                "timeout_secs" => match integer(value) {
                    Some(n) if n >= 1 => {
                        declared.timeout = u64::try_from(n).ok().map(Duration::from_secs);
                    }
                    _ => self.report(
                        span,
                        "`timeout_secs` must be a whole number of seconds, at least 1; remove it for no timeout of its own",
                    ),
                },
                "cwd" => declared.cwd = self.text(value, "cwd").map(Into::into),
                "env" => declared.env = self.string_table(value, "env"),
                "success_codes" => {
                    if let Some(codes) = self.success_codes(value) {
                        declared.success_codes = codes;
                    }
                }
                "command" => command = self.command(value).map(|c| (c, span)),
                "script" => {
                    script = self.text(value, "script").map(|s| (s, span.clone()));
                    if script.as_ref().is_some_and(|(s, _)| s.contains('\0')) {
                        self.report(span, "`script` contains a NUL byte, which no shell can run; remove it");
                    }
                }
                "params" => declared.params = self.params(value, &tool),
                "output" => match value.get_ref().as_str() {
                    Some("text") => declared.output = DeclaredOutput::Text,
                    Some("json") => declared.output = DeclaredOutput::Json { schema: None },
                    _ => self.report(
                        span,
                        "`output` must be \"text\" (the model reads what the command prints) or \"json\" (the command prints one JSON value)",
                    ),
                },
                "output_schema" => {
                    output_schema = self.output_schema(value).map(|s| (s, span));
                }
                other => self.problems.unknown_key(key.span(), other, &header, &TOOL_KEYS),
            }
        }
        if let Some((schema, span)) = output_schema {
            match &mut declared.output {
                DeclaredOutput::Json { schema: slot } => *slot = Some(schema),
                DeclaredOutput::Text => self.report(
                    span,
                    "`output_schema` describes a JSON output: add `output = \"json\"`, or remove `output_schema`",
                ),
            }
        }
        if !description {
            self.report(
                name.span(),
                format!(
                    "{header} declares a tool but has no `description`; say in a sentence what it does, for the model"
                ),
            );
        }
        match (command, script) {
            (Some(_), Some((_, span))) => self.report(
                span,
                format!("{header} has both `command` and `script`; keep one"),
            ),
            (Some((args, span)), None) => {
                if let Some(args) = self.bind_command(args, span, &declared.params, &header) {
                    declared.action = DeclaredAction::Command(args);
                }
            }
            (None, Some((script, _))) => declared.action = DeclaredAction::Script(script),
            (None, None) => {}
        }
        (self.problems.len() == problems_before).then_some(declared)
    }

    fn text(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> Option<String> {
        match value.get_ref().as_str() {
            Some(text) => Some(text.to_owned()),
            None => {
                self.report(value.span(), format!("`{key}` must be a string in quotes"));
                None
            }
        }
    }

    fn texts(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> Vec<String> {
        let DeValue::Array(items) = value.get_ref() else {
            self.report(value.span(), format!("`{key}` must be a list of strings"));
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.text(item, key))
            .collect()
    }

    fn flag(&mut self, value: &Spanned<DeValue<'_>>, key: &str) -> bool {
        match value.get_ref() {
            DeValue::Boolean(b) => *b,
            _ => {
                self.report(value.span(), format!("`{key}` must be true or false"));
                false
            }
        }
    }

    fn string_table(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        key: &str,
    ) -> BTreeMap<String, String> {
        let DeValue::Table(table) = value.get_ref() else {
            self.report(
                value.span(),
                format!("`{key}` must be a table of strings, e.g. {{ RUST_LOG = \"warn\" }}"),
            );
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (name, value) in table {
            if let Some(text) = self.text(value, key) {
                out.insert(name.get_ref().to_string(), text);
            }
        }
        out
    }

    /// `output_schema`: a JSON Schema in a string, which must parse and compile.
    fn output_schema(&mut self, value: &Spanned<DeValue<'_>>) -> Option<Value> {
        let text = self.text(value, "output_schema")?;
        let schema: Value = match serde_json::from_str(&text) {
            Ok(schema) => schema,
            Err(e) => {
                self.report(
                    value.span(),
                    format!("`output_schema` is not JSON ({e}): write the JSON Schema in a string, e.g. '''{{\"type\": \"object\"}}'''"),
                );
                return None;
            }
        };
        if let Err(e) = jsonschema::validator_for(&schema) {
            self.report(
                value.span(),
                format!("`output_schema` is not a valid JSON Schema: {e}; fix it so the output can be checked"),
            );
            return None;
        }
        Some(schema)
    }

    fn success_codes(&mut self, value: &Spanned<DeValue<'_>>) -> Option<Vec<i32>> {
        let message = "`success_codes` must be a list of exit codes from 0 to 255, e.g. [0, 1]";
        let DeValue::Array(items) = value.get_ref() else {
            self.report(value.span(), message);
            return None;
        };
        let mut codes = Vec::new();
        for item in items.iter() {
            match integer(item) {
                Some(code @ 0..=255) => codes.push(i32::try_from(code).unwrap_or_default()),
                _ => self.report(item.span(), message),
            }
        }
        (!codes.is_empty()).then_some(codes)
    }

    /// The elements of `command` (a group's inner elements beside it), placeholders parsed.
    fn command(&mut self, value: &Spanned<DeValue<'_>>) -> Option<Vec<RawElement>> {
        let message = "`command` must be a list of arguments, e.g. [\"cargo\", \"test\", \"{filter}\"], each a string or a list of strings kept together";
        let DeValue::Array(items) = value.get_ref() else {
            self.report(value.span(), message);
            return None;
        };
        if items.is_empty() {
            self.report(
                value.span(),
                "`command` is empty; name the program to run first",
            );
            return None;
        }
        let mut out = Vec::new();
        for item in items.iter() {
            match item.get_ref() {
                DeValue::String(text) => {
                    let pieces = self.pieces(text, item.span())?;
                    out.push(((pieces, item.span()), None));
                }
                DeValue::Array(group) if !group.is_empty() => {
                    let mut inner = Vec::new();
                    for element in group.iter() {
                        let Some(text) = element.get_ref().as_str() else {
                            self.report(element.span(), "a group in `command` holds strings only");
                            return None;
                        };
                        inner.push((self.pieces(text, element.span())?, element.span()));
                    }
                    out.push(((Vec::new(), item.span()), Some(inner)));
                }
                _ => {
                    self.report(item.span(), message);
                    return None;
                }
            }
        }
        Some(out)
    }

    /// `text` as literal pieces and `{param}` placeholders (`{{` and `}}` are braces).
    fn pieces(&mut self, text: &str, span: Range<usize>) -> Option<Vec<Piece>> {
        if text.contains('\0') {
            self.report(span, "a `command` argument contains a NUL byte, which no command line can carry; remove it");
            return None;
        }
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                    if !param_name_ok(&name) {
                        self.report(
                            span,
                            format!(
                                "`{{{name}` in `{text}` is not a placeholder: write `{{param}}` with a parameter's name (lower case letters, digits and `_`), or `{{{{` for a brace"
                            ),
                        );
                        return None;
                    }
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Param(name));
                }
                '}' => {
                    self.report(
                        span,
                        format!("a lone `}}` in `{text}`; write `}}}}` for a brace"),
                    );
                    return None;
                }
                other => literal.push(other),
            }
        }
        if !literal.is_empty() || pieces.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Some(pieces)
    }

    /// The command checked against the parameters: every placeholder names one, every
    /// parameter is used, an array fills a whole element, and the program is no parameter.
    fn bind_command(
        &mut self,
        args: Vec<RawElement>,
        span: Range<usize>,
        params: &[DeclaredParam],
        header: &str,
    ) -> Option<Vec<ArgTemplate>> {
        let before = self.problems.len();
        let mut used: Vec<&str> = Vec::new();
        let mut check = |loader: &mut Self, (pieces, span): &RawArg| {
            for piece in pieces {
                let Piece::Param(name) = piece else { continue };
                match params.iter().find(|p| &p.name == name) {
                    // Declared, with its own mistake reported where it is.
                    None if loader.unread_params.contains(name) => {}
                    None => loader.report(
                        span.clone(),
                        format!(
                            "the placeholder `{{{name}}}` names no parameter; declare it under [{}.params.{name}] or remove it",
                            header.trim_matches(['[', ']'])
                        ),
                    ),
                    Some(param) => {
                        used.push(&param.name);
                        if matches!(param.kind, ParamKind::Array(_)) && pieces.len() != 1 {
                            loader.report(
                                span.clone(),
                                format!("the array parameter `{name}` fills arguments of its own: write `\"{{{name}}}\"` alone as an element"),
                            );
                        }
                    }
                }
            }
        };
        for ((pieces, element_span), group) in &args {
            match group {
                None => check(self, &(pieces.clone(), element_span.clone())),
                Some(inner) => inner.iter().for_each(|raw| check(self, raw)),
            }
        }
        if let Some(((first, first_span), None)) = args.first()
            && first.iter().any(|p| matches!(p, Piece::Param(_)))
        {
            self.report(
                first_span.clone(),
                "the program (the first element of `command`) must be written out, not a parameter",
            );
        }
        for param in params {
            if !used.contains(&param.name.as_str()) {
                self.report(
                    span.clone(),
                    format!(
                        "the parameter `{}` is used by no placeholder of `command`; add `\"{{{}}}\"` where it goes, or remove the parameter",
                        param.name, param.name
                    ),
                );
            }
        }
        if self.problems.len() != before {
            return None;
        }
        Some(
            args.into_iter()
                .map(|((pieces, _), group)| match group {
                    None => ArgTemplate::Text(pieces),
                    Some(inner) => ArgTemplate::Group(inner.into_iter().map(|(p, _)| p).collect()),
                })
                .collect(),
        )
    }
}

/// The names of the `[tool.<name>]` sections that declare a tool and do not name a
/// registered one (a section that does is reported where it is read).
pub(crate) fn declared_names(
    root: &Spanned<DeTable<'_>>,
    registered: &[Arc<dyn ToolDefinition>],
) -> Vec<String> {
    let Some((_, tools)) = root.get_ref().iter().find(|(k, _)| k.get_ref() == "tool") else {
        return Vec::new();
    };
    let DeValue::Table(tools) = tools.get_ref() else {
        return Vec::new();
    };
    tools
        .iter()
        .filter(|(_, section)| matches!(section.get_ref(), DeValue::Table(t) if declares(t)))
        .map(|(name, _)| name.get_ref().to_string())
        .filter(|name| !registered.iter().any(|t| &t.spec().name == name))
        .collect()
}
