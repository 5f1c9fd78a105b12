//! Stale resends: an edit sent again after it was applied, or written against the file as
//! the model remembers it. Its oldText then no longer matches exactly, and a forgiving stage
//! may find a look-alike of it next to the change already made (a block already wrapped in a
//! call, a line already inserted). When the lines of the edited window, indentation and
//! blank lines set aside, are already in the file around the match, the edit looks already
//! applied and is refused. So it does when newText as it was sent (two lines with text or
//! more, saying something oldText does not) is already in the file, with its indentation:
//! the change was made where the model remembers it, and the forgiving stage found a
//! look-alike of the old text somewhere else (a copy in a test module, at another depth).
//! Exact matches are taken as meant.

use super::indent::LineRange;
use super::lines::Line;

/// The lines of `text` (LF-only) with text, as the line-based stages compare them: their
/// 0-based numbers and their keys (indentation and trailing blanks aside, fuzzy form).
fn keys(text: &str, first_no: usize) -> Vec<(usize, String)> {
    text.split('\n')
        .enumerate()
        .map(|(i, line)| (first_no + i, Line::new(line).key.into_owned()))
        .filter(|(_, key)| !key.is_empty())
        .collect()
}

/// Where the edit that replaces `start..end` of `text` (LF-only) with `new_text` looks
/// already applied: the lines of the window it edits, and the lines of the file around it
/// that already read as the edited window. `None` when nothing says so.
pub(crate) fn already_applied(
    text: &str,
    start: usize,
    end: usize,
    new_text: &str,
) -> Option<(LineRange, LineRange)> {
    let bytes = text.as_bytes();
    let line_start = memchr::memrchr(b'\n', &bytes[..start]).map_or(0, |nl| nl + 1);
    // The end of the line of the window's last character (a window is never empty).
    let last = end.saturating_sub(1).max(start).min(text.len());
    let line_end = memchr::memchr(b'\n', &bytes[last..]).map_or(text.len(), |nl| last + nl);
    let first_no = memchr::memchr_iter(b'\n', &bytes[..line_start]).count();
    let window = keys(&text[line_start..line_end], first_no);
    let edited = format!(
        "{}{new_text}{}",
        &text[line_start..start],
        &text[end.min(line_end)..line_end]
    );
    let edited: Vec<String> = keys(&edited, 0).into_iter().map(|(_, k)| k).collect();
    let same = |run: &[(usize, String)]| run.iter().map(|(_, k)| k).eq(edited.iter());
    // An edit of whitespace or blank lines only, or one that deletes lines, reads as
    // something already in its window.
    if edited.is_empty() || window.is_empty() || window.windows(edited.len()).any(same) {
        return None;
    }
    // The window with as many lines with text before and after it as the edited window has.
    let reach = edited.len();
    let mut before = Vec::new();
    let mut at = line_start;
    let mut no = first_no;
    while before.len() < reach && at > 0 {
        let from = memchr::memrchr(b'\n', &bytes[..at - 1]).map_or(0, |nl| nl + 1);
        no -= 1;
        let key = Line::new(&text[from..at - 1]).key.into_owned();
        if !key.is_empty() {
            before.push((no, key));
        }
        at = from;
    }
    before.reverse();
    let after_from = (line_end + 1).min(text.len());
    let last_no = first_no + memchr::memchr_iter(b'\n', &bytes[line_start..line_end]).count();
    // Lazily: only the first few lines after the window are read, however long the file.
    let after: Vec<(usize, String)> = if line_end < text.len() {
        text[after_from..]
            .split('\n')
            .enumerate()
            .map(|(i, line)| (last_no + 1 + i, Line::new(line).key.into_owned()))
            .filter(|(_, key)| !key.is_empty())
            .take(reach)
            .collect()
    } else {
        Vec::new()
    };
    let (lead, inner) = (before.len(), window.len());
    let around: Vec<(usize, String)> = before.into_iter().chain(window).chain(after).collect();
    // A run that reads as the edited window, overlaps the window and reaches past it.
    (0..=around.len().saturating_sub(reach))
        .filter(|&p| p + reach <= around.len() && same(&around[p..p + reach]))
        .find(|&p| p < lead + inner && p + reach > lead && (p < lead || p + reach > lead + inner))
        .map(|p| {
            let lines = |a: usize, b: usize| LineRange {
                first: a + 1,
                last: b + 1,
            };
            (
                lines(first_no, last_no),
                lines(around[p].0, around[p + reach - 1].0),
            )
        })
}

/// Where `new_text` (LF-only, as sent) is in `text` already, its lines with text one for
/// one with their indentation (blank lines and trailing blanks aside, fuzzy form), when it
/// has two lines with text or more and they are not a run of `old`'s (an edit that only
/// deletes or re-indents lines says nothing new). `None` when it is not.
pub(crate) fn sent_text_present(text: &str, old: &str, new_text: &str) -> Option<LineRange> {
    let lines = |s: &'_ str| -> Vec<(String, String)> {
        s.split('\n')
            .map(Line::new)
            .filter(|line| !line.is_blank())
            .map(|line| (line.indent.to_string(), line.key.into_owned()))
            .collect()
    };
    let wanted = lines(new_text);
    if wanted.len() < 2 {
        return None;
    }
    let old_keys: Vec<String> = lines(old).into_iter().map(|(_, key)| key).collect();
    if old_keys
        .windows(wanted.len())
        .any(|run| run.iter().eq(wanted.iter().map(|(_, key)| key)))
    {
        return None;
    }
    // The last lines with text of the file, as many as newText has, with their numbers.
    let m = wanted.len();
    let mut run: std::collections::VecDeque<(usize, Line<'_>)> =
        std::collections::VecDeque::with_capacity(m);
    for (no, line) in text.split('\n').enumerate() {
        let line = Line::new(line);
        if line.is_blank() {
            continue;
        }
        if run.len() == m {
            run.pop_front();
        }
        run.push_back((no, line));
        if run.len() == m
            && run
                .iter()
                .zip(&wanted)
                .all(|((_, line), (indent, key))| line.indent == indent && line.key == *key)
        {
            return Some(LineRange {
                first: run[0].0 + 1,
                last: run[m - 1].0 + 1,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, old: &str, new: &str) -> Option<(LineRange, LineRange)> {
        let start = text.find(old).unwrap();
        already_applied(text, start, start + old.len(), new)
    }

    #[test]
    fn changes_already_around_the_window() {
        let wrapped = "f {\n  w(|| {\n    a();\n    b();\n  });\n}\n";
        assert_eq!(
            check(
                wrapped,
                "    a();\n    b();",
                "  w(|| {\n    a();\n    b();\n  });"
            ),
            Some((
                LineRange { first: 3, last: 4 },
                LineRange { first: 2, last: 5 }
            ))
        );
        // Inserted after, mid-line start.
        assert_eq!(
            check("x = a();\n\ny = b();\n", "a();", "a();\n\ny = b();"),
            Some((
                LineRange { first: 1, last: 1 },
                LineRange { first: 1, last: 3 }
            ))
        );
        // A real change, a deletion, a whitespace change.
        assert_eq!(check(wrapped, "    a();", "    c();"), None);
        assert_eq!(check(wrapped, "    a();\n    b();\n", "    a();\n"), None);
        assert_eq!(check(wrapped, "    a();", "\ta();"), None);
    }

    #[test]
    fn sent_text_already_elsewhere() {
        let file = "fn f() {\n    a();\n\n    c();\n}\nfn t() {\n        a();\n        b();\n}\n";
        let old = "    a();\n    b();";
        assert_eq!(
            sent_text_present(file, old, "    a();\n    c();"),
            Some(LineRange { first: 2, last: 4 })
        );
        // At another depth, one line, or only oldText's own lines: nothing to say.
        assert_eq!(sent_text_present(file, old, "  a();\n  c();"), None);
        assert_eq!(sent_text_present(file, old, "    c();"), None);
        assert_eq!(
            sent_text_present(file, old, "        a();\n        b();"),
            None
        );
    }
}
