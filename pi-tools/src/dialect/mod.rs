//! Provider dialects: each provider's wire form of a tool, rendered from the canonical
//! schema by a pure transform.
//!
//! | dialect | wire shape |
//! |---|---|
//! | `mcp` | `{name, title?, description, inputSchema, outputSchema?, annotations?}` |
//! | `openai` | `{type: "function", function: {name, description, parameters}}` |
//! | `openai-strict` | as `openai`, plus `strict: true` and strict-mode schema rules |
//! | `anthropic` | `{name, description, input_schema}` |
//! | `gemini` | `{name, description, parameters}` in the OpenAPI 3.0 subset |
//!
//! A type a dialect cannot express is a [`DialectError`] naming the tool and the JSON path,
//! never a silently different schema. A catalog ([`tool_schemas`]) leaves such a tool out of
//! that dialect only and lists it beside the schemas, so one tool cannot take the others
//! down. [`check`] asserts a dialect's rules on any wire value, so tests can hold every tool
//! to them.
//!
//! ```
//! use pi_tools::dialect::{Dialect, transform};
//! use serde_json::json;
//!
//! let canonical = json!({
//!     "type": "object",
//!     "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
//!     "required": ["path"]
//! });
//! let strict = transform(&canonical, Dialect::OpenAiStrict).unwrap();
//! assert_eq!(strict["required"], json!(["path", "limit"]));
//! assert_eq!(strict["properties"]["limit"], json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}));
//! ```

mod anthropic;
mod catalog;
mod gemini;
pub mod mcp;
pub mod native;
mod notes;
mod openai_strict;
pub mod v4a;
mod visit;

use serde_json::{Value, json};

pub use catalog::{DialectSchemas, tool_schemas};
pub use mcp::McpHints;

use crate::tool::ToolDefinition;

/// A provider's way of describing tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Model Context Protocol: the canonical schema as `inputSchema`.
    Mcp,
    /// OpenAI function calling, non-strict: the canonical schema as `parameters`.
    OpenAi,
    /// OpenAI function calling with `strict: true` (structured outputs).
    OpenAiStrict,
    /// OpenAI Responses: the strict schema in a flat tool, `{type: "function", name,
    /// description, parameters, strict: true}`.
    OpenAiResponses,
    /// Anthropic's `input_schema`.
    Anthropic,
    /// Google Gemini function declarations (an OpenAPI 3.0 subset).
    Gemini,
}

impl Dialect {
    /// Every dialect, in documentation order.
    pub const ALL: [Dialect; 6] = [
        Dialect::Mcp,
        Dialect::OpenAi,
        Dialect::OpenAiStrict,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    /// The dialect's name as the CLI spells it (`openai-strict`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Mcp => "mcp",
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    /// The API whose replies and requests go with this dialect, as errors and result
    /// details name it: `openai` for both Chat Completions dialects, `openai-responses`,
    /// `anthropic`, `gemini`, and `mcp`.
    pub fn api(self) -> &'static str {
        match self {
            Dialect::OpenAi | Dialect::OpenAiStrict => "openai",
            other => other.as_str(),
        }
    }

    /// Whether the dialect has replies to read and requests to shape
    /// ([`provider`](crate::provider)): every one but MCP, a face that only lists tools.
    pub fn has_replies(self) -> bool {
        self != Dialect::Mcp
    }

    /// Whether the tools are strict (structured outputs), so a `null` given for an optional
    /// parameter means it is absent.
    pub fn strict(self) -> bool {
        matches!(self, Dialect::OpenAiStrict | Dialect::OpenAiResponses)
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Dialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown dialect `{s}`: use one of mcp, openai, openai-strict, openai-responses, anthropic, gemini"
                )
            })
    }
}

/// A schema that a dialect cannot express.
///
/// Its `Debug` is its `Display`, so `main` returning it with `?` prints the sentence.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct DialectError {
    /// The tool, when known (set by [`tool_schema`]; [`transform`] does not know it).
    pub tool: Option<String>,
    /// The dialect that cannot express it.
    pub dialect: Dialect,
    /// JSON pointer into the canonical schema (`""` is the root).
    pub path: String,
    /// What cannot be expressed, and how to fix it.
    pub reason: String,
}

// Debug is the sentence (as `ConfigError`'s), so `main` returning it with `?` prints that.
impl std::fmt::Debug for DialectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl DialectError {
    pub(crate) fn new(dialect: Dialect, path: &str, reason: impl Into<String>) -> Self {
        DialectError {
            tool: None,
            dialect,
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    fn describe(&self) -> String {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        match &self.tool {
            Some(tool) => format!(
                "the schema of tool `{tool}` cannot be expressed in the {} dialect at `{path}`: {}",
                self.dialect, self.reason
            ),
            None => format!(
                "the schema cannot be expressed in the {} dialect at `{path}`: {}",
                self.dialect, self.reason
            ),
        }
    }
}

/// Renders a canonical argument schema in a dialect (the schema only, without the tool's
/// name and description around it).
///
/// Every provider wants an object at the root; a union there (a tagged enum as the whole
/// argument type) is an error in every dialect.
pub fn transform(canonical: &Value, dialect: Dialect) -> Result<Value, DialectError> {
    for key in ["oneOf", "anyOf", "allOf"] {
        if canonical.get(key).is_some() {
            return Err(DialectError::new(
                dialect,
                "",
                format!(
                    "a union (`{key}`) at the root, such as a tagged enum as the whole argument type, is not allowed; put the enum in a field of an arguments struct"
                ),
            ));
        }
    }
    if visit::types(canonical) != ["object"] {
        return Err(DialectError::new(
            dialect,
            "",
            "the root must be `\"type\": \"object\"`; wrap the arguments in a struct",
        ));
    }
    match dialect {
        Dialect::Mcp | Dialect::OpenAi => Ok(canonical.clone()),
        Dialect::OpenAiStrict => openai_strict::transform(canonical),
        // The same strict rules; an error names the dialect asked for.
        Dialect::OpenAiResponses => openai_strict::transform(canonical).map_err(|mut e| {
            e.dialect = Dialect::OpenAiResponses;
            e
        }),
        Dialect::Anthropic => anthropic::transform(canonical),
        Dialect::Gemini => gemini::transform(canonical),
    }
}

/// A tool's full wire description in a dialect. MCP's is [`mcp::listing`], with the
/// definition's [`McpHints`].
pub fn tool_schema(def: &dyn ToolDefinition, dialect: Dialect) -> Result<Value, DialectError> {
    let schema = transform(&def.spec().parameters, dialect).map_err(|mut e| {
        e.tool = Some(def.spec().name.to_owned());
        e
    })?;
    let name = &def.spec().name;
    let description = &def.spec().description;
    Ok(match dialect {
        Dialect::Mcp => mcp::listing(
            name,
            description,
            schema,
            def.spec().output_schema.as_ref(),
            &McpHints::of(def),
        ),
        Dialect::OpenAi => json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        }),
        Dialect::OpenAiStrict => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": schema,
                "strict": true,
            },
        }),
        Dialect::OpenAiResponses => json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
            "strict": true,
        }),
        Dialect::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": schema,
        }),
        Dialect::Gemini => json!({
            "name": name,
            "description": description,
            "parameters": schema,
        }),
    })
}

/// A tool's output schema rendered in a dialect, for where it goes to a model (a prompt
/// that shows what a tool returns, a structured-output format asking a model for such a
/// value): the same rules as the argument schema's, so a strict dialect's output schema is
/// strict too (every object closed, every property required, optional ones nullable).
/// `None` for a tool without one; an error names the tool and the JSON path, as for the
/// arguments.
///
/// ```
/// use pi_tools::dialect::{Dialect, output_schema};
/// use pi_tools::{ToolResult, ToolSpec, tool::from_fn};
/// use serde_json::json;
///
/// let spec = ToolSpec {
///     output_schema: Some(json!({
///         "type": "object",
///         "properties": {"n": {"type": "integer"}, "note": {"type": ["string", "null"]}},
///         "required": ["n"]
///     })),
///     ..ToolSpec::new("count", "Count.", json!({"type": "object", "properties": {}, "required": []}))
/// };
/// let def = from_fn(spec, |_args, _ctx| async { Ok(ToolResult::text("1")) });
/// let strict = output_schema(def.as_ref(), Dialect::OpenAiStrict).unwrap().unwrap();
/// assert_eq!(strict["required"], json!(["n", "note"]));
/// assert_eq!(strict["additionalProperties"], json!(false));
/// ```
pub fn output_schema(
    def: &dyn ToolDefinition,
    dialect: Dialect,
) -> Result<Option<Value>, DialectError> {
    let Some(schema) = &def.spec().output_schema else {
        return Ok(None);
    };
    transform(schema, dialect).map(Some).map_err(|mut e| {
        e.tool = Some(def.spec().name.to_owned());
        e.reason = format!("(its output schema) {}", e.reason);
        e
    })
}

/// Asserts a dialect's rules on a wire value as [`tool_schema`] returns it, listing every
/// violation (`path: problem`). Usable on any tool, not only those rendered here.
pub fn check(dialect: Dialect, wire: &Value) -> Result<(), Vec<String>> {
    fn require_str(key: &str, value: &Value, problems: &mut Vec<String>) {
        if !value.get(key).is_some_and(Value::is_string) {
            problems.push(format!("/{key}: missing or not a string"));
        }
    }
    let mut problems = Vec::new();
    let schema_key = match dialect {
        Dialect::Mcp => "inputSchema",
        Dialect::OpenAi | Dialect::OpenAiStrict | Dialect::OpenAiResponses => "parameters",
        Dialect::Anthropic => "input_schema",
        Dialect::Gemini => "parameters",
    };
    let (holder, prefix) = match dialect {
        Dialect::OpenAi | Dialect::OpenAiStrict => {
            if wire.get("type").and_then(Value::as_str) != Some("function") {
                problems.push("/type: must be \"function\"".to_owned());
            }
            (wire.get("function").unwrap_or(&Value::Null), "/function")
        }
        Dialect::OpenAiResponses => {
            if wire.get("type").and_then(Value::as_str) != Some("function") {
                problems.push("/type: must be \"function\"".to_owned());
            }
            (wire, "")
        }
        _ => (wire, ""),
    };
    require_str("name", holder, &mut problems);
    require_str("description", holder, &mut problems);
    if dialect.strict() && holder.get("strict") != Some(&Value::Bool(true)) {
        problems.push(format!("{prefix}/strict: must be true"));
    }
    if dialect == Dialect::Mcp && wire.get("outputSchema").is_some_and(|s| !s.is_object()) {
        problems.push("/outputSchema: must be a JSON Schema object".to_owned());
    }
    if dialect == Dialect::Mcp
        && let Some(annotations) = wire.get("annotations")
    {
        for (key, value) in annotations.as_object().into_iter().flatten() {
            if !value.is_boolean() {
                problems.push(format!("/annotations/{key}: must be a boolean"));
            }
        }
    }
    let Some(schema) = holder.get(schema_key) else {
        problems.push(format!("{prefix}/{schema_key}: missing"));
        return Err(problems);
    };
    let path = format!("{prefix}/{schema_key}");
    if visit::types(schema) != ["object"] {
        problems.push(format!("{path}: the root must be `\"type\": \"object\"`"));
    }
    match dialect {
        Dialect::Mcp | Dialect::OpenAi => {
            if !schema.get("properties").is_some_and(Value::is_object) {
                problems.push(format!("{path}: the root needs `properties`"));
            }
            if !schema.get("required").is_some_and(Value::is_array) {
                problems.push(format!("{path}: the root needs `required`"));
            }
        }
        Dialect::OpenAiStrict | Dialect::OpenAiResponses => {
            openai_strict::check(schema, &path, &mut problems)
        }
        Dialect::Anthropic => anthropic::check(schema, &path, &mut problems),
        Dialect::Gemini => gemini::check(schema, &path, &mut problems),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}
