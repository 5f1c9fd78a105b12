//! The system prompt's "Available tools" and "Guidelines" sections, assembled from the
//! active tools.
//!
//! ```
//! # use std::sync::Arc;
//! # use pi_tools::ToolDefinition;
//! let tools: Vec<Arc<dyn ToolDefinition>> = Vec::new();
//! let sections = pi_tools::prompt::PromptSections::new(&tools, &["Be concise.".to_owned()]);
//! assert_eq!(sections.to_string(), "Available tools:\n(none)\n\nGuidelines:\n- Be concise.");
//! ```

use std::sync::Arc;

use crate::tool::{ToolDefinition, ToolRole};

/// The two prompt sections for a set of active tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSections {
    /// `- <name>: <snippet>` per active tool with a snippet, in active order; `(none)` when
    /// no tool has one.
    pub available_tools: Vec<String>,
    /// The de-duplicated guidelines, without bullets.
    pub guidelines: Vec<String>,
}

impl PromptSections {
    /// Builds both sections from the active tools (in active order) and the closing
    /// guidelines of the configuration.
    pub fn new(active: &[Arc<dyn ToolDefinition>], closing: &[String]) -> Self {
        PromptSections {
            available_tools: available_tools(active),
            guidelines: guidelines(active, closing),
        }
    }
}

impl PromptSections {
    /// Adds the sandbox's limits (a sentence such as
    /// [`ExecutionEnv::confinement`](crate::env::ExecutionEnv::confinement) gives) as a
    /// guideline right after the exploration rule, when a shell ([`ToolRole::Shell`]) is
    /// active: the model should know where its commands may write before one fails.
    pub fn with_sandbox_note(
        mut self,
        active: &[Arc<dyn ToolDefinition>],
        note: Option<&str>,
    ) -> Self {
        let Some(note) = note.map(str::trim).filter(|n| !n.is_empty()) else {
            return self;
        };
        if !active.iter().any(|t| t.spec().role == ToolRole::Shell)
            || self.guidelines.iter().any(|g| g == note)
        {
            return self;
        }
        let at = usize::from(exploration_rule(active).is_some()).min(self.guidelines.len());
        self.guidelines.insert(at, note.to_owned());
        self
    }
}

impl std::fmt::Display for PromptSections {
    /// `Available tools:` with one line per tool, a blank line, then `Guidelines:` with one
    /// `- ` bullet per guideline (the heading alone when there are none).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Available tools:")?;
        for line in &self.available_tools {
            write!(f, "\n{line}")?;
        }
        f.write_str("\n\nGuidelines:")?;
        for line in &self.guidelines {
            write!(f, "\n- {line}")?;
        }
        Ok(())
    }
}

/// The "Available tools" lines: `- <name>: <snippet>` for each tool with a (non-blank)
/// snippet, collapsed to one line; `["(none)"]` when there is none.
pub fn available_tools(active: &[Arc<dyn ToolDefinition>]) -> Vec<String> {
    let lines: Vec<String> = active
        .iter()
        .filter_map(|tool| {
            let snippet = one_line(tool.spec().snippet.as_deref()?);
            (!snippet.is_empty()).then(|| format!("- {}: {snippet}", tool.spec().name))
        })
        .collect();
    if lines.is_empty() {
        vec!["(none)".to_owned()]
    } else {
        lines
    }
}

/// The "Guidelines" list: the exploration rule, each active tool's guidelines in active
/// order, then the closing guidelines; trimmed, empties dropped, and each exact string kept
/// only the first time it appears.
///
/// The exploration rule applies when a tool with the [`ToolRole::Shell`] role (bash) is
/// active: without a [`ToolRole::Explore`] tool (grep, find, ls, or any tool declaring
/// `role = explore`) it says to use the shell for file operations; with some, it says to
/// prefer those, named in active order.
pub fn guidelines(active: &[Arc<dyn ToolDefinition>], closing: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |line: &str| {
        let line = line.trim();
        if !line.is_empty() && !out.iter().any(|l| l == line) {
            out.push(line.to_owned());
        }
    };
    if let Some(rule) = exploration_rule(active) {
        add(&rule);
    }
    for tool in active {
        for line in tool.spec().guidelines.clone() {
            add(&line);
        }
    }
    for line in closing {
        add(line);
    }
    out
}

fn exploration_rule(active: &[Arc<dyn ToolDefinition>]) -> Option<String> {
    let shell = active
        .iter()
        .find(|t| t.spec().role == ToolRole::Shell)?
        .spec()
        .name
        .as_str();
    let explorers: Vec<&str> = active
        .iter()
        .filter(|t| t.spec().role == ToolRole::Explore)
        .map(|t| t.spec().name.as_str())
        .collect();
    Some(match explorers.as_slice() {
        [] => format!(
            "Use {shell} for file operations such as listing directories, finding files and \
             searching their contents (ls, find, rg)."
        ),
        [one] => format!(
            "Prefer the {one} tool over {shell} for exploring files: it is faster and respects \
             .gitignore."
        ),
        [init @ .., last] => format!(
            "Prefer the {} and {last} tools over {shell} for exploring files: they are faster \
             and respect .gitignore.",
            init.join(", ")
        ),
    })
}

/// Collapses all whitespace runs (newlines included) to single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
