//! What the MCP server serves: the active tools, each with the hints MCP lists beside it.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::Value;

use super::error::McpError;
use crate::core::AgentTool;
use crate::tool::ToolDefinition;

/// One tool as the MCP server serves it: the kernel's lean face plus the hints MCP lists
/// (`title`, `readOnlyHint`, `destructiveHint`).
#[derive(Clone)]
pub struct McpTool {
    /// The tool itself.
    pub tool: Arc<dyn AgentTool>,
    /// A human title for clients' user interfaces (MCP's `title`).
    pub title: Option<String>,
    /// Whether the tool only reads (MCP's `readOnlyHint`).
    pub read_only: bool,
    /// Whether the tool may destroy data (MCP's `destructiveHint`; listed only for tools
    /// that are not read-only, where the hint applies).
    pub destructive: bool,
}

impl McpTool {
    /// A tool with no title that is neither read-only nor destructive.
    pub fn new(tool: Arc<dyn AgentTool>) -> Self {
        McpTool {
            tool,
            title: None,
            read_only: false,
            destructive: false,
        }
    }

    /// A tool whose title and hints come from its rich definition (title from `label()`,
    /// `read_only()`, `destructive()`).
    pub fn with_definition(tool: Arc<dyn AgentTool>, definition: &dyn ToolDefinition) -> Self {
        let label = definition.label();
        McpTool {
            tool,
            title: (!label.is_empty()).then(|| label.to_owned()),
            read_only: definition.read_only(),
            destructive: definition.destructive(),
        }
    }

    /// Replaces the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the read-only hint.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets the destructive hint.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// The `tools/list` entry: name, title, description, the canonical schema as the input
    /// schema, and the annotations.
    pub(crate) fn listing(&self) -> Result<Tool, McpError> {
        let name = self.tool.name().to_owned();
        let Value::Object(schema) = self.tool.parameters() else {
            return Err(McpError::SchemaNotAnObject { tool: name });
        };
        let annotations = if self.read_only {
            ToolAnnotations::new().read_only(true)
        } else {
            ToolAnnotations::new()
                .read_only(false)
                .destructive(self.destructive)
        };
        let mut listed = Tool::new(
            name,
            self.tool.description().to_owned(),
            Arc::new(schema.clone()),
        )
        .with_annotations(annotations);
        if let Some(title) = &self.title {
            listed = listed.with_title(title.clone());
        }
        Ok(listed)
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.tool.name())
            .field("title", &self.title)
            .field("read_only", &self.read_only)
            .field("destructive", &self.destructive)
            .finish()
    }
}

/// The largest message a client may send when none is set: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The tools an MCP server serves, in listing order. When two share a name, the first wins
/// (as in the runner's `ToolSet`).
#[derive(Clone, Debug)]
pub struct McpTools {
    tools: Vec<McpTool>,
    instructions: Option<String>,
    max_message_bytes: usize,
}

impl Default for McpTools {
    fn default() -> Self {
        McpTools {
            tools: Vec::new(),
            instructions: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl McpTools {
    /// No tools.
    pub fn new() -> Self {
        McpTools::default()
    }

    /// Adds a tool.
    pub fn push(&mut self, tool: McpTool) {
        self.tools.push(tool);
    }

    /// Builder form of [`McpTools::push`].
    pub fn with(mut self, tool: McpTool) -> Self {
        self.push(tool);
        self
    }

    /// The tools, in listing order.
    pub fn iter(&self) -> impl Iterator<Item = &McpTool> {
        self.tools.iter()
    }

    /// Sets the `instructions` the `initialize` answer carries: how to use these tools,
    /// for the client's model (`pi-tools mcp` sends the system prompt's guidelines).
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The instructions, if set.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Sets the largest message a client may send, the same over both transports: a longer
    /// stdio line gets a `-32700` error, a larger HTTP body 413 (`[mcp] max_message_bytes`
    /// in the configuration; default [`DEFAULT_MAX_MESSAGE_BYTES`]).
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes.max(1);
        self
    }

    /// The largest message a client may send.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The `tools/list` entries, one per distinct name, first of each name kept.
    pub(crate) fn listing(&self) -> Result<Vec<Tool>, McpError> {
        let mut seen = HashSet::new();
        let mut listed = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            if seen.insert(tool.tool.name()) {
                listed.push(tool.listing()?);
            } else {
                tracing::warn!(
                    tool = tool.tool.name(),
                    "a second tool with this name is not served; the first one wins"
                );
            }
        }
        Ok(listed)
    }

    /// The lean tools, in order.
    pub(crate) fn agent_tools(&self) -> impl Iterator<Item = Arc<dyn AgentTool>> + '_ {
        self.tools.iter().map(|t| t.tool.clone())
    }
}

impl FromIterator<McpTool> for McpTools {
    fn from_iter<I: IntoIterator<Item = McpTool>>(iter: I) -> Self {
        McpTools {
            tools: iter.into_iter().collect(),
            ..McpTools::default()
        }
    }
}

impl Extend<McpTool> for McpTools {
    fn extend<I: IntoIterator<Item = McpTool>>(&mut self, iter: I) {
        self.tools.extend(iter);
    }
}
