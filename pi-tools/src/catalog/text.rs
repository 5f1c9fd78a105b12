//! What the Markdown and HTML catalogs share: anchors, pretty JSON, the example call, the
//! flattened parameter rows and the Markdown-to-HTML rendering of descriptions.

use std::collections::HashMap;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use serde_json::{Value, json};

use super::{CatalogEntry, Parameter};

/// Pretty-printed JSON.
pub(super) fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// An example call as the model would make it: the tool's name and the example arguments.
pub(super) fn example_call(tool: &CatalogEntry, arguments: &Value) -> String {
    pretty(&json!({"name": tool.name, "arguments": arguments}))
}

/// A parameter row with its nesting: fields of `edits` come out as `edits[].oldText`.
pub(super) struct Row<'a> {
    /// The dotted path (`edits[].oldText`).
    pub path: String,
    /// How deep the row is (0 for a top-level parameter).
    pub depth: usize,
    pub parameter: &'a Parameter,
}

/// Every row of a parameter table, each parameter followed by its fields.
pub(super) fn rows(parameters: &[Parameter]) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    push_rows(parameters, "", 0, &mut out);
    out
}

fn push_rows<'a>(parameters: &'a [Parameter], prefix: &str, depth: usize, out: &mut Vec<Row<'a>>) {
    for parameter in parameters {
        let path = format!("{prefix}{}", parameter.name);
        let child_prefix = if parameter.type_name.ends_with("[]") {
            format!("{path}[].")
        } else {
            format!("{path}.")
        };
        out.push(Row {
            path,
            depth,
            parameter,
        });
        push_rows(&parameter.fields, &child_prefix, depth + 1, out);
    }
}

/// Heading anchors as GitHub and most Markdown renderers make them: lowercase, spaces to
/// `-`, punctuation other than `-` and `_` dropped, and `-1`, `-2`, … for repeats.
#[derive(Default)]
pub(super) struct Slugger {
    seen: HashMap<String, usize>,
}

impl Slugger {
    /// The anchor of the next heading with `text`.
    pub(super) fn slug(&mut self, text: &str) -> String {
        let base = slug(text);
        let mut candidate = base.clone();
        while self.seen.contains_key(&candidate) {
            let count = self.seen.entry(base.clone()).or_insert(0);
            *count += 1;
            candidate = format!("{base}-{count}");
        }
        self.seen.insert(candidate.clone(), 0);
        candidate
    }
}

/// `text` as an anchor: lowercase letters and digits, `-` and `_`; spaces become `-`.
pub(super) fn slug(text: &str) -> String {
    text.trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// Escapes text for HTML element content and attribute values.
pub(super) fn escape(text: &str) -> String {
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

/// A description's Markdown as HTML blocks. Raw HTML in the text is shown as text, links
/// become their text followed by the address (the page refers to nothing outside itself),
/// and images become their alternative text.
pub(super) fn markdown_blocks(text: &str) -> String {
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, self_contained(text));
    out
}

/// Markdown for one line of a list or table: as [`markdown_blocks`], without the paragraph
/// around a single paragraph.
pub(super) fn markdown_inline(text: &str) -> String {
    let html = markdown_blocks(text);
    let trimmed = html.trim_end();
    match trimmed
        .strip_prefix("<p>")
        .and_then(|rest| rest.strip_suffix("</p>"))
    {
        Some(inner) if !inner.contains("<p>") => inner.to_owned(),
        _ => trimmed.to_owned(),
    }
}

fn self_contained(text: &str) -> impl Iterator<Item = Event<'_>> {
    let mut link_targets: Vec<CowStr<'_>> = Vec::new();
    Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).flat_map(
        move |event| -> Vec<Event<'_>> {
            match event {
                Event::Html(raw) | Event::InlineHtml(raw) => vec![Event::Text(raw)],
                Event::Start(Tag::Link { dest_url, .. }) => {
                    link_targets.push(dest_url);
                    Vec::new()
                }
                Event::End(TagEnd::Link) => match link_targets.pop() {
                    Some(url) if !url.is_empty() => {
                        vec![Event::Text(format!(" ({url})").into())]
                    }
                    _ => Vec::new(),
                },
                // An image's alternative text comes between these two.
                Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => Vec::new(),
                other => vec![other],
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_html_that_refers_to_nothing_outside() {
        assert_eq!(
            markdown_inline("Prints `path:line: text`, **bold**."),
            "Prints <code>path:line: text</code>, <strong>bold</strong>."
        );
        assert_eq!(
            markdown_inline("<b>raw</b> & [docs](https://example.org)"),
            "&lt;b&gt;raw&lt;/b&gt; &amp; docs (https://example.org)"
        );
        assert_eq!(markdown_inline("![logo](logo.png)"), "logo");
        assert_eq!(
            markdown_blocks("One.\n\nTwo."),
            "<p>One.</p>\n<p>Two.</p>\n"
        );
    }

    #[test]
    fn slugs_follow_the_github_rule_with_numbered_repeats() {
        let mut slugger = Slugger::default();
        assert_eq!(slugger.slug("Tools"), "tools");
        assert_eq!(slugger.slug("Parameters"), "parameters");
        assert_eq!(slugger.slug("Parameters"), "parameters-1");
        assert_eq!(slugger.slug("Parameters"), "parameters-2");
        assert_eq!(slugger.slug("my_tool (v2)"), "my_tool-v2");
    }
}
