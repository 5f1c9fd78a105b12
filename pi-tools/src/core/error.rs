//! The error a tool (or a hook) returns: text for the model, optional details for a UI.

use serde_json::Value;

use super::content::ContentBlock;
use super::link::ResourceLink;
use super::result::ToolResult;

/// A tool failure. It becomes an `is_error: true` result whose text is the message, so write
/// it as a complete sentence that tells the model what to do next.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    message: String,
    details: Value,
    links: Vec<ResourceLink>,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            details: Value::Null,
            links: Vec::new(),
        }
    }

    /// Attaches structured details (kept in the error result's `details`).
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Adds a file the error points at (a failed command's whole output, say; see
    /// [`ToolResult::links`]).
    pub fn with_link(mut self, link: ResourceLink) -> Self {
        self.links.push(link);
        self
    }

    /// The files the error points at.
    pub fn links(&self) -> &[ResourceLink] {
        &self.links
    }

    /// The message the model will read.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The structured details, `Null` when none.
    pub fn details(&self) -> &Value {
        &self.details
    }

    /// The error result this error becomes.
    pub fn into_result(self) -> ToolResult {
        ToolResult {
            content: vec![ContentBlock::text(self.message)],
            details: self.details,
            links: self.links,
            ..ToolResult::default()
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> Self {
        ToolError::new(err.to_string())
    }
}
