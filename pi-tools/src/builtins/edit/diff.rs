//! The diffs an edit reports: a numbered one for people and a unified patch for programs.
//!
//! Only the window between the first and the last differing line (plus context) is diffed:
//! an edit of one line in a large file costs the same as in a small one.

use similar::{Algorithm, ChangeTag, DiffTag, capture_diff_slices};

/// Lines of context around each change in the numbered diff.
const CONTEXT: usize = 4;
/// Lines of context around each hunk of the unified patch.
const PATCH_CONTEXT: usize = 3;

/// The diffs of one edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDiff {
    /// `+12 text` / `-12 text` / ` 12 text` lines, gaps shown as `...`.
    pub numbered: String,
    /// A unified patch (3 lines of context).
    pub patch: String,
    /// The first changed line, numbered in the new file.
    pub first_changed_line: Option<usize>,
}

/// One line of the diffed window: its tag, 0-based old and new line indices, and its text
/// (with its newline, if it has one).
struct Row<'a> {
    tag: ChangeTag,
    old: usize,
    new: usize,
    text: &'a str,
}

/// Where a diffed window of whole lines sits in its file: lines before it and after it,
/// the same in the old and the new text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Window {
    pub lines_before: usize,
    pub lines_after: usize,
}

/// Diffs two LF-only texts line by line.
pub(crate) fn diff(old: &str, new: &str, path: &str) -> EditDiff {
    diff_window(old, new, path, Window::default())
}

/// Diffs two LF-only windows of whole lines of a file, line by line, numbering the lines as
/// in the whole file. Every difference must lie in the windows, with at least `CONTEXT`
/// equal lines around it or the file's ends.
pub(crate) fn diff_window(old: &str, new: &str, path: &str, window: Window) -> EditDiff {
    let Window {
        lines_before: before,
        lines_after: after,
    } = window;
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let (old_total, new_total) = (
        before + old_lines.len() + after,
        before + new_lines.len() + after,
    );
    let width = old_total.max(new_total).max(1).to_string().len();

    let prefix = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let room = old_lines.len().min(new_lines.len()) - prefix;
    let suffix = old_lines
        .iter()
        .rev()
        .zip(new_lines.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let from = prefix.saturating_sub(CONTEXT);
    let keep_after = suffix.saturating_sub(CONTEXT);
    let (old_to, new_to) = (old_lines.len() - keep_after, new_lines.len() - keep_after);

    let rows = rows(
        &old_lines[from..old_to],
        &new_lines[from..new_to],
        before + from,
    );
    let first_changed_line = rows
        .iter()
        .find(|r| r.tag != ChangeTag::Equal)
        .map(|r| r.new + 1);
    let trailing_gap = old_to < old_lines.len() || after > 0;
    EditDiff {
        numbered: numbered(&rows, before + from > 0, trailing_gap, width),
        patch: unified(&rows, path, old_total, new_total),
        first_changed_line,
    }
}

/// The rows of a line diff of `old` and `new`, numbered as in the file, where the lines
/// diffed start after `offset` lines. A changed line is shown at the line of the other side
/// where the change stands: a deleted line before the new lines, an inserted one after the
/// old lines.
fn rows<'a>(old: &[&'a str], new: &[&'a str], offset: usize) -> Vec<Row<'a>> {
    let row = |tag, o: usize, n: usize, text| Row {
        tag,
        old: offset + o,
        new: offset + n,
        text,
    };
    let mut rows = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, old, new) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            rows.extend(
                old_range
                    .zip(new_range)
                    .map(|(o, n)| row(ChangeTag::Equal, o, n, old[o])),
            );
            continue;
        }
        // A delete has no new lines and an insert no old ones; a replace has both.
        rows.extend(
            old_range
                .clone()
                .map(|o| row(ChangeTag::Delete, o, new_range.start, old[o])),
        );
        rows.extend(new_range.map(|n| row(ChangeTag::Insert, old_range.end, n, new[n])));
    }
    rows
}

fn near_changes(rows: &[Row<'_>], radius: usize) -> Vec<bool> {
    let mut near = vec![false; rows.len()];
    for (i, r) in rows.iter().enumerate() {
        if r.tag != ChangeTag::Equal {
            let to = (i + radius + 1).min(rows.len());
            near[i.saturating_sub(radius)..to]
                .iter_mut()
                .for_each(|n| *n = true);
        }
    }
    near
}

fn numbered(rows: &[Row<'_>], leading_gap: bool, trailing_gap: bool, width: usize) -> String {
    let near = near_changes(rows, CONTEXT);
    let gap_line = format!(" {:>width$} ...\n", "");
    let mut out = String::new();
    let mut gap = leading_gap;
    for (r, near) in rows.iter().zip(&near) {
        if !near {
            gap = true;
            continue;
        }
        if gap {
            out.push_str(&gap_line);
            gap = false;
        }
        // Removed lines carry their old number; the others their number in the new file,
        // which is what the model sees when it reads the file again.
        let (sign, number) = match r.tag {
            ChangeTag::Insert => ('+', r.new + 1),
            ChangeTag::Delete => ('-', r.old + 1),
            ChangeTag::Equal => (' ', r.new + 1),
        };
        let text = r.text.strip_suffix('\n').unwrap_or(r.text);
        out.push_str(&format!("{sign}{number:>width$} {text}\n"));
    }
    if gap || trailing_gap {
        out.push_str(&gap_line);
    }
    out.pop();
    out
}

fn unified(rows: &[Row<'_>], path: &str, old_total: usize, new_total: usize) -> String {
    let near = near_changes(rows, PATCH_CONTEXT);
    let mut out = String::new();
    let mut i = 0;
    while i < rows.len() {
        if !near[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < rows.len() && near[i] {
            i += 1;
        }
        let hunk = &rows[start..i];
        let old_count = hunk.iter().filter(|r| r.tag != ChangeTag::Insert).count();
        let new_count = hunk.iter().filter(|r| r.tag != ChangeTag::Delete).count();
        let old_start = hunk[0].old + usize::from(old_count > 0);
        let new_start = hunk[0].new + usize::from(new_count > 0);
        if out.is_empty() {
            out.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
        }
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_start, old_count),
            hunk_range(new_start, new_count)
        ));
        for r in hunk {
            out.push(match r.tag {
                ChangeTag::Insert => '+',
                ChangeTag::Delete => '-',
                ChangeTag::Equal => ' ',
            });
            out.push_str(r.text);
            if !r.text.ends_with('\n') {
                let last = match r.tag {
                    ChangeTag::Insert => r.new + 1 == new_total,
                    ChangeTag::Delete => r.old + 1 == old_total,
                    ChangeTag::Equal => r.new + 1 == new_total,
                };
                out.push('\n');
                if last {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

/// A hunk header's range: `start` alone for one line, `start,count` otherwise.
fn hunk_range(start: usize, count: usize) -> String {
    if count == 1 {
        start.to_string()
    } else {
        format!("{start},{count}")
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
        assert_eq!(
            d.patch,
            "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n"
        );
    }

    #[test]
    fn patch_matches_a_reference_implementation() {
        let cases = [
            ("a\nb\nc\n", "a\nc\n"),
            ("a\nb\nc\n", "x\na\nb\nc\n"),
            ("a\nb", "a\nB"),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
                "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n",
            ),
            ("", "new\n"),
        ];
        for (old, new) in cases {
            let ours = diff(old, new, "f").patch;
            let reference = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(3)
                .header("a/f", "b/f")
                .to_string();
            assert_eq!(ours, reference, "{old:?} -> {new:?}");
        }
    }
}
