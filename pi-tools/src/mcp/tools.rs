//! What the MCP server serves: the active tools, each with the hints MCP lists beside it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Tool;

use super::prompt_set::McpPrompts;
use super::resources::McpResources;

use super::error::McpError;
use super::server::SERVER_NAME;
use super::task_support::{TaskMode, TaskSupport, listing_meta};
use super::tool_updates::ToolListUpdates;
use crate::core::AgentTool;
use crate::dialect::McpHints;
use crate::dialect::mcp::listing;
use crate::tool::ToolDefinition;

/// One tool as the MCP server serves it: the kernel's lean face plus the hints MCP lists
/// beside it ([`McpHints`]: `title`, `readOnlyHint`, `destructiveHint`) and whether its calls
/// may become tasks.
#[derive(Clone)]
pub struct McpTool {
    /// The tool itself.
    pub tool: Arc<dyn AgentTool>,
    /// What `tools/list` says of it besides its name, description and schema.
    pub hints: McpHints,
    /// Whether its calls may become tasks, as declared ([`McpTool::task_support`]); `None`:
    /// undeclared, served as [`TaskSupport::Optional`] and not named in `tools/list`.
    pub task_support: Option<TaskSupport>,
    /// How long its call runs before it becomes a task; `None`: the server's
    /// ([`McpTools::with_task_after`]).
    pub task_after: Option<Duration>,
}

impl McpTool {
    /// A tool titled by its label (its name unless it has one of its own) that is neither
    /// read-only nor destructive.
    pub fn new(tool: Arc<dyn AgentTool>) -> Self {
        let hints = McpHints {
            title: Some(tool.label().to_owned()),
            ..McpHints::default()
        };
        McpTool {
            tool,
            hints,
            task_support: None,
            task_after: None,
        }
    }

    /// A tool whose title and hints come from its rich definition ([`McpHints::of`]), as
    /// `pi-tools schema --dialect mcp` lists it.
    pub fn with_definition(tool: Arc<dyn AgentTool>, definition: &dyn ToolDefinition) -> Self {
        McpTool {
            tool,
            hints: McpHints::of(definition),
            task_support: None,
            task_after: None,
        }
    }

    /// Replaces the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.hints.title = Some(title.into());
        self
    }

    /// Sets the read-only hint.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.hints.read_only = read_only;
        self
    }

    /// Sets the destructive hint.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.hints.destructive = destructive;
        self
    }

    /// Declares whether its calls may become tasks (see [`TaskSupport`]); `tools/list` then
    /// names it in the entry's `_meta`, under `io.modelcontextprotocol/tasks` (and, for a
    /// 2025-11-25 session served that version's tasks, as `execution.taskSupport`).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// Sets how long its call runs before it becomes a task, instead of the server's
    /// [`McpTools::with_task_after`]. Zero: a task from the start, so each question the tool
    /// asks is the task's (`input_required`, answered with `tasks/update`) and the tool waits
    /// for the answer instead of running again.
    pub fn task_after(mut self, after: Duration) -> Self {
        self.task_after = Some(after);
        self
    }

    /// The `tools/list` entry, as [`dialect::mcp::listing`](crate::dialect::mcp::listing)
    /// builds it from the canonical schema, with the declared task support.
    pub(crate) fn listing(&self) -> Result<Tool, McpError> {
        let name = self.tool.name();
        let schema = self.tool.parameters();
        if !schema.is_object() {
            return Err(McpError::SchemaNotAnObject {
                tool: name.to_owned(),
            });
        }
        let mut listed = listing(
            name,
            self.tool.description(),
            schema.clone(),
            self.tool.output_schema(),
            &self.hints,
        );
        if let (Some(support), Some(entry)) = (self.task_support, listed.as_object_mut()) {
            entry.insert("_meta".to_owned(), listing_meta(support));
        }
        serde_json::from_value(listed).map_err(|e| McpError::ListingRejected {
            tool: name.to_owned(),
            reason: e.to_string(),
        })
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.tool.name())
            .field("hints", &self.hints)
            .field("task_support", &self.task_support)
            .field("task_after", &self.task_after)
            .finish()
    }
}

pub use crate::config::DEFAULT_MAX_MESSAGE_BYTES;

/// How long a call of a request that declares the tasks extension runs before it is answered
/// with a task, unless [`McpTools::with_task_after`] or the tool ([`McpTool::task_after`])
/// says otherwise: 10 s.
pub const DEFAULT_TASK_AFTER: Duration = Duration::from_secs(10);

/// The tools an MCP server serves, in listing order. When two share a name, the first wins
/// (as in the runner's `ToolSet`).
#[derive(Clone, Debug)]
pub struct McpTools {
    tools: Vec<McpTool>,
    instructions: Option<String>,
    prompt: Option<McpPrompt>,
    max_message_bytes: usize,
    task_after: Duration,
    server_name: String,
    server_version: String,
    resources: Option<Resources>,
    prompts: Option<Prompts>,
    updates: Option<ToolListUpdates>,
}

/// The program's prompts, shared by the server's sessions.
#[derive(Clone)]
pub(crate) struct Prompts(pub(crate) Arc<dyn McpPrompts>);

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpPrompts")
    }
}

/// The program's resources, shared by the server's sessions.
#[derive(Clone)]
pub(crate) struct Resources(pub(crate) Arc<dyn McpResources>);

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpResources")
    }
}

/// A prompt the server offers (`prompts/list`, `prompts/get`): a fixed text, without
/// arguments, that clients show as a slash command or insert as a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpPrompt {
    /// Its name in `prompts/list` and `prompts/get`.
    pub name: String,
    /// One line on what it is, for the client to show.
    pub description: String,
    /// The text `prompts/get` gives, as one user message.
    pub text: String,
}

impl Default for McpTools {
    fn default() -> Self {
        McpTools {
            tools: Vec::new(),
            instructions: None,
            prompt: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            task_after: DEFAULT_TASK_AFTER,
            server_name: SERVER_NAME.to_owned(),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            resources: None,
            prompts: None,
            updates: None,
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

    /// Sets the name and version the server gives in its `initialize` answer (default
    /// `pi-tools` and this library's version), e.g. your program's own
    /// `env!("CARGO_PKG_NAME")` and `env!("CARGO_PKG_VERSION")`.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.server_name = name.into();
        self.server_version = version.into();
        self
    }

    /// The server's name and version, as the `initialize` answer gives them.
    pub fn server_info(&self) -> (&str, &str) {
        (&self.server_name, &self.server_version)
    }

    /// Offers `prompt` through MCP's prompts (`pi-tools mcp` offers the system prompt's
    /// "Available tools" and "Guidelines" as `system_prompt`); the `initialize` answer
    /// then declares the prompts capability.
    pub fn with_prompt(mut self, prompt: McpPrompt) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// The prompt offered, if any.
    pub fn prompt(&self) -> Option<&McpPrompt> {
        self.prompt.as_ref()
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

    /// Sets how long a call of a request that declares the tasks extension
    /// (`io.modelcontextprotocol/tasks`) runs before it is answered with a task to poll
    /// with `tasks/get` (`[mcp] task_after_ms`; default [`DEFAULT_TASK_AFTER`]), for the
    /// tools that set no time of their own ([`McpTool::task_after`]).
    pub fn with_task_after(mut self, after: Duration) -> Self {
        self.task_after = after;
        self
    }

    /// How long a call runs before it becomes a task (see [`McpTools::with_task_after`]).
    pub fn task_after(&self) -> Duration {
        self.task_after
    }

    /// Serves `resources` beside the tools (`resources/list`, `resources/templates/list`,
    /// `resources/read`), before the files the tools' results point at.
    pub fn with_resources(mut self, resources: impl McpResources) -> Self {
        self.resources = Some(Resources(Arc::new(resources)));
        self
    }

    /// Serves `prompts` beside the tools (`prompts/list`, `prompts/get`, and
    /// `completion/complete` of their arguments), after the tools' system prompt.
    pub fn with_prompts(mut self, prompts: impl McpPrompts) -> Self {
        self.prompts = Some(Prompts(Arc::new(prompts)));
        self
    }

    /// Lets `updates` replace the tools while the server runs ([`ToolListUpdates::replace`]);
    /// the `initialize` answer then declares `tools: { listChanged: true }`, and each
    /// 2025-11-25 session's client is sent `notifications/tools/list_changed` when they change.
    pub fn with_updates(mut self, updates: ToolListUpdates) -> Self {
        self.updates = Some(updates);
        self
    }

    /// The handle that replaces the tools while the server runs, if one was given.
    pub(crate) fn updates(&self) -> Option<&ToolListUpdates> {
        self.updates.as_ref()
    }

    /// The program's prompts, if any.
    pub(crate) fn prompts(&self) -> Option<Arc<dyn McpPrompts>> {
        self.prompts.as_ref().map(|p| Arc::clone(&p.0))
    }

    /// The program's resources, if any.
    pub(crate) fn resources(&self) -> Option<Arc<dyn McpResources>> {
        self.resources.as_ref().map(|r| Arc::clone(&r.0))
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

    /// How the server treats each tool's calls, by name (the first of each name), with the
    /// server's `task_after` where a tool sets none.
    pub(crate) fn task_modes(&self) -> std::collections::HashMap<String, TaskMode> {
        let mut modes = std::collections::HashMap::new();
        for tool in &self.tools {
            modes
                .entry(tool.tool.name().to_owned())
                .or_insert(TaskMode {
                    support: tool.task_support.unwrap_or_default(),
                    after: tool.task_after.unwrap_or(self.task_after),
                });
        }
        modes
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
