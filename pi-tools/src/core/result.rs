//! What a tool returns.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::ContentBlock;
use super::link::ResourceLink;

/// The result of one tool execution (or a partial result sent as a progress update).
///
/// `content` goes back to the model; `details` is structured data for user interfaces and is
/// never shown to the model; `structured_content` is the typed value of a tool that declares
/// an output schema (MCP's `structuredContent`), for programs: the model reads its text
/// rendering in `content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// What the model sees.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Structured data for user interfaces; `Null` when there is none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// The tool's typed result, valid against its output schema; `None` for a tool that
    /// returns content only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Files the result points at (bash's whole output when only its tail fits, the rest
    /// of a file a read cut short): MCP gives them as `resource_link` content, which a
    /// client can fetch with `resources/read`; other fronts leave them out, since the text
    /// names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<ResourceLink>,
    /// Model usage, for tools that call a model themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Registered tools this result asks to activate for the next batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added_tool_names: Vec<String>,
    /// A hint that the agent loop may stop after this batch (it stops only if every result
    /// of the batch says so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminate: bool,
}

impl ToolResult {
    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![ContentBlock::text(text)],
            ..ToolResult::default()
        }
    }

    /// Replaces the details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    /// Sets the structured result (the value the tool's output schema describes).
    pub fn with_structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Adds a file the result points at.
    pub fn with_link(mut self, link: ResourceLink) -> Self {
        self.links.push(link);
        self
    }

    /// The result as text, its blocks joined by newlines: text blocks as they are, an
    /// embedded text resource as `[resource <uri>]` and its text, audio and a binary
    /// resource as a line saying what they are (`[audio, audio/wav, 12 KB]`). Images are
    /// left out: a tool that returns one says what it is in its text.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            let text = match block {
                ContentBlock::Image { .. } => continue,
                _ => match block.readable_text() {
                    Some(text) => text,
                    None => format!("[{}]", block.summary()).into(),
                },
            };
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&text);
        }
        out
    }
}

/// Token usage and cost of a model call made by a tool (same shape as the original's `Usage`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from a prompt cache.
    pub cache_read: u64,
    /// Tokens written to a prompt cache.
    pub cache_write: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Cost, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<UsageCost>,
}

/// Cost breakdown of a [`Usage`], in dollars.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UsageCost {
    /// Cost of input tokens.
    pub input: f64,
    /// Cost of output tokens.
    pub output: f64,
    /// Cost of cache reads.
    pub cache_read: f64,
    /// Cost of cache writes.
    pub cache_write: f64,
    /// Total cost.
    pub total: f64,
}
