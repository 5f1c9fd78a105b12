//! The built-in coding tools and the helpers they share.
//!
//! Each tool is an ordinary `async fn(&ToolContext, Args) -> Result<ToolOutput<Details>, ToolError>`
//! written against the public API (the execution environment from [`crate::env`], the
//! truncation helpers in [`truncate`]), so it doubles as an example of writing a tool.

pub mod bash;
pub mod bash_output;
pub mod edit;
mod edit_diff;
mod edit_match;
pub mod find;
pub mod grep;
mod ignore_rules;
mod listing;
pub mod ls;
mod path_glob;
pub mod preview;
pub mod read;
pub mod read_image;
mod search;
pub mod truncate;
mod walk;
pub mod write;

/// An error's text as the end of a sentence: exactly one final period.
fn sentence(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    format!("{}.", text.trim_end().trim_end_matches('.'))
}
