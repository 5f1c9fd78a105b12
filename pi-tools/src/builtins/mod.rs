//! The seven built-in coding tools (read, bash, edit, write, grep, find, ls) and the helpers
//! they share (truncation, argument previews). grep and find search with [`crate::search`].
//!
//! Each tool is an ordinary `async fn(&ToolContext, Args) -> Result<ToolOutput<Details>, ToolError>`
//! written against the public API (the execution environment from [`crate::env`], the
//! truncation helpers in [`truncate`]), so it doubles as an example of writing a tool.

pub mod bash;
pub mod edit;
pub mod find;
pub mod grep;
pub mod ls;
pub mod preview;
pub mod read;
pub mod truncate;
pub mod write;

/// An error's text as the end of a sentence: exactly one final period.
fn sentence(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    format!("{}.", text.trim_end().trim_end_matches('.'))
}
