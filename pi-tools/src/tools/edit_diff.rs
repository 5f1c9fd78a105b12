//! The diffs an edit reports: a numbered one for people and a unified patch for programs.

use similar::{ChangeTag, TextDiff};

/// Lines of context around each change in the numbered diff.
const CONTEXT: usize = 4;

/// The diffs of one edit.
pub(crate) struct EditDiff {
    /// `+12 text` / `-12 text` / ` 12 text` lines, gaps shown as `...`.
    pub numbered: String,
    /// A unified patch (3 lines of context).
    pub patch: String,
    /// The first changed line, numbered in the new file.
    pub first_changed_line: Option<usize>,
}

/// Diffs two LF-only texts line by line.
pub(crate) fn diff(old: &str, new: &str, path: &str) -> EditDiff {
    let diff = TextDiff::from_lines(old, new);
    let width = old
        .lines()
        .count()
        .max(new.lines().count())
        .max(1)
        .to_string()
        .len();

    // (tag, number shown, text) for every line, then keep those near a change.
    let mut rows: Vec<(ChangeTag, usize, &str)> = Vec::new();
    let mut first_changed_line = None;
    for change in diff.iter_all_changes() {
        let text = change.value().strip_suffix('\n').unwrap_or(change.value());
        // Removed lines carry their old number; the others their number in the new file,
        // which is what the model will see when it reads the file again.
        let number = match change.tag() {
            ChangeTag::Delete => change.old_index().map_or(0, |i| i + 1),
            _ => change.new_index().map_or(0, |i| i + 1),
        };
        if change.tag() != ChangeTag::Equal && first_changed_line.is_none() {
            first_changed_line = Some(match change.new_index() {
                Some(i) => i + 1,
                // A deletion: the line that now stands where it was.
                None => rows
                    .iter()
                    .filter(|r| r.0 != ChangeTag::Delete)
                    .count()
                    .saturating_add(1),
            });
        }
        rows.push((change.tag(), number, text));
    }
    let mut near = vec![false; rows.len()];
    for (i, row) in rows.iter().enumerate() {
        if row.0 != ChangeTag::Equal {
            let from = i.saturating_sub(CONTEXT);
            let to = (i + CONTEXT + 1).min(rows.len());
            near[from..to].iter_mut().for_each(|n| *n = true);
        }
    }
    let mut numbered = String::new();
    let mut gap = false;
    for (i, (tag, number, text)) in rows.iter().enumerate() {
        if !near[i] {
            gap = true;
            continue;
        }
        if gap {
            numbered.push_str(&format!(" {:>width$} ...\n", ""));
        }
        gap = false;
        let sign = match tag {
            ChangeTag::Insert => '+',
            ChangeTag::Delete => '-',
            ChangeTag::Equal => ' ',
        };
        numbered.push_str(&format!("{sign}{number:>width$} {text}\n"));
    }
    if gap && !numbered.is_empty() {
        numbered.push_str(&format!(" {:>width$} ...\n", ""));
    }
    numbered.pop();

    let patch = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    EditDiff {
        numbered,
        patch,
        first_changed_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_diff_with_context_and_gaps() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 10\n", "line ten\n");
        let d = diff(&old, &new, "f.txt");
        let expected = "    ...\n  6 line 6\n  7 line 7\n  8 line 8\n  9 line 9\n-10 line 10\n+10 line ten\n 11 line 11\n 12 line 12\n 13 line 13\n 14 line 14\n    ...";
        assert_eq!(d.numbered, expected);
        assert_eq!(d.first_changed_line, Some(10));
        assert!(
            d.patch
                .starts_with("--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n"),
            "{}",
            d.patch
        );
    }
}
