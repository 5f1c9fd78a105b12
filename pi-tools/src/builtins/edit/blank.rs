//! The fourth matching stage: blank-line drift. An `oldText` that leaves out a blank line the
//! file has between two of its lines, or has one the file does not (usually where blocks
//! meet), matches a window of whole lines when the two are equal line for line once the blank
//! lines of both are set aside (the indentation forgiven as the third stage forgives it), and
//! exactly one window qualifies. Where the blank lines differ is kept per gap, so that
//! `newText` can be mapped back around the file's own blank lines (`blank_map.rs`).
//!
//! Like the indentation stage it keeps nothing per line of the file: one pass, the last few
//! lines with text, and a window checked only where its first text matches.

use std::collections::VecDeque;

use super::indent::{IndentFit, LineRange, MAX_NAMED};
use super::lines::{IndentIndex, Line, OldLines};
use super::transform::{Fitting, Transform, TransformCache};

/// The blank lines at one place of a window: before its first line with text, between two of
/// them, or after its last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gap {
    /// The file's line (1-based) where the gap starts: its first blank line, or the line
    /// after the place when the file has none there.
    pub line: usize,
    /// The file's blank lines there, as they are (LF text, without their newlines).
    pub file: Vec<String>,
    /// How many blank lines `oldText` has there.
    pub old: usize,
}

impl Gap {
    /// Whether oldText's blank lines differ from the file's here.
    pub fn drifts(&self) -> bool {
        self.file.len() != self.old
    }
}

/// A window that `oldText` matches once blank lines are set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlankFit {
    /// The window, its lines and its indentation transformation.
    pub fit: IndentFit,
    /// One gap per place: before the first line with text, between each two, after the last.
    pub gaps: Vec<Gap>,
}

/// The outcome of the blank-line stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BlankMatch {
    Fit(BlankFit),
    /// Several windows qualify: their first lines (1-based), the first few.
    Ambiguous(Vec<usize>),
    NotFound,
}

/// A line of the file with text, as the pass keeps it.
struct TextLine<'f> {
    /// 0-based line number and byte start.
    no: usize,
    start: usize,
    line: Line<'f>,
    /// How many blank lines come right before it.
    blanks_before: usize,
}

/// Looks for the one window of the file whose lines with text are `old`'s (LF-only) with
/// one consistent indentation transformation, and whose blank lines differ from `old`'s.
pub(crate) fn locate_drifted(index: &IndentIndex<'_>, old: &str) -> BlankMatch {
    let Some(old) = OldLines::new(old) else {
        return BlankMatch::NotFound;
    };
    let old_gaps = old_gaps(&old);
    if index.blank_lines == 0 && old_gaps.iter().all(|&n| n == 0) {
        // No blank line on either side: nothing can drift.
        return BlankMatch::NotFound;
    }
    let m = old.text_lines.len();
    let key = &old.anchor().key;
    let mut cache = TransformCache::new(
        old.text_lines
            .iter()
            .map(|&i| old.lines[i].indent)
            .collect(),
    );
    let (mut same_text, mut same_text_lines) = (0usize, Vec::new());
    let (mut fit_count, mut fits) = (0usize, Vec::new());
    // The last `m` lines with text, ending at the current one.
    let mut window: VecDeque<TextLine<'_>> = VecDeque::with_capacity(m);
    let mut blanks = 0;
    for (no, (start, line)) in index.lines_from(0).enumerate() {
        let line = Line::new(line);
        if line.is_blank() {
            blanks += 1;
            continue;
        }
        if line.key == *key {
            same_text += 1;
            if same_text_lines.len() < MAX_NAMED {
                same_text_lines.push(no + 1);
            }
        }
        if window.len() == m {
            window.pop_front();
        }
        window.push_back(TextLine {
            no,
            start,
            line,
            blanks_before: std::mem::take(&mut blanks),
        });
        if window.len() < m
            || window[0].line.key != *key
            || (old.one_line() && same_text > 1)
            || !window
                .iter()
                .zip(&old.text_lines)
                .all(|(file, &i)| file.line.key == old.lines[i].key)
        {
            continue;
        }
        let Some(gaps) = gaps_of(index, &old, &old_gaps, &window) else {
            continue;
        };
        let indents = window.iter().map(|text| text.line.indent);
        let (transform, alternatives) = match cache.get(indents, index) {
            Fitting::Fit(transform) => (transform, Vec::new()),
            Fitting::Alternatives(transform, others) => (transform, others),
            Fitting::Unfit { .. } => continue,
        };
        fit_count += 1;
        if fits.len() < MAX_NAMED {
            let mut fit = fit_of(index, &old, &window, gaps, transform);
            fit.fit.alternatives = alternatives;
            fits.push(fit);
        }
    }
    if old.one_line() && same_text > 1 {
        return BlankMatch::Ambiguous(same_text_lines);
    }
    match fit_count {
        0 => BlankMatch::NotFound,
        1 => BlankMatch::Fit(fits.remove(0)),
        _ => BlankMatch::Ambiguous(fits.iter().map(|f| f.fit.lines.first).collect()),
    }
}

/// How many blank lines `old` has before its first line with text, between each two, and
/// after its last.
fn old_gaps(old: &OldLines<'_>) -> Vec<usize> {
    let t = &old.text_lines;
    let mut gaps = vec![t[0]];
    gaps.extend(t.windows(2).map(|pair| pair[1] - pair[0] - 1));
    gaps.push(old.lines.len() - 1 - t[t.len() - 1]);
    gaps
}

/// The gaps of the window whose lines with text are `window`, when its blank lines differ
/// from `old`'s somewhere and its end can end as `old` does. At the edges the window takes
/// no more of the file's blank lines than `old` has there.
fn gaps_of(
    index: &IndentIndex<'_>,
    old: &OldLines<'_>,
    old_gaps: &[usize],
    window: &VecDeque<TextLine<'_>>,
) -> Option<Vec<Gap>> {
    let text = index.text;
    let (first, last) = (&window[0], &window[window.len() - 1]);
    let lead = old_gaps[0].min(first.blanks_before);
    // The blank lines after the last line with text, each a whole line when oldText ends
    // with a newline.
    let trail: Vec<&str> = index
        .lines_from(last.start)
        .enumerate()
        .skip(1)
        .take(old_gaps[old_gaps.len() - 1])
        .take_while(|&(k, (_, line))| {
            Line::new(line).is_blank() && (!old.trailing_newline || index.has_newline(last.no + k))
        })
        .map(|(_, (_, line))| line)
        .collect();
    let last_no = last.no + trail.len();
    if old.trailing_newline && !index.has_newline(last_no) {
        return None;
    }
    let drifts = lead != old_gaps[0]
        || trail.len() != old_gaps[old_gaps.len() - 1]
        || window
            .iter()
            .skip(1)
            .zip(&old_gaps[1..])
            .any(|(text, &n)| text.blanks_before != n);
    if !drifts {
        // Blank lines as oldText has them: the indentation stage's business.
        return None;
    }
    let lines_before = |line: &TextLine<'_>, n: usize| -> Vec<String> {
        let mut start = line.start;
        let mut lines = Vec::with_capacity(n);
        for _ in 0..n {
            let end = start - 1;
            start = memchr::memrchr(b'\n', &text.as_bytes()[..end]).map_or(0, |nl| nl + 1);
            lines.push(text[start..end].to_string());
        }
        lines.reverse();
        lines
    };
    let mut gaps = vec![Gap {
        line: first.no + 1 - lead,
        file: lines_before(first, lead),
        old: old_gaps[0],
    }];
    for (k, pair) in window.iter().zip(window.iter().skip(1)).enumerate() {
        gaps.push(Gap {
            line: pair.0.no + 2,
            file: lines_before(pair.1, pair.1.blanks_before),
            old: old_gaps[k + 1],
        });
    }
    gaps.push(Gap {
        line: last.no + 2,
        file: trail.iter().map(|line| line.to_string()).collect(),
        old: old_gaps[old_gaps.len() - 1],
    });
    Some(gaps)
}

/// The fit of the window whose lines with text are `window`, with its gaps.
fn fit_of(
    index: &IndentIndex<'_>,
    old: &OldLines<'_>,
    window: &VecDeque<TextLine<'_>>,
    gaps: Vec<Gap>,
    transform: Transform,
) -> BlankFit {
    let (first, last) = (&window[0], &window[window.len() - 1]);
    let (lead, trail) = (&gaps[0].file, &gaps[gaps.len() - 1].file);
    let start = first.start - lead.iter().map(|line| line.len() + 1).sum::<usize>();
    let end = last.start
        + last.line.len
        + trail.iter().map(|line| line.len() + 1).sum::<usize>()
        + usize::from(old.trailing_newline);
    debug_assert!(end <= index.text.len());
    BlankFit {
        fit: IndentFit {
            start,
            end,
            lines: LineRange {
                first: first.no + 1 - lead.len(),
                last: last.no + 1 + trail.len(),
            },
            transform,
            old_tabs: old.tabs,
            alternatives: Vec::new(),
        },
        gaps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(file: &str, old: &str) -> BlankFit {
        match locate_drifted(&IndentIndex::new(file), old) {
            BlankMatch::Fit(fit) => fit,
            other => panic!("no fit for {old:?}: {other:?}"),
        }
    }

    #[test]
    fn windows_and_gaps() {
        let file = "x\nfn a() {}\n\nfn b() {}\ny\n";
        let f = fit(file, "fn a() {}\nfn b() {}\n");
        assert_eq!(&file[f.fit.start..f.fit.end], "fn a() {}\n\nfn b() {}\n");
        assert_eq!(f.fit.lines, LineRange { first: 2, last: 4 });
        assert_eq!(
            f.gaps,
            vec![
                Gap {
                    line: 2,
                    file: vec![],
                    old: 0
                },
                Gap {
                    line: 3,
                    file: vec![String::new()],
                    old: 0
                },
                Gap {
                    line: 5,
                    file: vec![],
                    old: 0
                },
            ]
        );
        // Blank lines oldText has at its edges are taken from the file only as far as it has
        // them.
        let file = "x\n\n  a\n  b\n";
        let f = fit(file, "\n\n  a\n\n  b\n\n");
        assert_eq!(&file[f.fit.start..f.fit.end], "\n  a\n  b\n");
        assert_eq!(
            f.gaps[0],
            Gap {
                line: 2,
                file: vec![String::new()],
                old: 2
            }
        );
        assert_eq!(
            f.gaps[2],
            Gap {
                line: 5,
                file: vec![],
                old: 1
            }
        );
        // The same blank lines as the file's are the indentation stage's business.
        assert_eq!(
            locate_drifted(&IndentIndex::new(file), "  a\n  b\n"),
            BlankMatch::NotFound
        );
    }

    #[test]
    fn two_windows_are_ambiguous() {
        let file = "a\n\nb\nc\na\nb\n\n";
        assert_eq!(
            locate_drifted(&IndentIndex::new(file), "a\n\n\nb"),
            BlankMatch::Ambiguous(vec![1, 5])
        );
    }
}
