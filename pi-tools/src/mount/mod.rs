//! Other MCP servers' tools as members of the toolbox.
//!
//! A server named in `[mcp.servers.<name>]` (a command pi-tools starts, speaking MCP on
//! standard input and output, or a Streamable HTTP `url`) brings its tools as
//! `<name>__<tool>`. They take part in everything our own tools do: the catalog, the
//! prompt (a snippet from the description, a guideline from the server's instructions),
//! provider schemas, the runner's validation, hooks, timeouts and cancellation (forwarded
//! as `notifications/cancelled`), progress (the server's notifications become updates) and
//! `pi-tools mcp`, which serves them beside the built-in tools (calls of different
//! sessions take turns on a server, so its progress reaches only the session it works for).
//!
//! A server that sends `notifications/tools/list_changed` has its tools listed again:
//! [`Mounts::changes`] ticks, [`Mounts::definitions`] gives the new tools, and a call of a
//! tool it no longer lists fails saying so (`pi-tools mcp` serves the new list).
//!
//! A tool whose `readOnlyHint` is not true runs alone among its server's calls (unless the
//! entry says `parallel = true`); other calls of the batch still run beside it.
//!
//! A stdio server starts when its tools are first needed (`eager = true`: with the
//! session), in a process group of its own, under the bash sandbox with `sandbox = true`.
//! When it dies it is started once more on the next call; when it cannot be started its
//! tools fail with the reason and its last standard error lines. [`Mounts::end`] ends them
//! all.
//!
//! In code, [`McpServerTools::connect`] mounts one server:
//!
//! ```no_run
//! # async fn demo() -> Result<(), pi_tools::mount::MountError> {
//! use pi_tools::config::ServerSettings;
//! use pi_tools::mount::McpServerTools;
//! use pi_tools::ToolSet;
//!
//! let settings = ServerSettings::stdio(
//!     "everything",
//!     vec!["npx".into(), "-y".into(), "@modelcontextprotocol/server-everything".into()],
//! );
//! let server = McpServerTools::connect(settings).await?;
//! let mut tools = ToolSet::new([]);
//! server.add_to(&mut tools); // everything__echo, everything__get-sum, …
//! // … run batches with `tools` …
//! server.end().await;
//! # Ok(()) }
//! ```

mod bounded_http;
mod client;
mod content;
mod http;
mod lines;
mod mounts;
mod options;
mod process;
mod resources;
mod server;
mod sessions;
mod tls;
mod tool;

use std::path::Path;
use std::sync::Arc;

pub use mounts::{Mounts, ServerReport};
pub use options::MountOptions;
pub use resources::{MountedContent, MountedResource};
pub use server::ServerState;

use crate::config::ServerSettings;
use crate::core::{AgentTool, ToolSet};
use crate::tool::{ToolDefinition, wrap};

/// A server could not be mounted.
///
/// Its `Debug` is its `Display`, so `main` returning it with `?` prints the sentence.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MountError(pub String);

// Debug is the sentence (as `ConfigError`'s), so `main` returning it with `?` prints that.
impl std::fmt::Debug for MountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// One mounted server and its tools, for a toolbox built in code.
pub struct McpServerTools {
    mounts: Mounts,
    tools: Vec<Arc<dyn ToolDefinition>>,
}

impl McpServerTools {
    /// Starts (or connects to) the server `settings` describe, in the current directory,
    /// and lists its tools (those its `tools` allow-list lets in).
    pub async fn connect(settings: ServerSettings) -> Result<Self, MountError> {
        let cwd = std::env::current_dir().map_err(|e| MountError(e.to_string()))?;
        Self::connect_in(settings, &cwd, &MountOptions::default()).await
    }

    /// [`connect`](Self::connect), with a stdio server started in `cwd` (under
    /// `options.sandbox` when `settings.sandbox` is set).
    pub async fn connect_in(
        settings: ServerSettings,
        cwd: &Path,
        options: &MountOptions,
    ) -> Result<Self, MountError> {
        let name = settings.name.clone();
        let mounts =
            Mounts::new(std::slice::from_ref(&settings), options, cwd).map_err(MountError)?;
        let tools = mounts
            .definitions(|_| true, &[])
            .await
            .map_err(MountError)?;
        if tools.is_empty()
            && let Some(why) = mounts.unknown_tool_message(&format!("{name}__"))
        {
            return Err(MountError(why));
        }
        Ok(McpServerTools { mounts, tools })
    }

    /// Its tools, as definitions (for a [`Toolbox`](crate::toolbox::Toolbox) or the catalog).
    pub fn definitions(&self) -> &[Arc<dyn ToolDefinition>] {
        &self.tools
    }

    /// One warning per schema of its tools that contradicts itself (a `type: boolean` with
    /// string `enum` values, a `default` outside its `enum`), naming the tool and the path.
    /// Such tools stay mounted; the mount also logs these warnings.
    pub fn warnings(&self) -> Vec<String> {
        crate::tool::contradictions::warnings(self.tools.iter().map(|t| t.as_ref()))
    }

    /// Its tools as the runner sees them.
    pub fn agent_tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.tools.iter().map(|t| wrap(t.clone(), None)).collect()
    }

    /// Adds its tools to `set`.
    pub fn add_to(&self, set: &mut ToolSet) {
        for tool in self.agent_tools() {
            set.push(tool);
        }
    }

    /// Where the server is in its life.
    pub async fn state(&self) -> ServerState {
        let report = self.mounts.report().await;
        report
            .into_iter()
            .next()
            .map_or(ServerState::Ended, |r| r.state)
    }

    /// Ends the server; its tools fail from then on.
    pub async fn end(&self) {
        self.mounts.end().await;
    }
}
