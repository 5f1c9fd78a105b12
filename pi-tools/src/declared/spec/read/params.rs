//! A declared tool's parameters (`[tool.<name>.params.<param>]`): type, description,
//! default, whether required, whether a value may start with `-`, bounds, and the HTTP
//! header a client mirrors the value into, each checked against the type as it is read.

use std::ops::Range;

use serde_json::Map;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::super::{DeclaredParam, ParamKind};
use super::{Reader, param_name_ok};
use crate::toml_read::to_json;

const PARAM_KEYS: [&str; 15] = [
    "type",
    "description",
    "default",
    "required",
    "allow_dash",
    "values",
    "items",
    "pattern",
    "min_length",
    "max_length",
    "minimum",
    "maximum",
    "min_items",
    "max_items",
    "header",
];

const TYPES: &str = "string, integer, number, boolean, enum or array";

impl Reader<'_> {
    /// `[tool.<name>.params]`: each parameter in the file's order.
    pub(super) fn params(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        tool: &str,
    ) -> Vec<DeclaredParam> {
        let Some(table) = self.problems.table(value, &format!("[tool.{tool}.params]")) else {
            return Vec::new();
        };
        let mut params = Vec::new();
        for (name, section) in table {
            let param = name.get_ref().to_string();
            if !param_name_ok(&param) {
                self.report(
                    name.span(),
                    format!("`{param}` cannot be a parameter's name: use lower case letters, digits and `_`, starting with a letter or `_`"),
                );
                continue;
            }
            let header = format!("[tool.{tool}.params.{param}]");
            let Some(table) = self.problems.table(section, &header) else {
                self.unread_params.push(param);
                continue;
            };
            match self.param(param.clone(), table, &header, name.span()) {
                Some(read) => params.push(read),
                None => self.unread_params.push(param),
            }
        }
        params
    }

    fn param(
        &mut self,
        name: String,
        table: &DeTable<'_>,
        header: &str,
        at: Range<usize>,
    ) -> Option<DeclaredParam> {
        let field = |key: &str| {
            table
                .iter()
                .find(|(k, _)| k.get_ref() == key)
                .map(|(_, v)| v)
        };
        let before = self.problems.len();
        let kind = match field("type") {
            None => {
                self.report(at, format!("{header} has no `type`; give one of {TYPES}"));
                return None;
            }
            Some(value) => self.kind(value, field("values"), field("items"))?,
        };
        let mut param = DeclaredParam {
            name,
            kind,
            description: None,
            default: None,
            required: true,
            allow_dash: false,
            bounds: Map::new(),
            header: None,
        };
        let mut required = None;
        for (key, value) in table {
            let key_name = key.get_ref().as_ref();
            match key_name {
                "type" | "values" | "items" => {}
                "description" => param.description = self.text(value, "description"),
                "required" => required = Some(self.flag(value, "required")),
                "allow_dash" => param.allow_dash = self.flag(value, "allow_dash"),
                "default" => {
                    let default = to_json(value.get_ref());
                    if param.kind.accepts(&default) {
                        param.default = Some(default);
                    } else {
                        self.report(
                            value.span(),
                            format!(
                                "the default {default} is not a value of type {}; give one that is, or remove it",
                                param.kind.name()
                            ),
                        );
                    }
                }
                "pattern" | "min_length" | "max_length" | "minimum" | "maximum" | "min_items"
                | "max_items" => self.bound(&mut param, key_name, value),
                "header" => param.header = self.header(&param, value),
                other => self
                    .problems
                    .unknown_key(key.span(), other, header, &PARAM_KEYS),
            }
        }
        param.required = required.unwrap_or(param.default.is_none());
        (self.problems.len() == before).then_some(param)
    }

    fn kind(
        &mut self,
        value: &Spanned<DeValue<'_>>,
        values: Option<&Spanned<DeValue<'_>>>,
        items: Option<&Spanned<DeValue<'_>>>,
    ) -> Option<ParamKind> {
        let scalar = |name: &str| match name {
            "string" => Some(ParamKind::String),
            "integer" => Some(ParamKind::Integer),
            "number" => Some(ParamKind::Number),
            "boolean" => Some(ParamKind::Boolean),
            _ => None,
        };
        let enum_values = |loader: &mut Self| -> Option<Vec<String>> {
            let Some(values) = values else {
                loader.report(
                    value.span(),
                    "an enum needs `values`, a list of the strings it allows",
                );
                return None;
            };
            let list = loader.texts(values, "values");
            if list.is_empty() {
                loader.report(values.span(), "`values` must list at least one string");
                return None;
            }
            Some(list)
        };
        match value.get_ref().as_str() {
            Some("enum") => enum_values(self).map(ParamKind::Enum),
            Some("array") => {
                let Some(items) = items else {
                    self.report(value.span(), "an array needs `items`, the type of its elements: string, integer, number, boolean or enum");
                    return None;
                };
                let item = match items.get_ref().as_str() {
                    Some("enum") => ParamKind::Enum(enum_values(self)?),
                    Some(name) if scalar(name).is_some() => scalar(name)?,
                    _ => {
                        self.report(
                            items.span(),
                            "`items` must be string, integer, number, boolean or enum",
                        );
                        return None;
                    }
                };
                Some(ParamKind::Array(Box::new(item)))
            }
            Some(name) if scalar(name).is_some() => scalar(name),
            _ => {
                self.report(value.span(), format!("unknown type; use one of {TYPES}"));
                None
            }
        }
    }

    /// `header`: the name `Mcp-Param-` is followed by, as SEP-2243 and the clients that
    /// check it (rmcp's, the conformance suite) take it: an HTTP token (RFC 9110), on a
    /// parameter of a type a header carries whole, and one per tool whatever its case (a
    /// client refuses a tool that breaks any of these).
    fn header(&mut self, param: &DeclaredParam, value: &Spanned<DeValue<'_>>) -> Option<String> {
        let name = self.text(value, "header")?;
        let problem = if name.is_empty() || !name.chars().all(is_token_char) {
            Some(format!(
                "`header` must be the name `Mcp-Param-` is followed by: letters, digits and any of !#$%&'*+-.^_`|~, without spaces, e.g. \"{}\"",
                suggested_header(&param.name)
            ))
        } else if !matches!(
            param.kind,
            ParamKind::String | ParamKind::Integer | ParamKind::Boolean | ParamKind::Enum(_)
        ) {
            Some(format!(
                "`header` applies to a parameter of type string, integer, boolean or enum (a header carries one such value), and `{}` is of type {}; remove `header` here",
                param.name,
                param.kind.name()
            ))
        } else if self.headers.contains(&name.to_ascii_lowercase()) {
            Some(format!(
                "another parameter of this tool is mirrored into the header `Mcp-Param-{name}` already (header names ignore case); give this one another `header`"
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            self.report(value.span(), problem);
            return None;
        }
        self.headers.push(name.to_ascii_lowercase());
        Some(name)
    }

    /// A bound, as the JSON Schema keyword, if it fits the parameter's type.
    fn bound(&mut self, param: &mut DeclaredParam, key: &str, value: &Spanned<DeValue<'_>>) {
        let (keyword, fits) = match key {
            "pattern" => ("pattern", matches!(param.kind, ParamKind::String)),
            "min_length" => ("minLength", matches!(param.kind, ParamKind::String)),
            "max_length" => ("maxLength", matches!(param.kind, ParamKind::String)),
            "minimum" => (
                "minimum",
                matches!(param.kind, ParamKind::Integer | ParamKind::Number),
            ),
            "maximum" => (
                "maximum",
                matches!(param.kind, ParamKind::Integer | ParamKind::Number),
            ),
            "min_items" => ("minItems", matches!(param.kind, ParamKind::Array(_))),
            _ => ("maxItems", matches!(param.kind, ParamKind::Array(_))),
        };
        if !fits {
            self.report(
                value.span(),
                format!(
                    "`{key}` does not apply to a parameter of type {}",
                    param.kind.name()
                ),
            );
            return;
        }
        let json = to_json(value.get_ref());
        let ok = match keyword {
            // As the validator of the calls will read it.
            "pattern" => json.as_str().is_some_and(|p| {
                jsonschema::validator_for(&serde_json::json!({"type": "string", "pattern": p}))
                    .is_ok()
            }),
            "minimum" | "maximum" => json.is_number(),
            _ => json.as_u64().is_some(),
        };
        if ok {
            param.bounds.insert(keyword.to_owned(), json);
        } else {
            let what = match keyword {
                "pattern" => "a regular expression in quotes",
                "minimum" | "maximum" => "a number",
                _ => "a whole number, 0 or more",
            };
            self.report(value.span(), format!("`{key}` must be {what}"));
        }
    }
}

/// Whether `c` may be in an HTTP token (RFC 9110 `tchar`).
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A header name for the parameter `name`: its words capitalised, joined by `-`
/// (`target_region` → `Target-Region`).
fn suggested_header(name: &str) -> String {
    name.split('_')
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-")
}
