//! The catalog as one self-contained HTML page: inline CSS and script, no external
//! resources, links only to its own sections, every text escaped or rendered from Markdown
//! with raw HTML shown as text. The layout holds from phone width (about 400 px) up.

use std::fmt::Write;

use super::text::{escape, example_call, markdown_blocks, markdown_inline, pretty, rows, slug};
use super::{Catalog, CatalogEntry, Output};

const STYLE: &str = "*{box-sizing:border-box}\
body{font-family:system-ui,sans-serif;line-height:1.5;max-width:60rem;margin:0 auto;padding:1rem;color:#222;background:#fff}\
h1{margin:.5rem 0 1rem}\
h2{margin:0 0 .25rem;word-break:break-word}\
h3{font-size:1rem;margin:1rem 0 .5rem}\
a{color:#0645ad}\
nav ul{padding-left:1.25rem;margin:.5rem 0}\
nav li{margin:.15rem 0}\
input{width:100%;padding:.5rem;font-size:1rem;margin:0 0 1rem}\
section{border-top:1px solid #ccc;padding:1rem 0}\
.meta{color:#555;margin:0 0 .5rem}\
code{font-family:ui-monospace,monospace;font-size:.9em;background:#f3f3f3;padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}\
pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-width:100%}\
pre code{background:none;padding:0}\
table{border-collapse:collapse;width:100%}\
td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}\
td code{overflow-wrap:normal}\
td[data-label=name]{white-space:nowrap}\
td.depth1{padding-left:1.5rem}td.depth2{padding-left:2.5rem}td.depth3{padding-left:3.5rem}\
td p{margin:0}\
.hidden{display:none}\
@media (max-width:40rem){\
body{padding:.75rem}\
table,tbody,tr,td{display:block;width:100%}\
tr.head{display:none}\
tr{border:1px solid #ddd;margin:0 0 .5rem;padding:.25rem .5rem}\
td{border:none;padding:.1rem 0}\
td[data-label=name]{white-space:normal;font-weight:bold}\
td.depth1,td.depth2,td.depth3{padding-left:0}\
td[data-label]:not(:first-child)::before{content:attr(data-label) \": \";color:#555}\
td:empty{display:none}}";

const SCRIPT: &str = "document.getElementById('filter').addEventListener('input',function(e){\
var q=e.target.value.toLowerCase();\
document.querySelectorAll('section.tool').forEach(function(s){\
var hide=s.textContent.toLowerCase().indexOf(q)<0;\
s.classList.toggle('hidden',hide);\
var link=document.querySelector('nav li[data-tool=\"'+s.id+'\"]');\
if(link){link.classList.toggle('hidden',hide);}});});";

pub(super) fn render(catalog: &Catalog) -> String {
    let title = escape(&catalog.title);
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    if catalog.tools.is_empty() {
        out.push_str("<p>No tools.</p>\n");
    } else {
        contents(&mut out, catalog);
        out.push_str(
            "<input id=\"filter\" type=\"search\" placeholder=\"Filter tools\" aria-label=\"Filter tools\">\n",
        );
    }
    out.push_str("<main>\n");
    for tool in &catalog.tools {
        entry(&mut out, tool);
    }
    let _ = write!(
        out,
        "</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
    out
}

/// The section id of a tool.
fn anchor(tool: &CatalogEntry) -> String {
    format!("tool-{}", slug(&tool.name))
}

fn contents(out: &mut String, catalog: &Catalog) {
    out.push_str("<nav aria-label=\"Contents\">\n<ul>\n");
    for tool in &catalog.tools {
        let id = anchor(tool);
        let _ = write!(
            out,
            "<li data-tool=\"{id}\"><a href=\"#{id}\"><code>{}</code></a>",
            escape(&tool.name)
        );
        let summary = tool.snippet.as_deref().unwrap_or(&tool.label);
        if summary != tool.name {
            let _ = write!(out, ": {}", markdown_inline(summary));
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n</nav>\n");
}

fn entry(out: &mut String, tool: &CatalogEntry) {
    let _ = write!(
        out,
        "<section class=\"tool\" id=\"{id}\">\n<h2>{name}</h2>\n\
         <p class=\"meta\">{label} · {mode} · {active}{server}</p>\n",
        id = anchor(tool),
        name = escape(&tool.name),
        label = escape(&tool.label),
        mode = tool.mode,
        active = if tool.active { "active" } else { "inactive" },
        server = tool
            .server
            .as_deref()
            .map(|s| format!(" · from the MCP server {}", escape(s)))
            .unwrap_or_default(),
    );
    for shape in &tool.shapes {
        let _ = writeln!(out, "<p>Shape: {}</p>", markdown_inline(shape));
    }
    if let Some(snippet) = &tool.snippet {
        let _ = writeln!(out, "<p><em>{}</em></p>", markdown_inline(snippet));
    }
    out.push_str(&markdown_blocks(tool.description.trim_end()));
    if !tool.guidelines.is_empty() {
        out.push_str("<h3>Guidelines</h3>\n<ul>\n");
        for line in &tool.guidelines {
            let _ = writeln!(out, "<li>{}</li>", markdown_inline(line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h3>Parameters</h3>\n");
    parameters(out, tool);
    if let Some(output) = &tool.output {
        output_section(out, output);
    }
    if !tool.examples.is_empty() {
        let heading = if tool.examples.len() == 1 {
            "Example"
        } else {
            "Examples"
        };
        let _ = writeln!(out, "<h3>{heading}</h3>");
        for arguments in &tool.examples {
            let _ = writeln!(
                out,
                "<pre><code>{}</code></pre>",
                escape(&example_call(tool, arguments))
            );
        }
    }
    let _ = writeln!(
        out,
        "<details><summary>Schema</summary><pre><code>{}</code></pre></details>",
        escape(&pretty(&tool.schema))
    );
    if let Some(schema) = &tool.config_schema {
        let _ = writeln!(
            out,
            "<details><summary>Configuration (<code>[tool.{}]</code>)</summary><pre><code>{}</code></pre></details>",
            escape(&tool.name),
            escape(&pretty(schema))
        );
    }
    out.push_str("</section>\n");
}

/// The result's type and description, a table of its fields, and its schema.
fn output_section(out: &mut String, output: &Output) {
    let _ = write!(
        out,
        "<h3>Output</h3>\n<p><code>{}</code>",
        escape(&output.type_name)
    );
    if let Some(description) = &output.description {
        let _ = write!(out, ": {}", markdown_inline(description));
    }
    out.push_str("</p>\n");
    if !output.fields.is_empty() {
        out.push_str(
            "<table>\n<tr class=\"head\"><th>field</th><th>type</th><th>always</th><th>description</th></tr>\n",
        );
        for row in rows(&output.fields) {
            let p = row.parameter;
            let depth = row.depth.min(3);
            let class = if depth > 0 {
                format!(" class=\"depth{depth}\"")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "<tr><td{class} data-label=\"field\"><code>{}</code></td>\
                 <td data-label=\"type\"><code>{}</code></td>\
                 <td data-label=\"always\">{}</td>\
                 <td data-label=\"description\">{}</td></tr>",
                escape(&row.path),
                escape(&p.type_name),
                if p.required { "yes" } else { "no" },
                p.description
                    .as_deref()
                    .map(markdown_inline)
                    .unwrap_or_default(),
            );
        }
        out.push_str("</table>\n");
    }
    let _ = writeln!(
        out,
        "<details><summary>Output schema</summary><pre><code>{}</code></pre></details>",
        escape(&pretty(&output.schema))
    );
}

fn parameters(out: &mut String, tool: &CatalogEntry) {
    if tool.parameters.is_empty() {
        out.push_str("<p>None.</p>\n");
        return;
    }
    out.push_str(
        "<table>\n<tr class=\"head\"><th>name</th><th>type</th><th>required</th><th>default</th><th>description</th></tr>\n",
    );
    for row in rows(&tool.parameters) {
        let p = row.parameter;
        let depth = row.depth.min(3);
        let class = if depth > 0 {
            format!(" class=\"depth{depth}\"")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr><td{class} data-label=\"name\"><code>{}</code></td>\
             <td data-label=\"type\"><code>{}</code></td>\
             <td data-label=\"required\">{}</td>\
             <td data-label=\"default\">{}</td>\
             <td data-label=\"description\">{}</td></tr>",
            escape(&row.path),
            escape(&p.type_name),
            if p.required { "yes" } else { "no" },
            p.default
                .as_ref()
                .map(|d| format!("<code>{}</code>", escape(&d.to_string())))
                .unwrap_or_default(),
            p.description
                .as_deref()
                .map(markdown_inline)
                .unwrap_or_default(),
        );
    }
    out.push_str("</table>\n");
}
