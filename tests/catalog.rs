//! The catalog in Markdown, JSON and HTML: snapshots, the parameter table (order, nesting,
//! defaults), examples, the table of contents, escaping, and an HTML page that loads nothing
//! from the network and links only within itself.

use std::collections::HashMap;
use std::sync::Arc;

use pi_tools::catalog::{Catalog, Parameter};
use pi_tools::config::Config;
use pi_tools::{ExecutionMode, Registry, ToolDefinition};
use serde_json::{Value, json};
use support::FakeTool;

fn tools() -> Vec<Arc<dyn ToolDefinition>> {
    vec![
        FakeTool::new("read")
            .label("Read file")
            .snippet("Read file contents")
            .description("Read the contents of a file.\nLong files are truncated; use `offset` to go on.")
            .examples(vec![json!({"path": "src/main.rs"}), json!({"path": "a.log", "offset": 10, "limit": 5})])
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
                    "mode": {"type": "string", "enum": ["strict", "fuzzy"], "default": "strict", "description": "How `oldText` is matched"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}},
                    "tags": {"type": "array", "items": {"type": ["string", "null"]}}
                },
                "required": ["path", "edits"]
            }))
            .examples(vec![json!({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]})])
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
    for external in ["http://", "https://", "src=", "@import", "url("] {
        assert!(!html.contains(external), "the page refers to `{external}`");
    }
    assert!(
        links_and_ids(&html).0.iter().all(|l| l.starts_with('#')),
        "every link stays within the page"
    );
    assert!(html.contains("<input id=\"filter\""));
    assert!(
        html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
    );
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

#[test]
fn parameters_come_required_first_then_optional_each_in_declaration_order() {
    let catalog = catalog();
    let names = |tool: usize| -> Vec<String> {
        catalog.tools[tool]
            .parameters
            .iter()
            .map(|p| p.name.clone())
            .collect()
    };
    assert_eq!(names(0), ["path", "offset", "limit"]);
    assert_eq!(names(1), ["path", "edits", "mode", "env", "tags"]);
    let markdown = catalog.to_markdown();
    let rows: Vec<&str> = markdown
        .lines()
        .filter(|l| l.starts_with("| `"))
        .take(3)
        .collect();
    assert_eq!(
        rows,
        [
            "| `path` | `string` | yes |  | Path to the file to read |",
            "| `offset` | `integer` | no |  | Line to start at (1-indexed) |",
            "| `limit` | `integer` | no |  |  |",
        ]
    );
}

// The built-in tools are there only with the `builtins` feature.
#[cfg(feature = "builtins")]
#[test]
fn built_in_parameters_keep_their_declaration_order() {
    let registry = Registry::from_inventory().expect("no duplicate tool names");
    let grep = registry.get("grep").expect("grep is registered");
    let catalog = Catalog::new(
        std::slice::from_ref(grep),
        &Config::embedded(&[]).expect("the default is valid"),
        &[],
    );
    let names: Vec<&str> = catalog.tools[0]
        .parameters
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    // The struct declares pattern, path, glob, ignoreCase, literal, context, limit.
    assert_eq!(
        names,
        [
            "pattern",
            "path",
            "glob",
            "ignoreCase",
            "literal",
            "context",
            "limit"
        ]
    );
}

#[test]
fn nested_parameters_are_listed_with_their_fields() {
    let catalog = catalog();
    let edits = &catalog.tools[1].parameters[1];
    assert_eq!(edits.name, "edits");
    let fields: Vec<(&str, &str, bool)> = edits
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.type_name.as_str(), f.required))
        .collect();
    assert_eq!(
        fields,
        [("oldText", "string", true), ("newText", "string", true)]
    );
    let markdown = catalog.to_markdown();
    assert!(markdown.contains(
        "| `edits` | `object[]` | yes |  | Replacements \\| applied in order |\n\
         | `edits[].oldText` | `string` | yes |  |  |\n\
         | `edits[].newText` | `string` | yes |  |  |\n\
         | `mode` |"
    ));
    let html = catalog.to_html();
    assert!(
        html.contains("<td class=\"depth1\" data-label=\"name\"><code>edits[].oldText</code></td>")
    );
}

#[test]
fn defaults_come_from_the_schema() {
    let catalog = catalog();
    let mode = &catalog.tools[1].parameters[2];
    assert_eq!(mode.default, Some(json!("strict")));
    assert!(catalog.to_markdown().contains(
        "| `mode` | `\"strict\" \\| \"fuzzy\"` | no | `\"strict\"` | How `oldText` is matched |"
    ));
    assert!(
        catalog
            .to_html()
            .contains("<td data-label=\"default\"><code>&quot;strict&quot;</code></td>")
    );
}

/// Arguments whose defaults schemars writes into the schema (`#[serde(default)]`).
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PageArgs {
    /// What to look for.
    query: String,
    /// How many results a page holds.
    #[serde(default = "default_page_size")]
    page_size: u32,
    /// Whether to sort.
    #[serde(default)]
    sorted: bool,
    /// Where to start; absent means the first page.
    #[serde(default)]
    cursor: Option<String>,
}

fn default_page_size() -> u32 {
    20
}

/// Pages through results.
#[pi_tools::tool]
async fn page(#[args] args: PageArgs) -> Result<String, String> {
    Ok(format!(
        "{} {} {} {:?}",
        args.query, args.page_size, args.sorted, args.cursor
    ))
}

#[test]
fn a_tool_s_serde_defaults_reach_the_default_column_and_null_is_no_default() {
    let registry = Registry::from_inventory().expect("no duplicate tool names");
    let page = registry.get("page").expect("the test's tool is registered");
    let catalog = Catalog::new(
        std::slice::from_ref(page),
        &Config::embedded(&[]).expect("the default is valid"),
        &[],
    );
    let defaults: Vec<(&str, Option<Value>)> = catalog.tools[0]
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.default.clone()))
        .collect();
    assert_eq!(
        defaults,
        [
            ("query", None),
            ("page_size", Some(json!(20))),
            ("sorted", Some(json!(false))),
            ("cursor", None),
        ]
    );
}

#[test]
fn examples_are_shown_as_calls() {
    let catalog = catalog();
    let markdown = catalog.to_markdown();
    assert!(markdown.contains(
        "#### Examples\n\n```json\n{\n  \"name\": \"read\",\n  \"arguments\": {\n    \"path\": \"src/main.rs\"\n  }\n}\n```\n"
    ));
    assert!(markdown.contains("#### Example\n\n```json\n{\n  \"name\": \"edit\""));
    let html = catalog.to_html();
    assert!(html.contains("<h3>Examples</h3>\n<pre><code>{\n  &quot;name&quot;: &quot;read&quot;"));
}

// The built-in tools are there only with the `builtins` feature.
#[cfg(feature = "builtins")]
#[test]
fn every_built_in_has_an_example_its_schema_accepts_as_it_is() {
    let registry = Registry::from_inventory().expect("no duplicate tool names");
    for name in ["bash", "edit", "find", "grep", "ls", "read", "write"] {
        let tool = registry.get(name).expect("a built-in is registered");
        let examples = tool.spec().examples.clone();
        assert!(!examples.is_empty(), "{name} has no example");
        let validator =
            pi_tools::ArgumentValidator::new(&tool.spec().parameters).expect("a valid schema");
        for example in examples {
            // Valid without coercion: the catalog must not teach a shape the schema only
            // tolerates.
            assert_eq!(
                validator.validate(name, example.clone()),
                Ok(example.clone()),
                "{name}: {example}"
            );
            assert!(
                jsonschema::is_valid(&tool.spec().parameters, &example),
                "{name}: {example}"
            );
        }
    }
}

#[test]
fn descriptions_are_rendered_from_markdown_in_html() {
    let html = catalog().to_html();
    assert!(html.contains("<p>Read the contents of a file.\nLong files are truncated; use <code>offset</code> to go on.</p>"));
    assert!(html.contains("How <code>oldText</code> is matched"));
    assert!(!html.contains("`offset`"));
}

/// Every `href="#x"` in `html`, and every `id="x"`.
fn links_and_ids(html: &str) -> (Vec<String>, Vec<String>) {
    let values = |attribute: &str| -> Vec<String> {
        html.split(attribute)
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .map(str::to_owned)
            .collect()
    };
    (values(" href=\""), values(" id=\""))
}

#[test]
fn html_has_a_section_per_tool_and_contents_whose_links_resolve() {
    let catalog = catalog().with_title("Agent <tools>");
    let html = catalog.to_html();
    assert!(html.contains("<title>Agent &lt;tools&gt;</title>"));
    assert!(html.contains("<h1>Agent &lt;tools&gt;</h1>"));
    assert_eq!(html.matches("<section class=\"tool\"").count(), 3);
    let (links, ids) = links_and_ids(&html);
    assert_eq!(links, ["#tool-read", "#tool-edit", "#tool-bash"]);
    for link in &links {
        let target = link.strip_prefix('#').expect("links stay within the page");
        assert_eq!(
            ids.iter().filter(|id| *id == target).count(),
            1,
            "{link} must name exactly one element"
        );
    }
    let nav = &html[html.find("<nav").expect("contents")..html.find("</nav>").expect("end")];
    assert!(nav.contains("<li data-tool=\"tool-read\"><a href=\"#tool-read\"><code>read</code></a>: Read file contents</li>"));
    for external in [
        "http:", "https:", "src=", "@import", "url(", "<link", "<iframe",
    ] {
        assert!(!html.contains(external), "the page refers to `{external}`");
    }
}

/// GitHub's heading anchors: lowercase, spaces to `-`, other punctuation but `-` and `_`
/// dropped, `-N` for the N-th repeat.
fn github_anchors(markdown: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#').trim();
        let base: String = text
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        let anchor = match seen.get_mut(&base) {
            Some(n) => {
                *n += 1;
                format!("{base}-{n}")
            }
            None => base.clone(),
        };
        seen.entry(base).or_insert(0);
        out.push(anchor);
    }
    out
}

#[test]
fn markdown_starts_at_the_chosen_heading_level_with_contents_that_resolve() {
    let catalog = catalog();
    assert!(
        catalog
            .to_markdown()
            .starts_with("## Tools\n\n- [read](#read): Read file contents\n")
    );
    let markdown = catalog.to_markdown_at(3);
    let headings: Vec<&str> = markdown
        .lines()
        .filter(|l| l.starts_with('#') && !l.starts_with("#####"))
        .collect();
    assert_eq!(
        headings,
        ["### Tools", "#### read", "#### edit", "#### bash"]
    );
    assert!(markdown.contains("\n##### Parameters\n"));
    let anchors = github_anchors(&markdown);
    let links: Vec<&str> = markdown
        .lines()
        .take_while(|l| !l.starts_with("####"))
        .filter_map(|l| l.split("](#").nth(1))
        .filter_map(|rest| rest.split(')').next())
        .collect();
    assert_eq!(links, ["read", "edit", "bash"]);
    for link in links {
        assert!(anchors.iter().any(|a| a == link), "#{link} has no heading");
    }
    // Levels outside 1 to 4 are clamped, so sections never go past `######`.
    assert!(catalog.to_markdown_at(9).starts_with("#### Tools\n"));
    assert!(catalog.to_markdown_at(0).starts_with("# Tools\n"));
}
