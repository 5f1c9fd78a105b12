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
pub mod ls;
pub mod preview;
pub mod read;
pub mod read_image;
mod search;
pub mod truncate;
mod walk;
pub mod write;

use serde_json::Value;

use crate::core::ToolResult;
use crate::render::{Color, Style, Styled};

/// A string argument for a renderer (empty when missing or not a string).
fn arg_str<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An error's text as the end of a sentence: exactly one final period.
fn sentence(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    format!("{}.", text.trim_end().trim_end_matches('.'))
}

/// An error in red, or the first `max_lines` lines of the text, dimmed, with a count of the
/// rest.
fn error_or_preview(result: &ToolResult, is_error: bool, max_lines: usize) -> Styled {
    let text = result.text_content();
    if is_error {
        return Styled::new().push(text, Style::fg(Color::Red));
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Styled::new().push(
        lines[..lines.len().min(max_lines)].join("\n"),
        Style::fg(Color::Gray),
    );
    if lines.len() > max_lines {
        out.add(
            format!("\n… ({} more lines)", lines.len() - max_lines),
            Style::fg(Color::Gray).dim(),
        );
    }
    out
}
