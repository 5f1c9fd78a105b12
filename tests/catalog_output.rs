//! A tool with a typed result in the catalog: Markdown, JSON and HTML each show its output,
//! the result's type, description and fields, and the output schema.

use pi_tools::catalog::Catalog;
use pi_tools::config::Config;
use serde_json::json;
use support::FakeTool;

fn catalog() -> Catalog {
    let tool = FakeTool::new("grep")
        .description("Search file contents.")
        .output_schema(json!({
            "description": "What the search found.",
            "type": "object",
            "properties": {
                "matches": {
                    "type": "array",
                    "description": "Each matching line.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "The file."},
                            "line": {"type": "integer", "description": "1-indexed."}
                        },
                        "required": ["path", "line"]
                    }
                },
                "truncated": {"type": ["boolean", "null"]}
            },
            "required": ["matches"]
        }))
        .arc();
    Catalog::new(
        &[tool],
        &Config::embedded(&[]).expect("the default is valid"),
        &["grep".to_owned()],
    )
}

#[test]
fn markdown_shows_the_output_type_its_fields_and_schema() {
    let markdown = catalog().to_markdown();
    let start = markdown.find("#### Output").expect("an output section");
    let end = markdown.find("#### Schema").expect("a schema section");
    assert_eq!(
        &markdown[start..end],
        "#### Output\n\n\
         `object`: What the search found.\n\n\
         | field | type | always | description |\n\
         |---|---|---|---|\n\
         | `matches` | `object[]` | yes | Each matching line. |\n\
         | `matches[].path` | `string` | yes | The file. |\n\
         | `matches[].line` | `integer` | yes | 1-indexed. |\n\
         | `truncated` | `boolean \\| null` | no |  |\n\n\
         <details><summary>Output schema</summary>\n\n```json\n"
            .to_owned()
            + &serde_json::to_string_pretty(
                &catalog().tools[0]
                    .output
                    .as_ref()
                    .expect("an output")
                    .schema
            )
            .expect("a schema prints")
            + "\n```\n\n</details>\n\n"
    );
}

#[test]
fn json_carries_the_output_and_a_tool_without_one_has_no_key() {
    let json = catalog().to_json();
    let output = &json["tools"][0]["output"];
    assert_eq!(output["type"], "object");
    assert_eq!(output["description"], "What the search found.");
    assert_eq!(output["fields"][0]["name"], "matches");
    assert_eq!(output["fields"][0]["fields"][1]["name"], "line");
    assert_eq!(output["fields"][1]["required"], false);
    assert_eq!(output["schema"]["required"], json!(["matches"]));
    let plain = Catalog::new(
        &[FakeTool::new("ls").arc()],
        &Config::embedded(&[]).expect("the default is valid"),
        &[],
    )
    .to_json();
    assert_eq!(plain["tools"][0].get("output"), None);
}

#[test]
fn html_shows_the_output_and_its_fields() {
    let html = catalog().to_html();
    assert!(
        html.contains("<h3>Output</h3>\n<p><code>object</code>: What the search found.</p>\n"),
        "{html}"
    );
    assert!(
        html.contains("<tr><td class=\"depth1\" data-label=\"field\"><code>matches[].line</code></td><td data-label=\"type\"><code>integer</code></td><td data-label=\"always\">yes</td><td data-label=\"description\">1-indexed.</td></tr>"),
        "{html}"
    );
    assert!(html.contains("<details><summary>Output schema</summary>"));
}
