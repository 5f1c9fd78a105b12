//! The catalog as Markdown: a title at the chosen heading level, a table of contents linking
//! each tool's section, then the sections one level below.

use std::fmt::Write;

use super::text::{Slugger, example_call, pretty, rows};
use super::{Catalog, CatalogEntry, Output};

/// `level` is the title's heading level (1 to 4).
pub(super) fn render(catalog: &Catalog, level: u8) -> String {
    let title = inline(&catalog.title);
    let mut slugger = Slugger::default();
    slugger.slug(&title);
    // The sections come first so the contents can link to the anchors they really got.
    let mut sections = String::new();
    let mut contents = String::new();
    for tool in &catalog.tools {
        let anchor = slugger.slug(&tool.name);
        let _ = write!(contents, "- [{}](#{anchor})", tool.name);
        let summary = tool.snippet.as_deref().unwrap_or(&tool.label);
        if summary != tool.name {
            let _ = write!(contents, ": {}", inline(summary));
        }
        contents.push('\n');
        section(&mut sections, tool, level + 1, &mut slugger);
    }
    let mut out = format!("{} {title}\n", hashes(level));
    if catalog.tools.is_empty() {
        out.push_str("\nNo tools.\n");
    } else {
        let _ = write!(out, "\n{contents}");
    }
    out.push_str(&sections);
    out
}

fn section(out: &mut String, tool: &CatalogEntry, level: u8, slugger: &mut Slugger) {
    let sub = hashes(level + 1);
    let mut subheading = |out: &mut String, text: &str| {
        slugger.slug(text);
        let _ = write!(out, "\n{sub} {text}\n\n");
    };
    let _ = write!(
        out,
        "\n{} {}\n\n- **Label:** {}\n- **Mode:** {}\n- **Active:** {}\n",
        hashes(level),
        tool.name,
        inline(&tool.label),
        tool.mode,
        if tool.active { "yes" } else { "no" }
    );
    if let Some(server) = &tool.server {
        let _ = writeln!(out, "- **MCP server:** {}", inline(server));
    }
    for shape in &tool.shapes {
        let _ = writeln!(out, "- **Shape:** {}", inline(shape));
    }
    if let Some(snippet) = &tool.snippet {
        let _ = writeln!(out, "- **Snippet:** {}", inline(snippet));
    }
    let _ = writeln!(out, "\n{}", tool.description.trim_end());
    if !tool.guidelines.is_empty() {
        subheading(out, "Guidelines");
        for line in &tool.guidelines {
            let _ = writeln!(out, "- {}", inline(line));
        }
    }
    subheading(out, "Parameters");
    if tool.parameters.is_empty() {
        out.push_str("None.\n");
    } else {
        out.push_str("| name | type | required | default | description |\n|---|---|---|---|---|\n");
        for row in rows(&tool.parameters) {
            let p = row.parameter;
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {} | {} | {} |",
                cell(&row.path),
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
    if let Some(output) = &tool.output {
        subheading(out, "Output");
        output_section(out, output);
    }
    if !tool.examples.is_empty() {
        subheading(
            out,
            if tool.examples.len() == 1 {
                "Example"
            } else {
                "Examples"
            },
        );
        let calls: Vec<String> = tool
            .examples
            .iter()
            .map(|arguments| format!("```json\n{}\n```\n", example_call(tool, arguments)))
            .collect();
        out.push_str(&calls.join("\n"));
    }
    subheading(out, "Schema");
    let _ = writeln!(out, "```json\n{}\n```", pretty(&tool.schema));
    if let Some(schema) = &tool.config_schema {
        subheading(out, &format!("Configuration (`[tool.{}]`)", tool.name));
        let _ = writeln!(out, "```json\n{}\n```", pretty(schema));
    }
}

/// The result's type and description, a table of its fields, and its schema.
fn output_section(out: &mut String, output: &Output) {
    let _ = write!(out, "`{}`", cell(&output.type_name));
    if let Some(description) = &output.description {
        let _ = write!(out, ": {}", inline(description));
    }
    out.push('\n');
    if !output.fields.is_empty() {
        out.push_str("\n| field | type | always | description |\n|---|---|---|---|\n");
        for row in rows(&output.fields) {
            let p = row.parameter;
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {} | {} |",
                cell(&row.path),
                cell(&p.type_name),
                if p.required { "yes" } else { "no" },
                p.description.as_deref().map(cell).unwrap_or_default()
            );
        }
    }
    let _ = writeln!(
        out,
        "\n<details><summary>Output schema</summary>\n\n```json\n{}\n```\n\n</details>",
        pretty(&output.schema)
    );
}

fn hashes(level: u8) -> String {
    "#".repeat(usize::from(level))
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
