//! Wrappers models put around the text they send: a Markdown code fence around both texts,
//! the `-`/`+` prefixes of a unified diff, a second level of JSON escaping (newlines sent as
//! backslash-n), HTML entities for `<`, `>` and `&`. Each is undone only when the text as
//! sent is found nowhere (an exact match always wins: a file may really hold a fence, a `-`
//! line or a backslash-n), both texts carry the same wrapper, the unwrapped oldText matches
//! the file exactly once, and no other wrapper's reading writes different bytes.

use serde::Serialize;

/// A wrapper removed from an edit's texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Wrapper {
    /// A Markdown code fence (```` ``` ```` or `~~~` lines) around the text.
    CodeFence,
    /// Unified-diff prefixes: `-` (or a space) before each line of oldText, `+` (or a space)
    /// before each line of newText.
    DiffPrefixes,
    /// One level of JSON escaping too many: `\n` for newlines, `\"` for quotes.
    JsonEscaped,
    /// `&lt;`, `&gt;` and `&amp;` for `<`, `>` and `&`.
    HtmlEntities,
}

impl Wrapper {
    /// Every wrapper, in the order they are tried.
    pub(crate) const ALL: [Wrapper; 4] = [
        Wrapper::CodeFence,
        Wrapper::DiffPrefixes,
        Wrapper::JsonEscaped,
        Wrapper::HtmlEntities,
    ];

    /// The wrapper in words, for a sentence.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Wrapper::CodeFence => "a Markdown code fence",
            Wrapper::DiffPrefixes => "unified-diff prefixes (- and + before each line)",
            Wrapper::JsonEscaped => "a second level of JSON escaping (\\n for newlines)",
            Wrapper::HtmlEntities => "HTML entities (&lt; &gt; &amp; for < > &)",
        }
    }

    /// Both texts (LF-only) without this wrapper, when both carry it.
    pub(crate) fn unwrap(self, old: &str, new: &str) -> Option<(String, String)> {
        match self {
            Wrapper::CodeFence => Some((unfence(old)?, unfence(new)?)),
            Wrapper::DiffPrefixes => Some((unprefix(old, '-')?, unprefix_new(new)?)),
            Wrapper::JsonEscaped => {
                // Newlines sent as backslash-n, or quotes as backslash-quote.
                if !old.contains('\\') {
                    return None;
                }
                Some((unescape_json(old)?, unescape_json(new)?))
            }
            Wrapper::HtmlEntities => {
                let entity = |t: &str| ["&lt;", "&gt;", "&amp;"].iter().any(|e| t.contains(e));
                // newText with a bare < or > was not escaped the way oldText was.
                if !entity(old) || new.contains(['<', '>']) || old.contains(['<', '>']) {
                    return None;
                }
                Some((unescape_html(old), unescape_html(new)))
            }
        }
    }
}

/// The lines of a text, a final newline ending the last line rather than starting one.
fn lines(text: &str) -> (Vec<&str>, bool) {
    let terminated = text.ends_with('\n');
    let body = text.strip_suffix('\n').unwrap_or(text);
    (body.split('\n').collect(), terminated)
}

/// The text inside a code fence that is its first and last line.
fn unfence(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .trim_end_matches([' ', '\t', '\n'])
        .split('\n')
        .collect();
    if lines.len() < 2 {
        return None;
    }
    let (first, last) = (lines[0].trim(), lines[lines.len() - 1].trim());
    let mark = ["```", "~~~"].into_iter().find(|m| first.starts_with(m))?;
    let c = if mark == "```" { '`' } else { '~' };
    // An info string (a language) may follow the opening mark; the closing line is the
    // mark alone.
    let info = first.trim_start_matches(c);
    if info.contains(['`', '~'])
        || !last.starts_with(mark)
        || !last.trim_start_matches(c).is_empty()
    {
        return None;
    }
    Some(lines[1..lines.len() - 1].join("\n"))
}

/// oldText without a `-` (or a space, for a context line) before each line: at least one
/// line has `mark`, and none looks like a file header (`---`).
fn unprefix(text: &str, mark: char) -> Option<String> {
    let (lines, terminated) = lines(text);
    if !lines.iter().any(|l| l.starts_with(mark)) {
        return None;
    }
    let header = format!("{mark}{mark}{mark}");
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.starts_with(&header) {
            return None;
        }
        match line.chars().next() {
            None => out.push(""),
            Some(c) if c == mark || c == ' ' => out.push(&line[1..]),
            Some(_) => return None,
        }
    }
    let mut text = out.join("\n");
    if terminated {
        text.push('\n');
    }
    Some(text)
}

/// newText without its `+` prefixes; an empty newText (a deletion) has none to remove.
fn unprefix_new(text: &str) -> Option<String> {
    if text.is_empty() {
        return Some(String::new());
    }
    unprefix(text, '+')
}

/// A text JSON-escaped once more than meant, unescaped (`None` when it is not valid escaped
/// JSON string content).
fn unescape_json(text: &str) -> Option<String> {
    serde_json::from_str::<String>(&format!("\"{text}\"")).ok()
}

fn unescape_html(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// An edit whose texts were found only without a wrapper, as the result's details say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WrapperRemoved {
    /// Index of the edit in `edits`.
    pub edit: usize,
    /// The wrapper removed from both texts.
    pub wrapper: Wrapper,
    /// The sentence the result text gives.
    pub note: String,
}

impl WrapperRemoved {
    pub(crate) fn new(edit: usize, wrapper: Wrapper) -> Self {
        WrapperRemoved {
            edit,
            wrapper,
            note: format!(
                "oldText and newText came in {}, which the file does not have there; it was removed from both. Send the text as the file has it, without it.",
                wrapper.words()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unwrap(w: Wrapper, old: &str, new: &str) -> Option<(String, String)> {
        w.unwrap(old, new)
    }

    #[test]
    fn each_wrapper_unwraps_both_texts_or_neither() {
        let pair = |a: &str, b: &str| Some((a.to_string(), b.to_string()));
        assert_eq!(
            unwrap(
                Wrapper::CodeFence,
                "```rust\na();\n```",
                "```rust\nb();\n```\n"
            ),
            pair("a();", "b();")
        );
        assert_eq!(unwrap(Wrapper::CodeFence, "```\na();\n```", "b();"), None);
        assert_eq!(
            unwrap(Wrapper::DiffPrefixes, "-a\n b\n", "+c\n b\n"),
            pair("a\nb\n", "c\nb\n")
        );
        assert_eq!(unwrap(Wrapper::DiffPrefixes, "-a\nb", "+c"), None);
        assert_eq!(
            unwrap(Wrapper::JsonEscaped, "a\\n\\tb(\\\"x\\\")", "c\\nd"),
            pair("a\n\tb(\"x\")", "c\nd")
        );
        assert_eq!(unwrap(Wrapper::JsonEscaped, "a\\nb", "c\nd"), None);
        assert_eq!(
            unwrap(Wrapper::HtmlEntities, "a &lt; b &amp;&amp; c", "a &gt; b"),
            pair("a < b && c", "a > b")
        );
        assert_eq!(unwrap(Wrapper::HtmlEntities, "a &lt; b", "a < c"), None);
    }
}
