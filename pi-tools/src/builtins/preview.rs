//! The shared look of grep, find and ls results for a person: a one-line summary, then the
//! first lines of the output.

use serde_json::Value;

use crate::core::ToolResult;
use crate::tool::render::{Color, Style, Styled};

/// Lines of output a result preview shows before `… N more lines`.
pub const PREVIEW_LINES: usize = 10;

/// A summary line (green, or red for an error) followed by the first [`PREVIEW_LINES`]
/// lines of the result's text; notices (`[…]`) are shown in yellow.
pub fn preview(result: &ToolResult, is_error: bool, summary: Option<String>) -> Styled {
    let text = result.text_content();
    let mut out = Styled::new();
    if is_error {
        return out.push(text, Style::fg(Color::Red));
    }
    if let Some(summary) = summary {
        out.add(summary, Style::fg(Color::Green));
        out.add("\n", Style::PLAIN);
    }
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(PREVIEW_LINES) {
        let style = if line.starts_with('[') {
            Style::fg(Color::Yellow)
        } else {
            Style::PLAIN
        };
        out.add(*line, style);
        out.add("\n", Style::PLAIN);
    }
    if lines.len() > PREVIEW_LINES {
        out.add(
            format!("… {} more lines", lines.len() - PREVIEW_LINES),
            Style::fg(Color::Gray),
        );
    }
    out
}

/// A string argument of a call, for renderers (`None` when absent or not a string).
pub fn arg_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A numeric field of a result's details.
pub fn detail_u64(result: &ToolResult, key: &str) -> Option<u64> {
    result.details.get(key).and_then(Value::as_u64)
}
