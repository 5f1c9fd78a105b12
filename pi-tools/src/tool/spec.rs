//! A tool's metadata as one value: everything the catalog, the prompt, the provider schemas
//! and the MCP listing say about a tool, separate from what the tool does.
//!
//! `#[tool]` builds a [`ToolSpec`] once per tool (a `static`), mounts build one from a
//! server's listing, tests build one by hand. Changing what a tool says about itself is
//! editing a field of a copy ([`with_spec`](super::with_spec)), never an adapter that
//! forwards every question.

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use crate::core::ExecutionMode;

/// Where a tool comes from, which decides what the embedded default does with it (a
/// program's own tools are active with no configuration; the built-ins only as the default
/// lists them) and where the catalog files it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolOrigin {
    /// One of pi-tools' own `#[tool]` functions (the built-in tools).
    BuiltIn,
    /// A tool of the program that links pi-tools (its own `#[tool]` functions, or a spec
    /// built by hand).
    Own,
    /// A tool declared in a configuration file (`[tool.<name>]` with a `command`).
    Declared,
    /// A tool of another MCP server, mounted under `[mcp.servers.<server>]`.
    Mounted {
        /// The mounted server's name.
        server: String,
    },
}

impl ToolOrigin {
    /// The origin of a `#[tool]` function declared in the module `module_path` (as
    /// `module_path!()` gives it): built in when the module is pi-tools' own, else the
    /// program's. The macro calls this; a program has no need to.
    pub fn of_module(module_path: &str) -> ToolOrigin {
        match module_path.split("::").next() {
            Some("pi_tools") => ToolOrigin::BuiltIn,
            _ => ToolOrigin::Own,
        }
    }
}

impl ToolSpec {
    /// The MCP server this tool is mounted from, or `None` for a tool of this program.
    pub fn mounted_from(&self) -> Option<&str> {
        match &self.origin {
            ToolOrigin::Mounted { server } => Some(server),
            _ => None,
        }
    }
}

/// Where a tool was declared (for duplicate-name errors and docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// Source file, as `file!()` gives it.
    pub file: &'static str,
    /// Line, as `line!()` gives it.
    pub line: u32,
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The typed configuration a tool declares with `config = Type`: its schema, a loader for a
/// `[tool.<name>]` section (as JSON), and the default used when the section is absent.
#[derive(Clone, Copy)]
pub struct ToolConfigSpec {
    /// JSON schema of the configuration type.
    pub schema: fn() -> Value,
    /// Parses a section into the configuration value; the error names the offending key.
    pub load: fn(Value) -> Result<Arc<dyn Any + Send + Sync>, String>,
    /// The configuration used when the section is absent.
    pub default: fn() -> Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for ToolConfigSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolConfigSpec").finish_non_exhaustive()
    }
}

/// A tool's part in the system prompt's rule on exploring files (`#[tool(role = ...)]`).
/// The rule names the tools by these roles, so a user's own search tool takes part in it
/// as the built-in ones do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ToolRole {
    /// No part in the rule.
    #[default]
    General,
    /// Lists, finds or searches files (the built-in grep, find and ls): with a shell
    /// active, the prompt tells the model to prefer these tools over it for exploring.
    Explore,
    /// Runs shell commands (the built-in bash): with it active, the prompt tells the model
    /// how to explore files, with the exploration tools or, without any, with the shell;
    /// its description and the prompt's guidelines say what the sandbox allows.
    Shell,
    /// Works on the session's background jobs (the built-in job tools): with one active,
    /// the shell tools take the parameters that start a job (`background`, `yield`, `pty`).
    Jobs,
}

/// Everything a tool says about itself. Build one with [`ToolSpec::new`] and set the fields
/// that differ from the defaults:
///
/// ```
/// use pi_tools::ToolSpec;
/// use serde_json::json;
///
/// let spec = ToolSpec {
///     snippet: Some("Say hello".into()),
///     read_only: true,
///     ..ToolSpec::new("greet", "Say hello to someone.", json!({"type": "object"}))
/// };
/// assert_eq!(spec.label, "greet");
/// ```
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// A short human label (by default the name).
    pub label: String,
    /// What the tool does, for the model.
    pub description: String,
    /// One line for the system prompt's "Available tools" section; a tool without one is
    /// active but not listed.
    pub snippet: Option<String>,
    /// Lines for the system prompt's "Guidelines" section.
    pub guidelines: Vec<String>,
    /// The canonical JSON schema of the arguments.
    pub parameters: Value,
    /// The JSON schema of the tool's structured result, for a tool that returns a typed
    /// value (`#[tool]` on a fn returning `Result<T, _>` for a `T: Serialize + JsonSchema`);
    /// `None` for a tool that returns content only.
    pub output_schema: Option<Value>,
    /// The typed configuration the tool accepts (`[tool.<name>]`), if any.
    pub config: Option<ToolConfigSpec>,
    /// Whether the tool may run beside others of its batch.
    pub mode: ExecutionMode,
    /// The tool's part in the prompt's rule on exploring files.
    pub role: ToolRole,
    /// Whether the tool only reads (MCP's `readOnlyHint`).
    pub read_only: bool,
    /// Whether the tool may destroy data (MCP's `destructiveHint`).
    pub destructive: bool,
    /// Whether arguments may carry properties the schema does not declare (the `#[tool]`
    /// key `accept_unknown_properties`); otherwise an unknown property is a validation
    /// error naming the closest known one.
    pub accepts_unknown_properties: bool,
    /// Where the tool comes from: built into pi-tools, the program's own, declared in a
    /// configuration file or mounted from an MCP server. The configuration asks this, not
    /// a list of names.
    pub origin: ToolOrigin,
    /// Example arguments, each a JSON object the schema accepts; the catalog shows them as
    /// example calls (`#[tool(examples = [r#"{...}"#])]`).
    pub examples: Vec<Value>,
    /// Where the tool was declared.
    pub source: Option<SourceLocation>,
}

impl ToolSpec {
    /// A spec with this name, description and parameter schema, labelled by its name, with
    /// no snippet, guidelines, output schema, configuration or examples, parallel, of no role, with no
    /// hints, refusing unknown properties.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> ToolSpec {
        let name = name.into();
        ToolSpec {
            label: name.clone(),
            name,
            description: description.into(),
            snippet: None,
            guidelines: Vec::new(),
            parameters,
            output_schema: None,
            config: None,
            mode: ExecutionMode::Parallel,
            role: ToolRole::General,
            read_only: false,
            destructive: false,
            accepts_unknown_properties: false,
            origin: ToolOrigin::Own,
            examples: Vec::new(),
            source: None,
        }
    }
}
