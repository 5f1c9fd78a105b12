//! pi-tools: the tool layer of an LLM agent.
//!
//! Declare a tool as an annotated `async fn`; run a model's tool calls through
//! prepare → execute → finalize, in parallel by default, with per-file write serialisation.
//!
//! The kernel ([`core`]) knows nothing of the product layer; everything else (definitions,
//! registry, built-in tools, prompt, schemas, CLI) is built on its public API.

pub mod core;
pub mod definition;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod output;
pub mod render;

pub use crate::core::*;
pub use crate::definition::{
    SourceLocation, ToolConfigSpec, ToolDefinition, from_agent_tool, wrap,
};
pub use crate::output::{IntoToolResult, Json, ToolOutput};
