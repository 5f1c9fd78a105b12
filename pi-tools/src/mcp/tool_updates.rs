//! What a running server lists and calls, replaceable while it runs: `pi-tools mcp` gives
//! the new tools of a mounted server whose list changed, or of its configuration file
//! whose declared tools changed ([`ToolListUpdates`]), every
//! session lists and calls them from its next request on, and each 2025-11-25 session's
//! client is sent `notifications/tools/list_changed` (see `server.rs`), as is every open
//! 2026-07-28 `subscriptions/listen` that asked for it (see `listen`). A request of the
//! stateless era reads the list anew each time (its `ttlMs` is 0).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rmcp::model::Tool;
use tokio::sync::watch;

use super::error::McpError;
use super::task_support::TaskMode;
use super::tools::{McpPrompt, McpTools};
use crate::core::ToolSet;

/// The part of what a server serves that changes with its tools: the tools (each validator
/// compiled once for every session), their listing, how their calls may become tasks, the
/// tools with an argument mirrored into a header, and the system prompt that lists them.
pub(crate) struct Listed {
    pub(crate) tools: ToolSet,
    pub(crate) listing: Vec<Tool>,
    /// How each tool's calls may become tasks, by name.
    pub(crate) task_modes: HashMap<String, TaskMode>,
    /// The tools with an argument mirrored into an `Mcp-Param-*` header, by name.
    pub(crate) header_tools: HashMap<String, Tool>,
    pub(crate) prompt: Option<McpPrompt>,
}

impl Listed {
    /// What `tools` lists and calls, or the first tool that cannot be listed.
    pub(crate) fn new(tools: &McpTools) -> Result<Listed, McpError> {
        let listing = tools.listing()?;
        Ok(Listed {
            header_tools: super::param_headers::header_tools(&listing),
            listing,
            tools: ToolSet::new(tools.agent_tools()),
            task_modes: tools.task_modes(),
            prompt: tools.prompt().cloned(),
        })
    }
}

/// Replaces the tools of a server while it runs: made before the server, given to it with
/// [`McpTools::with_updates`], then each [`ToolListUpdates::replace`] takes effect from
/// every session's next request, and the 2025-11-25 sessions' clients (and each open
/// 2026-07-28 `subscriptions/listen` asking for it) are sent
/// `notifications/tools/list_changed`. `pi-tools mcp` does this when a mounted server's tool
/// list changes, and when its configuration file's declared tools do.
///
/// ```no_run
/// # fn demo(first: pi_tools::mcp::McpTools, next: pi_tools::mcp::McpTools) -> Result<(), pi_tools::mcp::McpError> {
/// use pi_tools::mcp::ToolListUpdates;
///
/// let updates = ToolListUpdates::new();
/// let served = first.with_updates(updates.clone());
/// // … serve `served` (serve_stdio, serve_http) in a task of its own …
/// updates.replace(&next)?; // its sessions list and call `next`'s tools from now on
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ToolListUpdates(Arc<Live>);

/// What the server reads its tools from, and the count of replacements its sessions watch.
pub(crate) struct Live {
    current: RwLock<Option<Arc<Listed>>>,
    replaced: watch::Sender<u64>,
}

impl Default for ToolListUpdates {
    fn default() -> Self {
        ToolListUpdates::new()
    }
}

impl std::fmt::Debug for ToolListUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolListUpdates")
            .field("replaced", &*self.0.replaced.borrow())
            .finish()
    }
}

impl ToolListUpdates {
    /// A handle for a server not made yet.
    pub fn new() -> Self {
        ToolListUpdates(Arc::new(Live {
            current: RwLock::new(None),
            replaced: watch::Sender::new(0),
        }))
    }

    /// Serves the tools and the prompt of `tools` from now on (the rest of what the server
    /// serves, its instructions, resources and limits, stays as it started). Returns whether
    /// the listing changed: only then are the sessions' clients told.
    ///
    /// # Errors
    ///
    /// [`McpError::SchemaNotAnObject`] or [`McpError::ListingRejected`] when a tool of `tools`
    /// cannot be listed; what was served stays.
    pub fn replace(&self, tools: &McpTools) -> Result<bool, McpError> {
        let next = Listed::new(tools)?;
        let changed = {
            let mut current = self.0.current.write().unwrap_or_else(|e| e.into_inner());
            let changed = current
                .as_ref()
                .is_none_or(|c| c.listing != next.listing || c.prompt != next.prompt);
            *current = Some(Arc::new(next));
            changed
        };
        if changed {
            self.0.replaced.send_modify(|n| *n += 1);
        }
        Ok(changed)
    }

    pub(crate) fn live(&self) -> Arc<Live> {
        Arc::clone(&self.0)
    }
}

impl Live {
    /// What is served now, `first` until a replacement came.
    pub(crate) fn current_or(&self, first: Listed) -> Arc<Listed> {
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        Arc::clone(current.get_or_insert_with(|| Arc::new(first)))
    }

    /// What is served now.
    pub(crate) fn current(&self) -> Option<Arc<Listed>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Changes at each replacement that changed the listing.
    pub(crate) fn replacements(&self) -> watch::Receiver<u64> {
        self.replaced.subscribe()
    }
}
