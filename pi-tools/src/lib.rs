//! pi-tools: the tool layer of an LLM agent.
//!
//! Declare a tool as an annotated `async fn`; run a model's tool calls through
//! prepare → execute → finalize, in parallel by default, with per-file write serialisation.
//!
//! The kernel ([`core`]) knows nothing of the product layer; everything else (definitions,
//! registry, built-in tools, prompt, schemas, CLI) is built on its public API.

// Generated code names `::pi_tools`, which must resolve inside this crate too (the
// built-in tools are ordinary `#[tool]` functions).
extern crate self as pi_tools;

pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
pub mod config;
pub mod core;
pub mod definition;
pub mod dialect;
pub mod env;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod output;
pub mod prompt;
pub mod registry;
pub mod render;
pub mod schema;
pub mod toolbox;
pub mod tools;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use crate::core::*;
pub use crate::definition::{
    SourceLocation, ToolConfigSpec, ToolDefinition, ToolRenderer, from_agent_tool, wrap,
    wrap_with_mode,
};
pub use crate::output::{IntoToolResult, Json, ToolOutput};
pub use crate::registry::{Registry, RegistryError};
pub use pi_tools_derive::tool;
