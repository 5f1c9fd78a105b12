//! The API every tool is written against: a tool's metadata as one value ([`ToolSpec`]), the
//! [`ToolDefinition`] face (the spec and the behaviour) and its projection onto the kernel's
//! lean `AgentTool` ([`wrap`], [`from_agent_tool`]), a definition under another spec
//! ([`with_spec`], [`extend_description`]), the inventory
//! [`Registry`], typed tool output, styled rendering, the canonical parameter schema, and
//! `__private`, the only road from code the `#[tool]` macro generates into the library.
//!
//! Imports only the kernel ([`crate::core`]).

pub mod contradictions;
mod definition;
mod from_fn;
pub mod names;
mod output;
#[doc(hidden)]
pub mod private;
mod registry;
pub mod render;
mod respec;
pub mod schema;
mod spec;

pub use definition::{ToolDefinition, ToolRenderer, from_agent_tool, wrap, wrap_with_mode};
pub use from_fn::from_fn;
pub use output::{IntoToolResult, Json, ToolOutput, typed_result};
pub use registry::{Registry, RegistryError};
pub use respec::{extend_description, with_spec};
pub use spec::{SourceLocation, ToolConfigSpec, ToolOrigin, ToolRole, ToolSpec};
