//! MCP's listing of a tool (`tools/list`): the one place its `title` and `annotations` are
//! decided, for `pi-tools schema --dialect mcp` and the MCP server alike.

use serde_json::{Map, Value, json};

use crate::tool::ToolDefinition;

/// What MCP lists beside a tool's name, description and input schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpHints {
    /// A human title for clients' user interfaces (MCP's `title`): the tool's label, which
    /// is its name unless it has one of its own (`None` only when built by hand).
    pub title: Option<String>,
    /// The tool only reads (MCP's `readOnlyHint: true`).
    pub read_only: bool,
    /// The tool may destroy data (MCP's `destructiveHint: true`; it applies only to tools
    /// that are not read-only).
    pub destructive: bool,
}

impl McpHints {
    /// The hints a definition declares: its label as the title (the name when it has none
    /// of its own: a client shows a title where there is one, and every tool should show
    /// alike), `read_only()` and `destructive()`.
    pub fn of(def: &dyn ToolDefinition) -> Self {
        McpHints {
            title: Some(def.spec().label.to_owned()),
            read_only: def.spec().read_only,
            destructive: def.spec().destructive,
        }
    }

    /// MCP's `annotations`: `readOnlyHint: true` for a read-only tool, `readOnlyHint: false,
    /// destructiveHint: true` for a destructive one, and none when neither is declared (MCP's
    /// defaults then apply: a client assumes the tool may write and destroy).
    fn annotations(&self) -> Option<Value> {
        if self.read_only {
            Some(json!({"readOnlyHint": true}))
        } else if self.destructive {
            Some(json!({"readOnlyHint": false, "destructiveHint": true}))
        } else {
            None
        }
    }
}

/// A tool's `tools/list` entry: `{name, title?, description, inputSchema, outputSchema?,
/// annotations?}`; `outputSchema` is the tool's output schema, for a tool with a typed
/// result (a client validates the call's `structuredContent` against it).
pub fn listing(
    name: &str,
    description: &str,
    input_schema: Value,
    output_schema: Option<&Value>,
    hints: &McpHints,
) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    if let Some(title) = &hints.title {
        out.insert("title".into(), json!(title));
    }
    out.insert("description".into(), json!(description));
    out.insert("inputSchema".into(), input_schema);
    if let Some(output_schema) = output_schema {
        out.insert("outputSchema".into(), output_schema.clone());
    }
    if let Some(annotations) = hints.annotations() {
        out.insert("annotations".into(), annotations);
    }
    Value::Object(out)
}
