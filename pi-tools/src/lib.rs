//! pi-tools: the tool layer of an LLM agent.
//!
//! Declare a tool as an annotated `async fn`; run a model's tool calls through
//! prepare → execute → finalize, in parallel by default, with per-file write serialisation.
//!
//! The kernel ([`core`]) knows nothing of the product layer; everything else (definitions,
//! registry, built-in tools, prompt, schemas, CLI) is built on its public API.
//!
//! Cargo features follow the layers: `builtins` (the seven tools and the search engine they
//! share, with ripgrep's crates and image decoding), `process` (`LocalEnv` runs processes;
//! part of `builtins`), `mcp` (the MCP server) and `cli` (the binary; implies the others, and is
//! the default). With `default-features = false` a library gets the kernel, the tool API, the
//! `#[tool]` macro, config, prompt, dialects and catalog.

// Generated code names `::pi_tools`, which must resolve inside this crate too (the
// built-in tools are ordinary `#[tool]` functions).
extern crate self as pi_tools;

#[cfg(feature = "builtins")]
pub mod builtins;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
pub mod config;
pub mod core;
pub mod dialect;
pub mod env;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod prompt;
#[cfg(feature = "builtins")]
mod search;
pub mod tool;
pub mod toolbox;

#[doc(hidden)]
pub use crate::tool::private as __private;

pub use crate::core::*;
pub use crate::tool::{
    IntoToolResult, Json, Registry, RegistryError, SourceLocation, ToolConfigSpec, ToolDefinition,
    ToolOutput, ToolRenderer, from_agent_tool, wrap, wrap_with_mode,
};
pub use pi_tools_derive::tool;
