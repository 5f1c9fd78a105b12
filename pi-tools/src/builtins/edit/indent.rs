//! The third matching stage: an `oldText` whose lines are the lines of one window of the file
//! except for one consistent indentation mistake (every line shifted by the same whitespace,
//! tabs where the file has spaces or the reverse at one width, or both; `transform.rs`).
//!
//! Forgiving must not mean guessing: the mistake has to be one transformation that maps the
//! indentation of every non-blank line of `oldText` onto the file's, exactly one window may
//! qualify, and `newText` goes through the same transformation, so its relative indentation
//! is kept and it lands in the file's style. A single line of text qualifies only when its
//! text is unique in the file and it is at the file line's depth (converted between tabs and
//! spaces at most, at a tab width the file settles): it shows nothing of the structure
//! around it, and the same line at another depth is most likely another place, or a change
//! already made. Overlapping windows each count. Pure logic: offsets are in the LF text.

use std::collections::VecDeque;

use super::lines::{IndentIndex, Line, OldLines};
use super::transform::{Fitting, Transform, TransformCache};

/// Line numbers named in an error, at most.
pub(super) const MAX_NAMED: usize = 8;

/// A window of the file that `oldText` matches with its indentation transformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndentFit {
    /// Start and end of the window in the LF text.
    pub start: usize,
    pub end: usize,
    /// First and last line of the window, 1-based.
    pub lines: LineRange,
    pub transform: Transform,
    /// Whether `oldText` indents with tabs (for the description).
    pub(super) old_tabs: bool,
    /// Transformations at other tab widths that fit as well, the file settling none: newText
    /// is refused unless they re-indent it as `transform` does.
    pub alternatives: Vec<Transform>,
}

/// Lines of the file, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineRange {
    pub first: usize,
    pub last: usize,
}

impl LineRange {
    /// "lines 3-7" / "line 3".
    pub fn words(&self) -> String {
        if self.first == self.last {
            format!("line {}", self.first)
        } else {
            format!("lines {}-{}", self.first, self.last)
        }
    }
}

/// The outcome of the indentation stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IndentMatch {
    Fit(IndentFit),
    /// Several windows qualify: their first lines (1-based), the first few.
    Ambiguous(Vec<usize>),
    /// Windows whose text matches but whose indentation differs by no single
    /// transformation, the first few; and whether the first is a single line at another
    /// depth (which a shift or a conversion would have mapped).
    Inconsistent(Vec<LineRange>, bool),
    NotFound,
}

/// What the pass over the file found so far: only the first few windows of each kind are
/// kept (the errors name no more).
#[derive(Default)]
struct Findings {
    /// Lines whose text is oldText's first text: their count, and the first few (1-based).
    same_text: usize,
    same_text_lines: Vec<usize>,
    /// Windows that qualify: their count, and the first few.
    fit_count: usize,
    fits: Vec<IndentFit>,
    inconsistent: Vec<LineRange>,
    /// Whether the first inconsistent window is a single line at another depth.
    other_depth: bool,
}

impl Findings {
    fn into_match(mut self, one_line: bool) -> IndentMatch {
        if one_line && self.same_text > 1 {
            return IndentMatch::Ambiguous(self.same_text_lines);
        }
        match self.fit_count {
            0 if self.inconsistent.is_empty() => IndentMatch::NotFound,
            0 => IndentMatch::Inconsistent(self.inconsistent, self.other_depth),
            1 => IndentMatch::Fit(self.fits.remove(0)),
            _ => IndentMatch::Ambiguous(self.fits.iter().map(|fit| fit.lines.first).collect()),
        }
    }
}

/// Looks for the one window of the file whose lines are `old`'s (LF-only) up to one
/// consistent indentation transformation. One pass over the file, keeping the last lines
/// of a window's length: a window is checked where its line of `old`'s first text matches.
pub(crate) fn locate_indented(index: &IndentIndex<'_>, old: &str) -> IndentMatch {
    let Some(old) = OldLines::new(old) else {
        return IndentMatch::NotFound;
    };
    let m = old.lines.len();
    let anchor = old.text_lines[0];
    let mut cache = TransformCache::new(
        old.text_lines
            .iter()
            .map(|&i| old.lines[i].indent)
            .collect(),
    );
    let mut found = Findings::default();
    // The window that ends at the current line: each line's start and its split.
    let mut window: VecDeque<(usize, Line<'_>)> = VecDeque::with_capacity(m);
    for (i, (start, line)) in index.lines_from(0).enumerate() {
        if window.len() == m {
            window.pop_front();
        }
        window.push_back((start, Line::new(line)));
        if window
            .back()
            .is_some_and(|(_, line)| line.key == old.anchor().key)
        {
            found.same_text += 1;
            if found.same_text_lines.len() < MAX_NAMED {
                found.same_text_lines.push(i + 1);
            }
        }
        // One line shows nothing of the structure around it: its text must be unique.
        let hopeless = old.one_line() && found.same_text > 1;
        if window.len() < m || hopeless || window[anchor].1.key != old.anchor().key {
            continue;
        }
        let first = i + 1 - m;
        check_window(index, &old, first, &window, &mut cache, &mut found);
    }
    found.into_match(old.one_line())
}

/// Checks the window of `old.lines.len()` lines starting at line `first` (0-based), whose
/// line of oldText's first text matches.
fn check_window<'f>(
    index: &IndentIndex<'f>,
    old: &OldLines<'_>,
    first: usize,
    window: &VecDeque<(usize, Line<'f>)>,
    cache: &mut TransformCache<'_, 'f>,
    found: &mut Findings,
) {
    let m = old.lines.len();
    let text_matches = window.iter().zip(&old.lines).all(|((_, file), old)| {
        file.is_blank() == old.is_blank() && (old.is_blank() || file.key == old.key)
    });
    if !text_matches || (old.trailing_newline && !index.has_newline(first + m - 1)) {
        return;
    }
    let lines = LineRange {
        first: first + 1,
        last: first + m,
    };
    let file_indents = old.text_lines.iter().map(|&i| window[i].1.indent);
    let (transform, alternatives) = match cache.get(file_indents, index) {
        Fitting::Fit(transform) => (transform, Vec::new()),
        Fitting::Alternatives(transform, others) => (transform, others),
        Fitting::Unfit { other_depth } => {
            if found.inconsistent.is_empty() {
                found.other_depth = other_depth;
            }
            if found.inconsistent.len() < MAX_NAMED {
                found.inconsistent.push(lines);
            }
            return;
        }
    };
    found.fit_count += 1;
    if found.fits.len() < MAX_NAMED {
        // The window ends after its last line, with that line's newline only when oldText
        // ends with one (and then the line has one).
        let (last_start, last) = (&window[m - 1].0, &window[m - 1].1);
        found.fits.push(IndentFit {
            start: window[0].0,
            end: last_start + last.len + usize::from(old.trailing_newline),
            lines,
            transform,
            old_tabs: old.tabs,
            alternatives,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(file: &str, old: &str) -> IndentFit {
        match locate_indented(&IndentIndex::new(file), old) {
            IndentMatch::Fit(fit) => fit,
            other => panic!("no fit for {old:?}: {other:?}"),
        }
    }

    #[test]
    fn shift_restyle_and_window_offsets() {
        let file = "x\n    if a {\n        b();\n    }\ny\n";
        let f = fit(file, "  if a {\n      b();\n  }");
        assert_eq!(f.transform, Transform::Deepen("  ".into()));
        assert_eq!(f.lines, LineRange { first: 2, last: 4 });
        assert_eq!(&file[f.start..f.end], "    if a {\n        b();\n    }");
        let f = fit(file, "\tif a {\n\t\tb();\n\t}\n");
        assert_eq!(
            f.transform,
            Transform::Restyle {
                width: 4,
                shift: 0,
                to_tabs: false
            }
        );
        assert_eq!(&file[f.start..f.end], "    if a {\n        b();\n    }\n");
        assert_eq!(
            f.transform.apply_to_text("\tif a {\n\n\t\tc();\n  \n\t}"),
            Ok("    if a {\n\n        c();\n  \n    }".to_string())
        );
    }

    #[test]
    fn a_unique_line_is_converted_and_a_repeated_one_is_not() {
        let file = "a\n\tx = 1;\nb\n// vim: ts=4\n";
        let f = fit(file, "    x = 1;\n");
        assert_eq!(&file[f.start..f.end], "\tx = 1;\n");
        assert!(f.alternatives.is_empty());
        assert_eq!(
            locate_indented(&IndentIndex::new("\tx\n\t\tx\n"), "  x"),
            IndentMatch::Ambiguous(vec![1, 2])
        );
    }
}
