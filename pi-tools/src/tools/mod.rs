//! The built-in coding tools and the helpers they share.
//!
//! Each tool is an ordinary `async fn(&ToolContext, Args) -> Result<ToolOutput<Details>, ToolError>`
//! written against the public API (the execution environment from [`crate::env`], the
//! truncation helpers in [`truncate`]), so it doubles as an example of writing a tool.

pub mod bash;
pub mod bash_output;
pub mod find;
pub mod grep;
pub mod ls;
pub mod preview;
mod search;
pub mod truncate;
mod walk;
