//! How bash calls and results look to a person.

use serde_json::Value;

use super::seconds_text;
use crate::builtins::preview::arg_str;
use crate::core::ToolResult;
use crate::tool::render::{Color, Style, Styled};

/// Lines of output a rendered bash result shows.
const RENDER_TAIL_LINES: usize = 20;

/// Draws bash calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct BashRenderer;

impl crate::tool::ToolRenderer for BashRenderer {
    /// How a bash call looks to a person: `$ command`.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push("$ ", Style::fg(Color::Cyan).bold());
        out.add(arg_str(args, "command").unwrap_or(""), Style::PLAIN.bold());
        if let Some(t) = args.get("timeout").and_then(Value::as_f64) {
            out.add(
                format!(" (timeout {})", seconds_text(t)),
                Style::fg(Color::Gray),
            );
        }
        out
    }

    /// How a bash result looks to a person: the last lines of output, the status in colour.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        let text = result.text_content();
        let lines: Vec<&str> = text.lines().collect();
        let mut out = Styled::new();
        if lines.len() > RENDER_TAIL_LINES {
            out.add(
                format!("… {} earlier lines\n", lines.len() - RENDER_TAIL_LINES),
                Style::fg(Color::Gray),
            );
        }
        let start = lines.len().saturating_sub(RENDER_TAIL_LINES);
        for (i, line) in lines[start..].iter().enumerate() {
            let last = start + i + 1 == lines.len();
            let style = if last && is_error {
                Style::fg(Color::Red)
            } else if line.starts_with('[') {
                Style::fg(Color::Yellow)
            } else {
                Style::PLAIN
            };
            out.add(*line, style);
            if !last {
                out.add("\n", Style::PLAIN);
            }
        }
        out
    }
}
