//! The set of tools a batch may call: lookup by name, and each tool's compiled argument
//! validator, kept for every later call and batch.

use std::sync::{Arc, OnceLock};

use foldhash::HashMap;

use super::tool::{AgentTool, ExecutionMode};
use super::validate::ArgumentValidator;

/// The tools a batch may call, each with its compiled argument validator (compiled on first
/// use, then reused for every later call and batch).
///
/// Cloning is cheap (the set is shared): a batch keeps a clone for the nested calls its tools
/// make ([`ToolContext::call_tool`](super::ToolContext::call_tool)).
#[derive(Clone)]
pub struct ToolSet {
    shared: Arc<Shared>,
}

struct Shared {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

pub(super) struct Entry {
    pub(super) tool: Arc<dyn AgentTool>,
    validator: OnceLock<Result<ArgumentValidator, String>>,
}

impl ToolSet {
    /// A set of tools. When two share a name, the first wins (as lookups do in the original).
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn AgentTool>>) -> Self {
        let mut set = ToolSet {
            shared: Arc::new(Shared {
                entries: Vec::new(),
                by_name: HashMap::default(),
            }),
        };
        for tool in tools {
            set.push(tool);
        }
        set
    }

    /// Adds a tool (ignored for lookups if an earlier tool has the same name).
    pub fn push(&mut self, tool: Arc<dyn AgentTool>) {
        // A set shared with a batch still running is copied (its validators compile again).
        let shared = Arc::make_mut(&mut self.shared);
        let index = shared.entries.len();
        shared
            .by_name
            .entry(tool.name().to_owned())
            .or_insert(index);
        shared.entries.push(Entry {
            tool,
            validator: OnceLock::new(),
        });
    }

    /// The tool called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.entry(name).map(|e| &e.tool)
    }

    /// Every tool, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn AgentTool>> {
        self.shared.entries.iter().map(|e| &e.tool)
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.shared.entries.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.shared.entries.is_empty()
    }

    /// Whether a call of `name` must run alone: the configured `execution` mode is
    /// sequential, or the tool itself is. Unknown tools never execute, so they need not.
    pub fn must_run_alone(&self, name: &str, execution: ExecutionMode) -> bool {
        execution == ExecutionMode::Sequential
            || self
                .get(name)
                .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
    }

    pub(super) fn entry(&self, name: &str) -> Option<&Entry> {
        self.shared
            .by_name
            .get(name)
            .map(|&i| &self.shared.entries[i])
    }
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.shared.entries.iter().map(|e| e.tool.name()))
            .finish()
    }
}

impl FromIterator<Arc<dyn AgentTool>> for ToolSet {
    fn from_iter<I: IntoIterator<Item = Arc<dyn AgentTool>>>(iter: I) -> Self {
        ToolSet::new(iter)
    }
}

impl Clone for Shared {
    fn clone(&self) -> Self {
        Shared {
            entries: self
                .entries
                .iter()
                .map(|e| Entry {
                    tool: Arc::clone(&e.tool),
                    validator: OnceLock::new(),
                })
                .collect(),
            by_name: self.by_name.clone(),
        }
    }
}

impl Entry {
    pub(super) fn validator(&self) -> &Result<ArgumentValidator, String> {
        self.validator.get_or_init(|| {
            ArgumentValidator::new(self.tool.parameters())
                .map(|v| v.rejecting_unknown_properties(!self.tool.accepts_unknown_properties()))
        })
    }
}
