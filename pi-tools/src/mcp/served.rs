//! What every session of a server shares: the tools served (replaceable while it runs when
//! they may change, see `tool_updates`), the instructions, the server's name, the tasks of
//! long calls, the program's own prompts and resources, and the message bound.

use std::sync::Arc;

use super::error::McpError;
use super::tasks::Tasks;
use super::tool_updates::{Listed, Live};
use super::tools::McpTools;

/// What every session of a server shares: the tools (each validator compiled once for all
/// sessions), their listing and the instructions.
pub(crate) struct Served {
    /// The tools, their listing and the prompt that lists them, as the server started.
    first: Arc<Listed>,
    /// Where replacements of `first` come (see `tool_updates`), when they may.
    live: Option<Arc<Live>>,
    pub(super) instructions: Option<String>,
    /// The name and version of the `initialize` answer.
    pub(super) server_info: (String, String),
    /// The tasks of calls that ran long, reached from any request.
    pub(super) tasks: Arc<Tasks>,
    /// The program's own prompts.
    pub(crate) prompts: Option<Arc<dyn super::prompt_set::McpPrompts>>,
    /// The program's own resources.
    pub(crate) resources: Option<Arc<dyn super::resources::McpResources>>,
    /// The largest message the server takes or sends.
    pub(crate) max_message_bytes: usize,
}

impl Served {
    pub(crate) fn new(tools: &McpTools) -> Result<Arc<Self>, McpError> {
        let first = Listed::new(tools)?;
        let live = tools.updates().map(|updates| updates.live());
        let first = match &live {
            Some(live) => live.current_or(first),
            None => Arc::new(first),
        };
        Ok(Arc::new(Served {
            first,
            live,
            instructions: tools.instructions().map(str::to_owned),
            server_info: {
                let (name, version) = tools.server_info();
                (name.to_owned(), version.to_owned())
            },
            tasks: Arc::default(),
            resources: tools.resources(),
            prompts: tools.prompts(),
            max_message_bytes: tools.max_message_bytes(),
        }))
    }

    /// Whether the tools served may be replaced while the server runs.
    pub(crate) fn may_change(&self) -> bool {
        self.live.is_some()
    }

    /// Changes at each replacement of the tools served; `None` when they cannot change.
    pub(crate) fn replacements(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.live.as_ref().map(|live| live.replacements())
    }

    /// The tools served now, their listing and the prompt that lists them.
    pub(crate) fn listed(&self) -> Arc<Listed> {
        self.live
            .as_ref()
            .and_then(|live| live.current())
            .unwrap_or_else(|| Arc::clone(&self.first))
    }
}
