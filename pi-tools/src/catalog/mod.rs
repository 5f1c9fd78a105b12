//! The tool catalog: what each tool is, how it runs and what it takes, as Markdown, JSON
//! or one self-contained HTML page. Output is deterministic (tools in the given order,
//! schema keys sorted).

mod html;
mod markdown;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::core::ExecutionMode;
use crate::tool::ToolDefinition;

/// The documented tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog {
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
    /// The prompt snippet, if any.
    pub snippet: Option<String>,
    /// What the tool does.
    pub description: String,
    /// The tool's prompt guidelines.
    pub guidelines: Vec<String>,
    /// The top-level parameters, in schema order.
    pub parameters: Vec<Parameter>,
    /// The canonical argument schema.
    pub schema: Value,
    /// The schema of the tool's `[tool.<name>]` configuration, if it has one.
    pub config_schema: Option<Value>,
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
    /// The schema's default, if any.
    pub default: Option<Value>,
    /// The schema's description, if any.
    pub description: Option<String>,
}

impl Catalog {
    /// Documents `tools`, taking mode overrides from `config` and marking the `active` ones.
    pub fn new(tools: &[Arc<dyn ToolDefinition>], config: &Config, active: &[String]) -> Self {
        let tools = tools
            .iter()
            .map(|tool| CatalogEntry {
                name: tool.name().to_owned(),
                label: tool.label().to_owned(),
                mode: config
                    .tool(tool.name())
                    .and_then(|s| s.mode)
                    .unwrap_or_else(|| tool.execution_mode()),
                active: active.iter().any(|a| a == tool.name()),
                snippet: tool.prompt_snippet().map(str::to_owned),
                description: tool.description().to_owned(),
                guidelines: tool.prompt_guidelines(),
                parameters: parameters(tool.parameters()),
                schema: tool.parameters().clone(),
                config_schema: tool.config().map(|spec| (spec.schema)()),
            })
            .collect();
        Catalog { tools }
    }

    /// The catalog as JSON: `{"tools": [entry, …]}`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The catalog as Markdown, one section per tool.
    pub fn to_markdown(&self) -> String {
        markdown::render(self)
    }

    /// The catalog as one HTML page with inline CSS and a filter box; it loads nothing.
    pub fn to_html(&self) -> String {
        html::render(self)
    }
}

fn parameters(schema: &Value) -> Vec<Parameter> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| Parameter {
                    name: name.clone(),
                    type_name: type_name(property),
                    required: required.contains(&name.as_str()),
                    default: property.get("default").cloned(),
                    description: property
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                })
                .collect()
        })
        .unwrap_or_default()
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
