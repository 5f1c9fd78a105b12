//! What a loaded configuration says: the active tools, how batches run, each tool's
//! settings, path confinement and the prompt's closing guidelines.

use std::any::Any;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;

use super::{DeclaredTool, EnvSettings, SandboxSettings, ServerSettings};
use crate::core::ExecutionMode;

/// A loaded, validated configuration.
#[derive(Clone)]
pub struct Config {
    /// Active tool names, in order (all registered).
    pub active: Vec<String>,
    /// How batches run.
    pub execution: ExecutionMode,
    /// Bound on concurrently executing calls, per batch and across an MCP session (`None`:
    /// unbounded).
    pub max_concurrency: Option<usize>,
    /// Per-call timeout (`None`: none).
    pub timeout: Option<Duration>,
    /// `[tools] shapes`: the shapes the built-ins are offered in per provider family,
    /// pi-tools' own (the default) or the family's native tools (see
    /// [`crate::dialect::native`]).
    pub shapes: crate::dialect::native::FamilyShapes,
    /// `[tool.<name>]` sections, by tool name.
    pub tools: BTreeMap<String, ToolSettings>,
    /// `[paths] allowed_roots`: directories the file tools are confined to (`None`: no
    /// confinement). Relative roots are relative to the working directory.
    pub allowed_roots: Option<Vec<PathBuf>>,
    /// `[paths] pseudo_files`: whether the file tools may read files on kernel file systems
    /// (procfs, sysfs, debugfs, ...), some of which block a reader forever (default `false`).
    pub pseudo_files: bool,
    /// `[prompt] guidelines`: the closing lines of the prompt's guidelines.
    pub guidelines: Vec<String>,
    /// `[sandbox]`: how far commands and file writes are confined (absent: the defaults of
    /// [`SandboxSettings`], workspace-write with the network on).
    pub sandbox: SandboxSettings,
    /// `[env]`: which machine the tools work on (absent: this one).
    pub env: EnvSettings,
    /// `[mcp] max_message_bytes`: the largest message an MCP client may send, over stdio
    /// and HTTP alike, and a mounted stdio server may send (`None`: the default,
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]).
    pub mcp_max_message_bytes: Option<usize>,
    /// `[mcp] max_sessions`: the most Streamable HTTP sessions kept at once (`None`: the
    /// server's default, 4096), lowered to what the soft limit on open files holds.
    pub mcp_max_sessions: Option<usize>,
    /// `[mcp] when_full`: `true` for `"end_idle"` (a new session past `max_sessions` ends
    /// the least recently used idle one), `false` for `"refuse"` (the default: it is
    /// refused, and no session kept breaks).
    pub mcp_end_idle_when_full: bool,
    /// `[mcp] max_connections`, `max_connections_per_client` and `request_timeout_secs`:
    /// the Streamable HTTP server's bounds on connections (`None`: its defaults).
    pub mcp_connections: McpConnections,
    /// `[mcp] trusted_proxies`: the addresses of the proxies in front of the Streamable
    /// HTTP server, whose `Forwarded` / `X-Forwarded-For` header names the client that the
    /// per-client bound applies to (empty: none; every address is its own client).
    pub mcp_trusted_proxies: Vec<std::net::IpAddr>,
    /// `[mcp] task_after_ms`: a call of a 2026-07-28 request that declares the tasks
    /// extension and runs longer than this is answered with a task to poll (`None`: the
    /// server's default, 10 s).
    pub mcp_task_after: Option<std::time::Duration>,
    /// `[mcp.servers.<name>]`: other MCP servers whose tools join as `<name>__<tool>`, in
    /// file order.
    pub servers: Vec<ServerSettings>,
    /// Tools declared in the file (`[tool.<name>]` with `command` or `script`), in file
    /// order, as [`crate::declared::spec`] reads them; [`crate::declared`] makes them tools.
    pub declared: Vec<DeclaredTool>,
    /// `[policy]`: which calls are allowed, asked about or denied (absent: all allowed).
    pub policy: crate::policy::Policy,
    /// The file it came from, or [`DEFAULT_ORIGIN`](super::DEFAULT_ORIGIN).
    pub origin: String,
}

/// One `[tool.<name>]` section.
#[derive(Clone, Default)]
pub struct ToolSettings {
    /// The execution mode override.
    pub mode: Option<ExecutionMode>,
    /// The tool's typed configuration, loaded by its `ToolConfigSpec` (`None` when the
    /// section has no keys besides `mode`: the tool's default applies).
    pub config: Option<Arc<dyn Any + Send + Sync>>,
    /// The section's keys besides `mode`, as JSON (for docs and debugging).
    pub raw: serde_json::Map<String, Json>,
}

impl std::fmt::Debug for ToolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSettings")
            .field("mode", &self.mode)
            .field("raw", &self.raw)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("active", &self.active)
            .field("execution", &self.execution)
            .field("max_concurrency", &self.max_concurrency)
            .field("timeout", &self.timeout)
            .field("shapes", &self.shapes)
            .field("tools", &self.tools)
            .field("allowed_roots", &self.allowed_roots)
            .field("pseudo_files", &self.pseudo_files)
            .field("guidelines", &self.guidelines)
            .field("sandbox", &self.sandbox)
            .field("env", &self.env)
            .field("mcp_max_message_bytes", &self.mcp_max_message_bytes)
            .field("mcp_max_sessions", &self.mcp_max_sessions)
            .field("mcp_end_idle_when_full", &self.mcp_end_idle_when_full)
            .field("mcp_connections", &self.mcp_connections)
            .field("mcp_trusted_proxies", &self.mcp_trusted_proxies)
            .field("mcp_task_after", &self.mcp_task_after)
            .field("servers", &self.servers)
            .field("declared", &self.declared)
            .field("policy", &self.policy)
            .field("origin", &self.origin)
            .finish()
    }
}

impl Config {
    /// The settings of a tool's `[tool.<name>]` section, if it has one.
    pub fn tool(&self, name: &str) -> Option<&ToolSettings> {
        self.tools.get(name)
    }

    /// The `[mcp.servers.<name>]` entry called `name`.
    pub fn server(&self, name: &str) -> Option<&ServerSettings> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// `[mcp]`'s bounds on the Streamable HTTP server's connections; `None` keeps the server's
/// default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpConnections {
    /// `max_connections`: the most connections open at once.
    pub max_connections: Option<usize>,
    /// `max_connections_per_client`: the most from one client address.
    pub max_per_client: Option<usize>,
    /// `request_timeout_secs`: the time to send a request's head and body, and the idle
    /// time of a kept-alive connection.
    pub request_timeout: Option<std::time::Duration>,
}

/// The largest MCP message (`[mcp] max_message_bytes`) when none is set: 16 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;
