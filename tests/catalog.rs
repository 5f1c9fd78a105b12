//! The catalog in Markdown, JSON and HTML: snapshots, the parameter table, escaping, and an
//! HTML page that loads nothing from the network.

mod support;

use std::sync::Arc;

use pi_tools::catalog::{Catalog, Parameter};
use pi_tools::config::Config;
use pi_tools::{ExecutionMode, ToolDefinition};
use serde_json::json;
use support::FakeTool;

fn tools() -> Vec<Arc<dyn ToolDefinition>> {
    vec![
        FakeTool::new("read")
            .label("Read file")
            .snippet("Read file contents")
            .description("Read the contents of a file.\nLong files are truncated.")
            .guidelines(&["Use read to examine files instead of cat or sed."])
            .read_only()
            .parameters(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path to the file to read"},
                    "offset": {"type": "integer", "minimum": 1, "description": "Line to start at (1-indexed)"},
                    "limit": {"type": "integer", "minimum": 0}
                },
                "required": ["path"]
            }))
            .arc(),
        FakeTool::new("edit")
            .snippet("Make <precise> edits & keep | pipes")
            .description("Replace exact text in a file; <b>escaped</b> in HTML.")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "edits": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                            "required": ["oldText", "newText"]
                        },
                        "description": "Replacements | applied in order"
                    },
                    "mode": {"type": "string", "enum": ["strict", "fuzzy"], "default": "strict"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "tags": {"type": "array", "items": {"type": ["string", "null"]}}
                },
                "required": ["path", "edits"]
            }))
            .arc(),
        FakeTool::new("bash")
            .snippet("Run shell commands")
            .config(support::shell_config_spec())
            .arc(),
    ]
}

fn catalog() -> Catalog {
    let registered = tools();
    let config = Config::parse(
        "[tools]\nactive = [\"read\", \"bash\"]\n[tool.bash]\nmode = \"sequential\"\n",
        "pi-tools.toml",
        &registered,
    )
    .expect("valid");
    Catalog::new(&registered, &config, &config.active)
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!("catalog_markdown", catalog().to_markdown());
}

#[test]
fn json_snapshot() {
    insta::assert_json_snapshot!("catalog_json", catalog().to_json());
}

#[test]
fn html_snapshot() {
    insta::assert_snapshot!("catalog_html", catalog().to_html());
}

#[test]
fn output_is_deterministic() {
    assert_eq!(catalog().to_markdown(), catalog().to_markdown());
    assert_eq!(catalog().to_html(), catalog().to_html());
    assert_eq!(catalog().to_json(), catalog().to_json());
}

#[test]
fn html_is_self_contained_and_escaped() {
    let html = catalog().to_html();
    for external in ["http://", "https://", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(external), "the page refers to `{external}`");
    }
    assert!(html.contains("<input id=\"filter\""));
    assert!(html.contains("<script>") && html.contains("<style>"));
    assert!(html.contains("Make &lt;precise&gt; edits &amp; keep | pipes"));
    assert!(html.contains("&lt;b&gt;escaped&lt;/b&gt;"));
    assert!(!html.contains("<b>escaped</b>"));
}

#[test]
fn parameter_rows_give_type_required_default_and_description() {
    let catalog = catalog();
    let read = &catalog.tools[0];
    assert_eq!(read.mode, ExecutionMode::Parallel);
    assert!(read.active);
    let edit = &catalog.tools[1];
    assert!(!edit.active);
    let row = |name: &str| -> Parameter {
        edit.parameters
            .iter()
            .find(|p| p.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("no row {name}"))
    };
    assert_eq!(row("edits").type_name, "object[]");
    assert!(row("edits").required);
    assert_eq!(
        row("edits").description.as_deref(),
        Some("Replacements | applied in order")
    );
    assert_eq!(row("mode").type_name, "\"strict\" | \"fuzzy\"");
    assert_eq!(row("mode").default, Some(json!("strict")));
    assert!(!row("mode").required);
    assert_eq!(row("env").type_name, "map of string");
    assert_eq!(row("tags").type_name, "(string | null)[]");
    let bash = &catalog.tools[2];
    assert_eq!(bash.mode, ExecutionMode::Sequential);
    assert!(bash.config_schema.is_some());
    let markdown = catalog.to_markdown();
    assert!(
        markdown.contains("| `edits` | `object[]` | yes |  | Replacements \\| applied in order |")
    );
}
