//! pi-tools: the tool layer of an LLM agent.
//!
//! Declare a tool as an annotated `async fn`; run a model's tool calls through
//! prepare → execute → finalize, in parallel by default, with per-file write serialisation.
//! Seven coding tools (read, bash, edit, write, grep, find, ls) are built in, written with the
//! same macro. The [`guide`] has a page for each common task.
//!
//! # Quick start
//!
//! A tool is an annotated `async fn`: its parameters are the arguments (doc comments become
//! their descriptions), its doc comment the description.
//!
//! ```
//! use pi_tools::{ToolContext, ToolError, ToolOutput, tool};
//!
//! /// Count the words of a text.
//! #[tool(snippet = "Count words", guidelines = ["Use word_count for long texts."], read_only)]
//! async fn word_count(
//!     ctx: &ToolContext,
//!     /// The text to count.
//!     text: String,
//!     /// Count only words longer than this many characters.
//!     min_len: Option<usize>,
//! ) -> Result<ToolOutput, ToolError> {
//!     ctx.update(pi_tools::ToolResult::text("counting…"));
//!     let n = text.split_whitespace().filter(|w| w.len() > min_len.unwrap_or(0)).count();
//!     Ok(ToolOutput::text(n.to_string()))
//! }
//!
//! // The macro generates `WordCountTool`; the registry finds it without any central list.
//! # use std::sync::Arc;
//! # use pi_tools::{CancellationToken, NoopSink, RunnerConfig, ToolCall, ToolSet, execute_tool_calls, wrap};
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let tools = ToolSet::new([wrap(Arc::new(WordCountTool), None)]);
//! let calls = [ToolCall::new("1", "word_count", serde_json::json!({"text": "a bb ccc", "min_len": 1}))];
//! let outcome = execute_tool_calls(
//!     &tools,
//!     &calls,
//!     &RunnerConfig::default(),
//!     &CancellationToken::new(),
//!     &NoopSink,
//! )
//! .await;
//! assert_eq!(outcome.messages[0].content[0].as_text(), Some("2"));
//! # });
//! ```
//!
//! A binary of your own gets the whole `pi-tools` command line (run, catalog, prompt,
//! schema, check, mcp, completions, man) with your tools included; `main` must return the
//! exit code:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     pi_tools::cli::main()
//! }
//! ```
//!
//! # Layers
//!
//! The kernel ([`core`]) knows nothing of the product layer; everything else (definitions,
//! registry, built-in tools, prompt, schemas, CLI) is built on its public API.
//!
//! Cargo features follow the layers: `builtins` (the seven tools and the search engine they
//! share, with ripgrep's crates and image decoding), `process` (`LocalEnv` runs processes;
//! part of `builtins`), `mcp` (the MCP server), `mount` (other MCP servers' tools in the
//! toolbox, [`mount`]), `cli` (the binary; implies the others but `ssh`) and `ssh` (the SSH
//! environment); `cli` and `ssh` are the default. With `default-features = false` a library
//! gets the kernel, the tool API, the `#[tool]` macro, config, prompt, dialects and catalog.
//! The documentation marks each item that needs a feature.
//!
// A link to an item behind a feature goes to the item when it is built, else to its page on
// docs.rs (which builds every feature).
#![cfg_attr(feature = "mount", doc = "[`mount`]: crate::mount")]
#![cfg_attr(
    not(feature = "mount"),
    doc = "[`mount`]: https://docs.rs/pi-tools/latest/pi_tools/mount/"
)]
// docs.rs builds with `--cfg docsrs` on nightly: each item behind a feature gets a badge
// naming it.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Generated code names `::pi_tools`, which must resolve inside this crate too (the
// built-in tools are ordinary `#[tool]` functions).
extern crate self as pi_tools;

#[cfg(feature = "builtins")]
pub mod builtins;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "process")]
pub mod command;
pub mod config;
pub mod core;
pub mod declared;
pub mod dialect;
pub mod env;
pub mod guide;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "mount")]
pub mod mount;
pub mod policy;
pub mod prompt;
pub mod provider;
#[cfg(feature = "builtins")]
pub mod search;
pub mod session;
mod toml_read;
pub mod tool;
pub mod toolbox;
#[cfg(feature = "process")]
pub mod truncate;

#[doc(hidden)]
pub use crate::tool::private as __private;

// The crate's README (the crate page) is a doc test, so its agent compiles and runs.
#[cfg(all(doctest, feature = "builtins"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use crate::core::*;
pub use crate::tool::{
    IntoToolResult, Json, Registry, RegistryError, SourceLocation, ToolConfigSpec, ToolDefinition,
    ToolOutput, ToolRenderer, ToolSpec, from_agent_tool, wrap, wrap_with_mode,
};
pub use crate::tool::{ToolOrigin, ToolRole};
pub use pi_tools_derive::tool;

/// The cancellation token every `run`, `execute_tool_calls` and `ToolContext::new` takes, from
/// `tokio-util`: re-exported so a program needs no dependency of its own for it.
pub use tokio_util::sync::CancellationToken;

/// schemars 1, the JSON Schema derive a parameter type of one's own needs
/// (`#[derive(Deserialize, JsonSchema)]`). Re-exported for the version match: a type that
/// derives schemars 0.8's `JsonSchema` does not implement this one. Depend on `schemars = "1"`
/// to derive it, or write `#[schemars(crate = "pi_tools::schemars")]` beside
/// `#[derive(pi_tools::schemars::JsonSchema)]`.
pub use schemars;
/// serde, as the generated argument structs use it.
pub use serde;
/// serde_json, whose `Value` is in the public API (arguments, schemas, results).
pub use serde_json;
