//! The tool catalog: what each tool is, how it runs, what it takes and an example call, as
//! Markdown, JSON or one self-contained HTML page, each with a table of contents.
//!
//! A tool with a typed result also shows its output: the result's type, description and
//! fields, and the output schema.
//!
//! Output is deterministic: tools in the given order; parameters required first, then
//! optional, each group in declaration order (the schema's property order), with the fields
//! of object parameters (and of arrays of objects) listed under their parent.

mod html;
mod markdown;
mod text;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::core::ExecutionMode;
use crate::tool::ToolDefinition;

/// The title a catalog has unless [`Catalog::with_title`] names it otherwise.
pub const DEFAULT_TITLE: &str = "Tools";

/// The documented tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog {
    /// The page's title and top heading.
    pub title: String,
    /// One entry per tool, in order.
    pub tools: Vec<CatalogEntry>,
}

/// One tool's documentation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogEntry {
    /// The name the model calls it by.
    pub name: String,
    /// The human label.
    pub label: String,
    /// The execution mode in effect (the configuration's override, else the tool's own).
    pub mode: ExecutionMode,
    /// Whether the tool is in the active set.
    pub active: bool,
    /// The MCP server it is mounted from (`[mcp.servers.<name>]`), for another server's tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// With `[tools] shapes = "native"`, how each family that has native tools is offered
    /// this one (`anthropic: as text_editor_20250728`, `openai-responses: not offered,
    /// apply_patch stands for it`); empty otherwise, when every family gets it as it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<String>,
    /// The prompt snippet, if any.
    pub snippet: Option<String>,
    /// What the tool does.
    pub description: String,
    /// The tool's prompt guidelines.
    pub guidelines: Vec<String>,
    /// The top-level parameters: required ones first, then optional ones, each group in
    /// declaration (schema property) order.
    pub parameters: Vec<Parameter>,
    /// Example arguments from the tool's spec ([`ToolSpec::examples`](crate::tool::ToolSpec::examples)).
    pub examples: Vec<Value>,
    /// The canonical argument schema.
    pub schema: Value,
    /// The schema of the tool's `[tool.<name>]` configuration, if it has one.
    pub config_schema: Option<Value>,
    /// What the tool returns, for a tool with a typed result (an output schema).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
}

/// A tool's typed result: its type, its description and its fields, from the output schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Output {
    /// A short type description of the whole value (`object`, `string[]`, …).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The schema's description (the result type's doc comment), if any.
    pub description: Option<String>,
    /// The fields of an object result (or of the objects of an array result), ordered as
    /// parameters are; `required` says the field is always there.
    pub fields: Vec<Parameter>,
    /// The output schema.
    pub schema: Value,
}

impl Output {
    fn of(schema: &Value) -> Self {
        Output {
            type_name: type_name(schema),
            description: schema
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            fields: nested_fields(schema),
            schema: schema.clone(),
        }
    }
}

/// One row of a tool's parameter table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parameter {
    /// The property name.
    pub name: String,
    /// A short type description (`string`, `integer[]`, `"a" | "b"`, …).
    #[serde(rename = "type")]
    pub type_name: String,
    /// Whether the model must give it.
    pub required: bool,
    /// The schema's `default`, if any other than `null`.
    pub default: Option<Value>,
    /// The schema's description, if any.
    pub description: Option<String>,
    /// The fields of an object parameter, or of the objects of an array parameter, ordered
    /// as the top-level parameters are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Parameter>,
}

/// How each family with native tools is offered `tool` under `config`'s shapes (see
/// [`CatalogEntry::shapes`]).
fn shapes(config: &Config, tool: &str, active: &[String]) -> Vec<String> {
    use crate::dialect::Dialect;
    use crate::dialect::native::{Native, Shapes, native_shape};
    crate::dialect::native::SHAPE_FAMILIES
        .into_iter()
        .filter(|dialect| config.shapes.of(*dialect) == Shapes::Native)
        .filter_map(|dialect| {
            let said = match native_shape(dialect, tool) {
                Native::Replace(wire) => format!(
                    "as its native `{}`",
                    wire.get("type").and_then(Value::as_str).unwrap_or(tool)
                ),
                // Edit and write stay when the tool that stands for them is not active.
                Native::Drop
                    if matches!(tool, "edit" | "write")
                        && !active.iter().any(|a| {
                            a == if dialect == Dialect::Anthropic {
                                crate::dialect::native::ANTHROPIC_TEXT_EDITOR_NAME
                            } else {
                                "apply_patch"
                            }
                        }) =>
                {
                    return None;
                }
                Native::Drop => "not offered (a native tool stands for it)".to_owned(),
                Native::Keep => return None,
            };
            Some(format!("{dialect}: {said}"))
        })
        .collect()
}

impl Catalog {
    /// Documents `tools`, taking mode overrides from `config` and marking the `active` ones.
    pub fn new(tools: &[Arc<dyn ToolDefinition>], config: &Config, active: &[String]) -> Self {
        let tools = tools
            .iter()
            .map(|tool| CatalogEntry {
                name: tool.spec().name.to_owned(),
                label: tool.spec().label.to_owned(),
                mode: config
                    .tool(&tool.spec().name)
                    .and_then(|s| s.mode)
                    .unwrap_or_else(|| tool.spec().mode),
                active: active.iter().any(|a| *a == tool.spec().name),
                server: tool.spec().mounted_from().map(str::to_owned),
                shapes: shapes(config, &tool.spec().name, active),
                snippet: tool.spec().snippet.as_deref().map(str::to_owned),
                description: tool.spec().description.to_owned(),
                guidelines: tool.spec().guidelines.clone(),
                parameters: parameters(&tool.spec().parameters),
                schema: tool.spec().parameters.clone(),
                config_schema: tool.spec().config.map(|spec| (spec.schema)()),
                examples: tool.spec().examples.clone(),
                output: tool.spec().output_schema.as_ref().map(Output::of),
            })
            .collect();
        Catalog {
            title: DEFAULT_TITLE.to_owned(),
            tools,
        }
    }

    /// The same catalog under another title (the HTML page's `<title>` and top heading, and
    /// the Markdown's top heading).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The catalog as JSON: `{"tools": [entry, …]}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The catalog as Markdown: a level-2 title, a table of contents, then one level-3
    /// section per tool.
    pub fn to_markdown(&self) -> String {
        self.to_markdown_at(2)
    }

    /// The catalog as Markdown whose top heading has `level` (1 to 4; values outside are
    /// clamped), so it embeds under a heading of another document. Tool sections are one
    /// level below, their parts two levels below.
    pub fn to_markdown_at(&self, level: u8) -> String {
        markdown::render(self, level.clamp(1, 4))
    }

    /// The catalog as one HTML page with inline CSS, a table of contents and a filter box;
    /// it loads nothing and links only within itself.
    pub fn to_html(&self) -> String {
        html::render(self)
    }
}

/// The rows of an object schema: required properties first, then optional ones, each in
/// the schema's property order (declaration order: schemas keep insertion order).
fn parameters(schema: &Value) -> Vec<Parameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut rows: Vec<Parameter> = properties
        .iter()
        .map(|(name, property)| Parameter {
            name: name.clone(),
            type_name: type_name(property),
            required: required.contains(&name.as_str()),
            // `#[serde(default)]` on an `Option` gives `null`: that says "absent", which
            // the required column already says.
            default: property.get("default").filter(|d| !d.is_null()).cloned(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            fields: nested_fields(property),
        })
        .collect();
    // A stable sort keeps declaration order within each group.
    rows.sort_by_key(|row| !row.required);
    rows
}

/// The fields of an object property, or of the items of an array property.
fn nested_fields(property: &Value) -> Vec<Parameter> {
    match property.get("items") {
        Some(items) if property.get("type").and_then(Value::as_str) == Some("array") => {
            parameters(items)
        }
        _ => parameters(property),
    }
}

/// A short, human type description of a schema.
pub(crate) fn type_name(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return reference.rsplit('/').next().unwrap_or(reference).to_owned();
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(members) = schema.get(key).and_then(Value::as_array) {
            return members
                .iter()
                .map(type_name)
                .collect::<Vec<_>>()
                .join(" | ");
        }
    }
    match schema.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        Some(Value::String(t)) if t == "array" => match schema.get("items") {
            Some(items) => {
                let inner = type_name(items);
                if inner.contains(' ') {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "array".to_owned(),
        },
        Some(Value::String(t)) if t == "object" => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => format!("map of {}", type_name(values)),
            _ => "object".to_owned(),
        },
        Some(Value::String(t)) => t.clone(),
        _ => "any".to_owned(),
    }
}
