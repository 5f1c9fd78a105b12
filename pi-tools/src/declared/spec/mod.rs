//! What a declared tool is: a `[tool.<name>]` section with a `command` (an argument vector
//! with `{param}` placeholders) or a `script` (a bash script that reads its parameters from
//! the environment), typed parameters under `[tool.<name>.params.<param>]`, and the same
//! metadata a `#[tool]` fn has. What the file says, as read and checked by the reader here
//! (which the configuration loader calls); the tool that runs it is the running part of
//! [`crate::declared`] (feature `process`), which sits above the configuration and which
//! this layer never names.
//!
//! ```toml
//! [tool.test]
//! description = "Run the test suite, or the tests whose name contains `filter`."
//! snippet = "Run the tests"
//! command = ["cargo", "test", "--quiet", "{filter}"]
//! timeout_secs = 600
//! read_only = true
//! [tool.test.params.filter]
//! type = "string"
//! description = "Only tests whose name contains this text."
//! default = ""
//! header = "Filter"                # also sent as `Mcp-Param-Filter` by 2026-07-28 clients
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::core::ExecutionMode;
use crate::tool::{ToolOrigin, ToolRole, ToolSpec};

mod read;

pub(crate) use read::{declared_names, declares, read};

/// One declared tool.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredTool {
    /// The tool's name (`[tool.<name>]`).
    pub name: String,
    /// `description`: what the tool does, for the model (required).
    pub description: String,
    /// `label` (default: the name).
    pub label: Option<String>,
    /// `snippet`: its line in the prompt's "Available tools" (default: the description's
    /// first paragraph, as for `#[tool]`).
    pub snippet: Option<String>,
    /// `guidelines`: lines for the prompt's "Guidelines".
    pub guidelines: Vec<String>,
    /// `read_only`: MCP's `readOnlyHint`.
    pub read_only: bool,
    /// `destructive`: MCP's `destructiveHint`.
    pub destructive: bool,
    /// `mode`: whether calls may run beside others of their batch.
    pub mode: ExecutionMode,
    /// `role`: the tool's part in the prompt's rule on exploring files.
    pub role: ToolRole,
    /// The parameters, in the order the file lists them.
    pub params: Vec<DeclaredParam>,
    /// What runs.
    pub action: DeclaredAction,
    /// `timeout_secs`: the command is killed after this long (default: none of its own;
    /// the `[tools] timeout_secs` of every call still applies).
    pub timeout: Option<Duration>,
    /// `cwd`: where the command runs, relative to the working directory (default: there).
    pub cwd: Option<PathBuf>,
    /// `env`: variables added to the command's environment.
    pub env: BTreeMap<String, String>,
    /// `success_codes`: the exit codes that count as success (default: `[0]`).
    pub success_codes: Vec<i32>,
    /// `output`: what the command prints (default: text for the model).
    pub output: DeclaredOutput,
}

/// What a declared tool's command prints (`output = "text"` or `"json"`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum DeclaredOutput {
    /// Text for the model, as it is.
    #[default]
    Text,
    /// One JSON value: the result's structured content, its text the model reads. With
    /// `output_schema` (a JSON Schema in a string, checked when the file loads), the value
    /// must match it, and it is the tool's output schema.
    Json {
        /// `output_schema`, parsed.
        schema: Option<Value>,
    },
}

/// What a declared tool runs.
#[derive(Debug, Clone, PartialEq)]
pub enum DeclaredAction {
    /// `command`: an argument vector; no shell reads it.
    Command(Vec<ArgTemplate>),
    /// `script`: a bash script; each parameter is in the environment variable of its name,
    /// never in the script's text.
    Script(String),
}

/// One element of a `command`.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgTemplate {
    /// Text with `{param}` placeholders, each filled with the parameter's value; one
    /// argument (an element that is exactly one array parameter's placeholder gives one
    /// argument per item). Dropped when a parameter it names is absent.
    Text(Vec<Piece>),
    /// A nested array: arguments kept together (a flag and its value), all dropped when a
    /// parameter they name is absent or a boolean they name is false.
    Group(Vec<Vec<Piece>>),
}

/// A piece of an argument's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text as written (`{{` and `}}` stand for braces).
    Literal(String),
    /// A parameter's value.
    Param(String),
}

/// One parameter (`[tool.<name>.params.<param>]`).
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredParam {
    /// The parameter's name.
    pub name: String,
    /// `type` (and `items` for an array, `values` for an enum).
    pub kind: ParamKind,
    /// `description`, for the model.
    pub description: Option<String>,
    /// `default`: the value when the model gives none (it makes the parameter optional).
    pub default: Option<Value>,
    /// `required` (default: true when there is no default).
    pub required: bool,
    /// `allow_dash`: whether a value may start with `-` (refused otherwise, so no value
    /// becomes an option).
    pub allow_dash: bool,
    /// `pattern`, `min_length`, `max_length`, `minimum`, `maximum`, `min_items`,
    /// `max_items`, as JSON Schema keywords.
    pub bounds: Map<String, Value>,
    /// `header`: the name of the `Mcp-Param-{header}` HTTP header a 2026-07-28 client
    /// mirrors the value into (SEP-2243), given to the schema as `x-mcp-header`; checked as
    /// read (an HTTP token, one per tool whatever its case, on a string, integer, boolean
    /// or enum parameter).
    pub header: Option<String>,
}

/// A parameter's type.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// `"string"`.
    String,
    /// `"integer"`.
    Integer,
    /// `"number"`.
    Number,
    /// `"boolean"`.
    Boolean,
    /// `"enum"`, with its `values` (strings).
    Enum(Vec<String>),
    /// `"array"`, with the type of its `items` (not an array).
    Array(Box<ParamKind>),
}

impl ParamKind {
    /// The JSON Schema of a value of this type.
    fn schema(&self) -> Value {
        match self {
            ParamKind::String => json!({"type": "string"}),
            ParamKind::Integer => json!({"type": "integer"}),
            ParamKind::Number => json!({"type": "number"}),
            ParamKind::Boolean => json!({"type": "boolean"}),
            ParamKind::Enum(values) => json!({"type": "string", "enum": values}),
            ParamKind::Array(items) => json!({"type": "array", "items": items.schema()}),
        }
    }

    /// Whether `value` is a value of this type.
    pub fn accepts(&self, value: &Value) -> bool {
        match (self, value) {
            (ParamKind::String, Value::String(_)) | (ParamKind::Boolean, Value::Bool(_)) => true,
            (ParamKind::Integer, Value::Number(n)) => n.is_i64() || n.is_u64(),
            (ParamKind::Number, Value::Number(_)) => true,
            (ParamKind::Enum(values), Value::String(s)) => values.contains(s),
            (ParamKind::Array(items), Value::Array(list)) => list.iter().all(|v| items.accepts(v)),
            _ => false,
        }
    }

    /// The type as the file writes it.
    pub fn name(&self) -> &'static str {
        match self {
            ParamKind::String => "string",
            ParamKind::Integer => "integer",
            ParamKind::Number => "number",
            ParamKind::Boolean => "boolean",
            ParamKind::Enum(_) => "enum",
            ParamKind::Array(_) => "array",
        }
    }
}

impl DeclaredTool {
    /// The canonical JSON Schema of the arguments, as `#[tool]` would give it: an object
    /// whose properties are the parameters in order, `required` always present.
    pub fn parameters(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for param in &self.params {
            let mut schema = param.kind.schema();
            if let Some(object) = schema.as_object_mut() {
                if let Some(description) = &param.description {
                    object.insert("description".into(), Value::from(description.clone()));
                }
                if let Some(default) = &param.default {
                    object.insert("default".into(), default.clone());
                }
                object.extend(param.bounds.clone());
                if let Some(header) = &param.header {
                    object.insert("x-mcp-header".into(), Value::from(header.clone()));
                }
            }
            properties.insert(param.name.clone(), schema);
            if param.required {
                required.push(Value::from(param.name.clone()));
            }
        }
        json!({"type": "object", "properties": properties, "required": required})
    }

    /// Everything the tool says about itself.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            label: self.label.clone().unwrap_or_else(|| self.name.clone()),
            snippet: Some(
                self.snippet
                    .clone()
                    .unwrap_or_else(|| first_paragraph(&self.description)),
            ),
            guidelines: self.guidelines.clone(),
            mode: self.mode,
            role: self.role,
            read_only: self.read_only,
            destructive: self.destructive,
            output_schema: match &self.output {
                DeclaredOutput::Json { schema } => schema.clone(),
                DeclaredOutput::Text => None,
            },
            origin: ToolOrigin::Declared,
            ..ToolSpec::new(
                self.name.clone(),
                self.description.clone(),
                self.parameters(),
            )
        }
    }
}

/// The first paragraph of `text`, its lines joined by spaces.
fn first_paragraph(text: &str) -> String {
    let paragraph = text.trim().split("\n\n").next().unwrap_or_default();
    paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
}
