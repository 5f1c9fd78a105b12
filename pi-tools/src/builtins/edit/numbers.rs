//! Line numbers copied into `oldText` from tool output that carries them: `cat -n` and
//! `nl -ba` (`     12\t`), the arrow other agents' read tools print (`12→`), `12 | `, and
//! grep (`path:12:` or `12:`, `-` for context lines, and a space after them as pi-tools'
//! own grep prints, which is read both ways). Such an oldText occurs nowhere; the
//! prefixes are removed only when they are certainly this file's line numbers: every line
//! carries one of one style, the numbers are consecutive, and the text without them matches
//! one place that starts at the line the first number names (checked in `apply.rs`).
//! Pure text; also finds the lines that stand for code left out (`// ... existing code ...`).

/// A style of line-number prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// `cat -n` and `nl -ba`: the number right-aligned, then a tab.
    CatN,
    /// The number, then `→`.
    Arrow,
    /// The number, then ` | `.
    Bar,
    /// grep's `path:12:` or `12:`, with `-` for context lines.
    Grep,
}

const STYLES: [Style; 4] = [Style::CatN, Style::Arrow, Style::Bar, Style::Grep];

impl Style {
    /// Its name in the result's details.
    pub fn name(self) -> &'static str {
        match self {
            Style::CatN => "cat -n",
            Style::Arrow => "arrow",
            Style::Bar => "bar",
            Style::Grep => "grep",
        }
    }

    /// Its name in a sentence.
    pub fn words(self) -> &'static str {
        match self {
            Style::CatN => "cat -n/nl -ba",
            Style::Arrow => "arrow",
            Style::Bar => "number-and-bar",
            Style::Grep => "grep",
        }
    }

    /// The number and the prefix's length in bytes, when `line` starts with one (for grep,
    /// after `path` and with the same separator on both sides of the number).
    fn parse(self, line: &str, path: &str) -> Option<(usize, usize)> {
        let (rest, lead) = match self {
            Style::Grep => (line.strip_prefix(path)?, path.len()),
            _ => {
                let rest = line.trim_start_matches(' ');
                (rest, line.len() - rest.len())
            }
        };
        let rest_after_sep;
        let sep = if self == Style::Grep && !path.is_empty() {
            let sep = rest.chars().next().filter(|c| matches!(c, ':' | '-'))?;
            rest_after_sep = &rest[1..];
            Some(sep)
        } else {
            rest_after_sep = rest;
            None
        };
        let digits = rest_after_sep
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest_after_sep.len());
        if digits == 0 || digits > 9 {
            return None;
        }
        let number = rest_after_sep[..digits].parse().ok()?;
        let after = &rest_after_sep[digits..];
        let tail = match self {
            Style::CatN if after.is_empty() => 0,
            Style::CatN => after.starts_with('\t').then_some(1)?,
            Style::Arrow => after.starts_with('→').then_some('→'.len_utf8())?,
            Style::Bar if after == " |" => 2,
            Style::Bar => after.starts_with(" | ").then_some(3)?,
            Style::Grep => {
                let c = after.chars().next().filter(|c| matches!(c, ':' | '-'))?;
                if sep.is_some_and(|sep| sep != c) {
                    return None;
                }
                1
            }
        };
        let prefix = lead + usize::from(sep.is_some()) + digits + tail;
        Some((number, prefix))
    }
}

/// An oldText whose every line carries a line number, without them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Numbered {
    pub style: Style,
    /// The path grep printed before the numbers (empty when none).
    path: String,
    /// The first line's number.
    pub first: usize,
    /// The first line's prefix as sent, for messages (`7\t` shown as `7\\t`).
    pub example: String,
    /// oldText without the prefixes.
    pub text: String,
    /// For grep: oldText without the prefixes and the one space after each, when every line
    /// has one there or ends at the prefix (pi-tools' own grep prints `path:12: text`, GNU
    /// grep `path:12:text`, and which one was copied shows only in the file).
    pub spaced: Option<String>,
}

/// Why numbered lines were not stripped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unfit {
    /// Line `line` of oldText (1-based) carries no prefix of the style.
    Missing { line: usize },
    /// Line `line` of oldText carries `number` after `previous`.
    NotConsecutive {
        line: usize,
        number: usize,
        previous: usize,
    },
}

/// What the first line's prefix says about oldText.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prefixes {
    /// Its first line carries none.
    None,
    /// Every line carries one of one style, in consecutive numbers.
    Numbered(Numbered),
    /// The first line carries one, but not all of them fit: the style, the first prefix,
    /// and why.
    Unfit(Style, String, Unfit),
}

/// oldText's lines, a final newline ending the last one.
fn lines_of(text: &str) -> Vec<&str> {
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

/// The grep paths the first line can be read with: every prefix followed by a separator,
/// digits and the same separator, and no path at all.
fn grep_paths(line: &str) -> Vec<String> {
    let mut paths = vec![String::new()];
    for (i, _) in line.char_indices().filter(|(_, c)| matches!(c, ':' | '-')) {
        if i > 0 && Style::Grep.parse(line, &line[..i]).is_some() {
            paths.push(line[..i].to_string());
        }
    }
    paths
}

/// Whether a line reads as grep's line that matched: `12:` at its start, or `:12:` after a
/// path.
fn grep_match_line(line: &str) -> bool {
    let number_then_colon = |rest: &str| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        digits > 0 && rest[digits..].starts_with(':')
    };
    number_then_colon(line)
        || line
            .match_indices(':')
            .any(|(i, _)| number_then_colon(&line[i + 1..]))
}

/// Reads oldText's line numbers (see the module).
pub(crate) fn detect(old: &str) -> Prefixes {
    let lines = lines_of(old);
    let mut unfit = None;
    for style in STYLES {
        // Bare numbers are lines of numbers, unless some line has the tab after its number.
        let tabbed = |line: &&str| {
            line.trim_start_matches(' ')
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .starts_with('\t')
        };
        if style == Style::CatN && !lines.iter().any(tabbed) {
            continue;
        }
        // grep prints `:` after the number of a line that matched, `-` only for the lines
        // around one: a text of context lines alone (`3-2`) is taken as it is.
        if style == Style::Grep && !lines.iter().any(|line| grep_match_line(line)) {
            continue;
        }
        let paths = match style {
            Style::Grep => grep_paths(lines[0]),
            _ => vec![String::new()],
        };
        for path in paths {
            let Some((first, len)) = style.parse(lines[0], &path) else {
                continue;
            };
            let example = lines[0][..len].trim_start().replace('\t', "\\t");
            match strip(&lines, style, &path) {
                Ok(rests) => {
                    let spaced = (style == Style::Grep)
                        .then(|| without_space(&rests))
                        .flatten()
                        .map(|rests| joined(&rests, old));
                    return Prefixes::Numbered(Numbered {
                        style,
                        path,
                        first,
                        example,
                        text: joined(&rests, old),
                        spaced,
                    });
                }
                Err(why) => {
                    unfit.get_or_insert(Prefixes::Unfit(style, example, why));
                }
            }
        }
    }
    unfit.unwrap_or(Prefixes::None)
}

/// `lines` joined, with a final newline when `like` has one.
fn joined(lines: &[&str], like: &str) -> String {
    let mut text = lines.join("\n");
    if like.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// The lines without the one space they start with, when each starts with one or is empty.
fn without_space<'a>(lines: &[&'a str]) -> Option<Vec<&'a str>> {
    lines
        .iter()
        .map(|line| {
            if line.is_empty() {
                Some(*line)
            } else {
                line.strip_prefix(' ')
            }
        })
        .collect()
}

/// The lines without their prefixes, when each carries one and they count up by one.
fn strip<'a>(lines: &[&'a str], style: Style, path: &str) -> Result<Vec<&'a str>, Unfit> {
    let mut out = Vec::with_capacity(lines.len());
    let mut previous = None;
    for (i, line) in lines.iter().enumerate() {
        let (number, len) = style
            .parse(line, path)
            .ok_or(Unfit::Missing { line: i + 1 })?;
        if let Some(previous) = previous
            && number != previous + 1
        {
            return Err(Unfit::NotConsecutive {
                line: i + 1,
                number,
                previous,
            });
        }
        previous = Some(number);
        out.push(&line[len..]);
    }
    Ok(out)
}

/// newText without the prefixes of oldText's style (and, when `spaced`, the space after
/// each), when every line of it carries one (its numbers need not count up: lines were added
/// and removed).
pub(crate) fn strip_new(new: &str, numbered: &Numbered, spaced: bool) -> Option<String> {
    if new.is_empty() {
        return None;
    }
    let lines = lines_of(new);
    let mut out = Vec::with_capacity(lines.len());
    for line in &lines {
        let (_, len) = numbered.style.parse(line, &numbered.path)?;
        out.push(&line[len..]);
    }
    if spaced {
        out = without_space(&out)?;
    }
    Some(joined(&out, new))
}

/// The first line of `old` that stands for lines left out (`// ... existing code ...`,
/// `# ...`, a lone `...`): its number (1-based) and its text, trimmed.
pub(crate) fn elision(old: &str) -> Option<(usize, &str)> {
    const WORDS: [&str; 9] = [
        "existing",
        "rest",
        "unchanged",
        "omitted",
        "remaining",
        "same",
        "code",
        "more",
        "etc",
    ];
    old.split('\n').enumerate().find_map(|(i, line)| {
        let trimmed = line.trim();
        let mut inner = trimmed;
        for leader in ["<!--", "//", "/*", "#", "--", ";", "*"] {
            if let Some(rest) = inner.strip_prefix(leader) {
                inner = rest.trim_start();
                break;
            }
        }
        for trailer in ["-->", "*/"] {
            if let Some(rest) = inner.strip_suffix(trailer) {
                inner = rest.trim_end();
            }
        }
        let rest = inner
            .strip_prefix("...")
            .or_else(|| inner.strip_prefix('…'))?
            .trim()
            .to_lowercase();
        (rest.is_empty() || WORDS.iter().any(|w| rest.contains(w))).then_some((i + 1, trimmed))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(old: &str) -> Numbered {
        match detect(old) {
            Prefixes::Numbered(n) => n,
            other => panic!("{old:?}: {other:?}"),
        }
    }

    #[test]
    fn styles() {
        let n = numbered("    12\ta\n    13\t\n    14\t  b\n");
        assert_eq!(
            (n.style, n.first, n.text.as_str()),
            (Style::CatN, 12, "a\n\n  b\n")
        );
        assert_eq!(n.example, "12\\t");
        assert_eq!(numbered("9→x\n10→y").text, "x\ny");
        assert_eq!(numbered(" 9 | x\n10 |\n11 | y").text, "x\n\ny");
        let n = numbered("a-b.rs-9-x\na-b.rs:10:y");
        assert_eq!(
            (n.style, n.text.as_str(), n.example.as_str()),
            (Style::Grep, "x\ny", "a-b.rs-9-")
        );
        assert_eq!(numbered("9:x\n10-y").text, "x\ny");
        assert_eq!(detect("3-2\n4-1"), Prefixes::None);
        assert_eq!(detect("let a = 1;\nb"), Prefixes::None);
        assert_eq!(
            detect("3→a\n5→b"),
            Prefixes::Unfit(
                Style::Arrow,
                "3→".into(),
                Unfit::NotConsecutive {
                    line: 2,
                    number: 5,
                    previous: 3
                }
            )
        );
        let n = numbered("3→a\n4→b");
        assert_eq!(n.spaced, None);
        assert_eq!(
            strip_new("7→c\n9→d\n", &n, false).as_deref(),
            Some("c\nd\n")
        );
        assert_eq!(strip_new("c\n9→d", &n, false), None);
        // pi-tools' grep puts a space after the number, GNU grep does not.
        let n = numbered("a.rs:3:  x\na.rs-4-\na.rs-5- y\n");
        assert_eq!(n.text, "  x\n\n y\n");
        assert_eq!(n.spaced.as_deref(), Some(" x\n\ny\n"));
        assert_eq!(numbered("3:x\n4: y").spaced, None);
        assert_eq!(
            strip_new("a.rs:3: z\na.rs:4: w", &n, true).as_deref(),
            Some("z\nw")
        );
        assert_eq!(strip_new("a.rs:3: z\na.rs:4:w", &n, true), None);
    }

    #[test]
    fn elisions() {
        assert_eq!(
            elision("a\n  // ... existing code ...\nb"),
            Some((2, "// ... existing code ..."))
        );
        assert_eq!(elision("a\n    ...\n"), Some((2, "...")));
        assert_eq!(elision("# ..."), Some((1, "# ...")));
        assert_eq!(elision("/* … */"), Some((1, "/* … */")));
        assert_eq!(elision("f(...args)\nx = [...]"), None);
    }
}
