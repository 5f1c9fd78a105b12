//! The catalog as Markdown.

use std::fmt::Write;

use serde_json::Value;

use super::Catalog;

pub(super) fn render(catalog: &Catalog) -> String {
    let mut out = String::from("# Tools\n");
    if catalog.tools.is_empty() {
        out.push_str("\nNo tools.\n");
    }
    for tool in &catalog.tools {
        let _ = write!(
            out,
            "\n## {}\n\n- **Label:** {}\n- **Mode:** {}\n- **Active:** {}\n",
            tool.name,
            inline(&tool.label),
            tool.mode,
            if tool.active { "yes" } else { "no" }
        );
        if let Some(snippet) = &tool.snippet {
            let _ = writeln!(out, "- **Snippet:** {}", inline(snippet));
        }
        let _ = writeln!(out, "\n{}", tool.description.trim_end());
        if !tool.guidelines.is_empty() {
            out.push_str("\n### Guidelines\n\n");
            for line in &tool.guidelines {
                let _ = writeln!(out, "- {}", inline(line));
            }
        }
        out.push_str("\n### Parameters\n\n");
        if tool.parameters.is_empty() {
            out.push_str("None.\n");
        } else {
            out.push_str(
                "| name | type | required | default | description |\n|---|---|---|---|---|\n",
            );
            for p in &tool.parameters {
                let _ = writeln!(
                    out,
                    "| `{}` | `{}` | {} | {} | {} |",
                    cell(&p.name),
                    cell(&p.type_name),
                    if p.required { "yes" } else { "no" },
                    p.default
                        .as_ref()
                        .map(|d| format!("`{}`", cell(&d.to_string())))
                        .unwrap_or_default(),
                    p.description.as_deref().map(cell).unwrap_or_default()
                );
            }
        }
        let _ = write!(
            out,
            "\n### Schema\n\n```json\n{}\n```\n",
            pretty(&tool.schema)
        );
        if let Some(schema) = &tool.config_schema {
            let _ = write!(
                out,
                "\n### Configuration (`[tool.{}]`)\n\n```json\n{}\n```\n",
                tool.name,
                pretty(schema)
            );
        }
    }
    out
}

pub(super) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Text on one line (a list item or table cell), with `<` escaped so it is never read as
/// an HTML tag.
fn inline(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('<', "&lt;")
}

/// Text inside a table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    inline(text).replace('|', "\\|")
}
