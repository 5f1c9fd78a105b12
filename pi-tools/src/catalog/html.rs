//! The catalog as one self-contained HTML page: inline CSS and script, no external
//! resources, every text escaped.

use std::fmt::Write;

use super::markdown::pretty;
use super::{Catalog, CatalogEntry};

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\
input{width:100%;padding:.5rem;font-size:1rem;margin-bottom:1rem}\
section{border-top:1px solid #ccc;padding:.5rem 0}\
.meta{color:#555}\
table{border-collapse:collapse;width:100%}\
td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}\
pre{background:#f5f5f5;padding:.5rem;overflow:auto}\
.hidden{display:none}";

const SCRIPT: &str = "document.getElementById('filter').addEventListener('input',function(e){\
var q=e.target.value.toLowerCase();\
document.querySelectorAll('section.tool').forEach(function(s){\
s.classList.toggle('hidden',s.textContent.toLowerCase().indexOf(q)<0);});});";

pub(super) fn render(catalog: &Catalog) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Tools</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>Tools</h1>\n\
         <input id=\"filter\" type=\"search\" placeholder=\"Filter tools\" aria-label=\"Filter tools\">\n"
    );
    if catalog.tools.is_empty() {
        out.push_str("<p>No tools.</p>\n");
    }
    for tool in &catalog.tools {
        entry(&mut out, tool);
    }
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

fn entry(out: &mut String, tool: &CatalogEntry) {
    let _ = write!(
        out,
        "<section class=\"tool\" id=\"tool-{id}\">\n<h2>{name}</h2>\n\
         <p class=\"meta\">{label} · {mode} · {active}</p>\n",
        id = escape(&tool.name),
        name = escape(&tool.name),
        label = escape(&tool.label),
        mode = tool.mode,
        active = if tool.active { "active" } else { "inactive" },
    );
    if let Some(snippet) = &tool.snippet {
        let _ = writeln!(out, "<p><em>{}</em></p>", escape(snippet));
    }
    let _ = writeln!(out, "<p>{}</p>", escape(tool.description.trim_end()));
    if !tool.guidelines.is_empty() {
        out.push_str("<h3>Guidelines</h3>\n<ul>\n");
        for line in &tool.guidelines {
            let _ = writeln!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h3>Parameters</h3>\n");
    if tool.parameters.is_empty() {
        out.push_str("<p>None.</p>\n");
    } else {
        out.push_str(
            "<table>\n<tr><th>name</th><th>type</th><th>required</th><th>default</th><th>description</th></tr>\n",
        );
        for p in &tool.parameters {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&p.name),
                escape(&p.type_name),
                if p.required { "yes" } else { "no" },
                p.default
                    .as_ref()
                    .map(|d| format!("<code>{}</code>", escape(&d.to_string())))
                    .unwrap_or_default(),
                p.description.as_deref().map(escape).unwrap_or_default(),
            );
        }
        out.push_str("</table>\n");
    }
    let _ = writeln!(
        out,
        "<details><summary>Schema</summary><pre>{}</pre></details>",
        escape(&pretty(&tool.schema))
    );
    if let Some(schema) = &tool.config_schema {
        let _ = writeln!(
            out,
            "<details><summary>Configuration ([tool.{}])</summary><pre>{}</pre></details>",
            escape(&tool.name),
            escape(&pretty(schema))
        );
    }
    out.push_str("</section>\n");
}

/// Escapes text for HTML element content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
