//! The API every tool is written against: the rich [`ToolDefinition`] face and its projection
//! onto the kernel's lean `AgentTool` ([`wrap`], [`from_agent_tool`]), a definition with words
//! added to its description ([`extend_description`]), the inventory
//! [`Registry`], typed tool output, styled rendering, the canonical parameter schema, and
//! `__private`, the only road from code the `#[tool]` macro generates into the library.
//!
//! Imports only the kernel ([`crate::core`]).

mod definition;
mod extend;
mod output;
#[doc(hidden)]
pub mod private;
mod registry;
pub mod render;
pub mod schema;

pub use definition::{
    SourceLocation, ToolConfigSpec, ToolDefinition, ToolRenderer, ToolRole, from_agent_tool, wrap,
    wrap_with_mode,
};
pub use extend::extend_description;
pub use output::{IntoToolResult, Json, ToolOutput};
pub use registry::{Registry, RegistryError};
