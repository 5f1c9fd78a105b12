//! Mapping `newText` back onto a window found by the blank-line stage: the file's blank lines
//! stay where they were relative to the unchanged lines around them, and the blank lines that
//! `newText` adds or removes relative to `oldText` are added or removed.
//!
//! Which lines `newText` keeps is a line diff of `oldText` and `newText`. At each place where
//! the file's blank lines differ from `oldText`'s, the difference is carried over to the run
//! of blank lines next to an unchanged neighbour: after the line before the place, or before
//! the line after it (the window's edges count as unchanged). Lines that newText replaces one
//! for one count as neighbours too: between them is the only place where both texts line up
//! with the file. Where the neighbours were replaced by more or fewer lines, or new text was
//! put between two unchanged ones, the place of the file's blank lines in the new text is
//! not defined, and the edit is refused.

use std::collections::BTreeMap;

use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::blank::Gap;
use super::lines::Line;

/// Why `newText` could not be mapped back: the file line (1-based) of a blank line, or of the
/// place where oldText had one, that falls among lines newText replaces with more or fewer
/// lines, or between two kept lines with new text put between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IllDefined {
    pub line: usize,
}

/// A text (LF-only) as lines: a final newline ends the last line rather than starting an
/// empty one, and an empty text has no lines.
struct Lines<'a> {
    lines: Vec<&'a str>,
    terminated: bool,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let terminated = text.ends_with('\n');
        let body = text.strip_suffix('\n').unwrap_or(text);
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            body.split('\n').collect()
        };
        Lines { lines, terminated }
    }
}

fn is_blank(line: &str) -> bool {
    Line::new(line).is_blank()
}

/// A run of blank lines of `newText` (maximal: text or an end on both sides) and how many
/// lines to add to it (negative: remove).
#[derive(Default)]
struct RunChange {
    end: usize,
    delta: i64,
    /// The file's blank lines that added lines are copied from.
    fill: Vec<String>,
}

/// `new_indented` (`new`, LF-only, with its indentation already transformed line for line)
/// with its blank lines adjusted to the file's `gaps` (one per place of `old`: before its
/// first line with text, between each two, after its last).
pub(crate) fn map_new_text(
    gaps: &[Gap],
    old: &str,
    new: &str,
    new_indented: &str,
) -> Result<String, IllDefined> {
    let old = Lines::new(old);
    let new_lines = Lines::new(new);
    let out_lines = Lines::new(new_indented);
    debug_assert_eq!(new_lines.lines.len(), out_lines.lines.len());
    let text_lines: Vec<usize> = (0..old.lines.len())
        .filter(|&i| !is_blank(old.lines[i]))
        .collect();
    debug_assert_eq!(text_lines.len() + 1, gaps.len());
    let (kept, kept_late) = kept_lines(&old.lines, &new_lines.lines);
    let n = new_lines.lines.len();
    let blank = |i: usize| is_blank(new_lines.lines[i]);
    // The run of blank lines starting at `from`, and the one ending at `to`.
    let run_after = |from: usize| (from, (from..n).find(|&i| !blank(i)).unwrap_or(n));
    let run_before = |to: usize| ((0..to).rev().find(|&i| !blank(i)).map_or(0, |i| i + 1), to);

    let mut runs: BTreeMap<usize, RunChange> = BTreeMap::new();
    for (g, gap) in gaps.iter().enumerate().filter(|(_, gap)| gap.drifts()) {
        let delta = gap.file.len() as i64 - gap.old as i64;
        // The new-text lines of the unchanged neighbours (the edges are unchanged).
        let neighbours = |kept: &[Option<usize>]| {
            let before = match g {
                0 => Some(0),
                _ => kept[text_lines[g - 1]].map(|i| i + 1),
            };
            let after = match text_lines.get(g) {
                Some(&i) => kept[i],
                None => Some(n),
            };
            (before, after)
        };
        let ill = IllDefined { line: gap.line };
        let (before, after) = neighbours(&kept);
        if neighbours(&kept_late) != (before, after) {
            // The lines next to the gap repeat in newText, and which copy they stay as is
            // not told by their text: the blank lines' place is not defined.
            return Err(ill);
        }
        let (start, end) = match (before, after) {
            (Some(from), Some(to)) => {
                if (from..to).all(blank) {
                    (from, to)
                } else if g == 0 {
                    run_after(from)
                } else if g == gaps.len() - 1 {
                    run_before(to)
                } else if delta < 0 && !(from..to).any(blank) {
                    // Nothing blank between to remove.
                    continue;
                } else {
                    return Err(ill);
                }
            }
            (Some(from), None) => run_after(from),
            (None, Some(to)) => run_before(to),
            (None, None) => return Err(ill),
        };
        let run = runs.entry(start).or_default();
        run.end = end;
        run.delta += delta;
        run.fill.extend(gap.file.iter().cloned());
    }

    let mut out: Vec<&str> = Vec::with_capacity(n + 4);
    let mut i = 0;
    for (&start, run) in &runs {
        out.extend_from_slice(&out_lines.lines[i..start]);
        let len = run.end - start;
        let target = usize::try_from(len as i64 + run.delta).unwrap_or(0);
        out.extend_from_slice(&out_lines.lines[start..start + len.min(target)]);
        let extra = target.saturating_sub(len);
        let fill = &run.fill[run.fill.len().saturating_sub(extra)..];
        out.extend(fill.iter().map(String::as_str));
        out.extend(std::iter::repeat_n("", extra - fill.len()));
        i = run.end;
    }
    out.extend_from_slice(&out_lines.lines[i..]);
    let mut text = out.join("\n");
    if out_lines.terminated && !out.is_empty() {
        text.push('\n');
    }
    Ok(text)
}

/// For each line of `old`, the line of `new` it stays as, or that replaces it: twice, the
/// earliest and the latest pairing, which differ where a kept line repeats in newText and
/// its text alone does not tell which copy it stays as. Only lines with text are compared:
/// blank lines are what is being placed. When newText has as many lines with text as
/// oldText, they are taken as replacing them line for line, by position (a line repeated in
/// the window would otherwise let a diff pair it with another copy of itself); otherwise a
/// line diff from the front and one from the back tell which were kept, and a run of
/// changed lines that newText replaces with as many lines is paired by position too. A line
/// paired by position gives the file's blank lines next to it the one place where both
/// texts line up with the file; lines replaced by more or fewer lines give none.
fn kept_lines(old: &[&str], new: &[&str]) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let texts = |lines: &[&str]| -> (Vec<usize>, Vec<String>) {
        (0..lines.len())
            .filter(|&i| !is_blank(lines[i]))
            .map(|i| (i, lines[i].to_string()))
            .unzip()
    };
    let (old_at, old_texts) = texts(old);
    let (new_at, new_texts) = texts(new);
    let mut kept = vec![None; old.len()];
    if old_texts.len() == new_texts.len() {
        for k in 0..old_texts.len() {
            kept[old_at[k]] = Some(new_at[k]);
        }
        return (kept.clone(), kept);
    }
    let (m, n) = (old_texts.len(), new_texts.len());
    let mut late = kept.clone();
    // Pairs equal runs, and changed runs of one length on both sides, by position.
    let pair = |kept: &mut Vec<Option<usize>>, reversed: bool| {
        let (old_seq, new_seq): (Vec<&String>, Vec<&String>) = if reversed {
            (
                old_texts.iter().rev().collect(),
                new_texts.iter().rev().collect(),
            )
        } else {
            (old_texts.iter().collect(), new_texts.iter().collect())
        };
        for op in capture_diff_slices(Algorithm::Myers, &old_seq, &new_seq) {
            let (tag, o, w) = op.as_tag_tuple();
            if tag != DiffTag::Equal && o.len() != w.len() {
                continue;
            }
            for (a, b) in o.zip(w) {
                let (a, b) = if reversed {
                    (m - 1 - a, n - 1 - b)
                } else {
                    (a, b)
                };
                kept[old_at[a]] = Some(new_at[b]);
            }
        }
    };
    pair(&mut kept, false);
    pair(&mut late, true);
    (kept, late)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gap(line: usize, file: usize, old: usize) -> Gap {
        Gap {
            line,
            file: vec![String::new(); file],
            old,
        }
    }

    /// Maps `new` for `old`, whose gaps against the file are `gaps`.
    fn map(gaps: &[Gap], old: &str, new: &str) -> Result<String, IllDefined> {
        map_new_text(gaps, old, new, new)
    }

    #[test]
    fn the_files_blank_lines_stay_next_to_unchanged_lines() {
        // The file has "a\n\nb\nc": oldText left out the blank line.
        let gaps = [gap(1, 0, 0), gap(2, 1, 0), gap(3, 0, 0), gap(4, 0, 0)];
        assert_eq!(map(&gaps, "a\nb\nc", "a\nb\nC"), Ok("a\n\nb\nC".into()));
        assert_eq!(map(&gaps, "a\nb\nc", "A\nb\nc"), Ok("A\n\nb\nc".into()));
        assert_eq!(map(&gaps, "a\nb\nc", "a\nB\nc"), Ok("a\n\nB\nc".into()));
        assert_eq!(map(&gaps, "a\nb\nc\n", "a\nc\n"), Ok("a\n\nc\n".into()));
        // newText's own blank lines are added and removed on top.
        assert_eq!(map(&gaps, "a\nb\nc", "a\n\nb\nc"), Ok("a\n\n\nb\nc".into()));
        // Between two lines newText changes one for one, it stays between them.
        assert_eq!(map(&gaps, "a\nb\nc", "A\nB\nc"), Ok("A\n\nB\nc".into()));
        assert_eq!(
            map(&gaps, "a\nb\nc", "A\nB\nc\nd"),
            Ok("A\n\nB\nc\nd".into())
        );
        // Between lines replaced by more lines, or between two unchanged lines with new
        // text put between them, it has no one place.
        assert_eq!(
            map(&gaps, "a\nb\nc", "A\nX\nB\nc\nd"),
            Err(IllDefined { line: 2 })
        );
        assert_eq!(
            map(&gaps, "a\nb\nc", "a\nx\nb\nc"),
            Err(IllDefined { line: 2 })
        );
    }

    #[test]
    fn blank_lines_the_file_lacks_are_dropped() {
        // The file has "a\nb": oldText had a blank line between, and two at its end.
        let gaps = [gap(1, 0, 0), gap(2, 0, 1), gap(3, 0, 2)];
        assert_eq!(
            map(&gaps, "a\n\nb\n\n\n", "a\n\nB\n\n\n"),
            Ok("a\nB\n".into())
        );
        assert_eq!(
            map(&gaps, "a\n\nb\n\n\n", "a\nx\nB\n\n\n"),
            Ok("a\nx\nB\n".into())
        );
        assert_eq!(
            map(&gaps, "a\n\nb\n\n\n", "a\n\nb\nc\n"),
            Ok("a\nb\nc\n".into())
        );
    }
}
