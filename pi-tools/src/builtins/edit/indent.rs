//! The third matching stage: an `oldText` whose lines are the lines of one window of the file
//! except for one consistent indentation mistake (every line shifted by the same whitespace,
//! tabs where the file has spaces or the reverse at one width, or both).
//!
//! Forgiving must not mean guessing: the mistake has to be one transformation that maps the
//! indentation of every non-blank line of `oldText` onto the file's, exactly one window may
//! qualify, and `newText` goes through the same transformation, so its relative indentation
//! is kept and it lands in the file's style. Pure logic: offsets are in the LF text.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use super::matching::fuzzy_form;

/// Tab widths tried, after the file's own indent step, when tabs and spaces are converted.
const WIDTHS: [usize; 3] = [4, 2, 8];

/// Line numbers named in an ambiguity error, at most.
const MAX_NAMED: usize = 8;

/// One line split into indentation (spaces and tabs) and the normalised text after it.
struct Line<'a> {
    /// The whole line's length in bytes (without its newline).
    len: usize,
    indent: &'a str,
    /// The text after the indentation in fuzzy form (trailing whitespace dropped); empty for a
    /// blank line.
    key: Cow<'a, str>,
}

impl<'a> Line<'a> {
    fn new(line: &'a str) -> Self {
        let body = line.trim_start_matches([' ', '\t']);
        let indent = &line[..line.len() - body.len()];
        let key = if body.is_ascii() {
            // What FuzzyText does to ASCII, without the allocation.
            Cow::Borrowed(body.trim_end())
        } else {
            Cow::Owned(fuzzy_form(body))
        };
        Line {
            len: line.len(),
            indent,
            key,
        }
    }

    fn is_blank(&self) -> bool {
        self.key.is_empty()
    }
}

/// The file as the indentation stage reads it: its style, counted once per call on first
/// need, and its lines split again wherever a window is checked. Nothing is kept per line,
/// so the stage adds no memory in proportion to the file, however short its lines.
pub(crate) struct IndentIndex<'a> {
    text: &'a str,
    /// How many lines the file has: after a final newline comes an empty last line, as an
    /// editor shows it (oldText may end with it, a blank line with nothing after it).
    line_count: usize,
    /// The file's own indent step in spaces, when it indents with spaces.
    step: Option<usize>,
    /// Whether the file indents mostly with tabs.
    tabs: bool,
}

impl<'a> IndentIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut style = StyleCount::default();
        let mut line_count = 0;
        for line in text.split('\n') {
            line_count += 1;
            style.add(&Line::new(line));
        }
        let (step, tabs) = style.finish();
        IndentIndex {
            text,
            line_count,
            step,
            tabs,
        }
    }

    /// Whether line `i` (0-based) ends with a newline.
    fn has_newline(&self, i: usize) -> bool {
        i + 1 < self.line_count
    }

    /// The lines from byte `offset` (a line's start) on, each with its own start.
    fn lines_from(&self, offset: usize) -> impl Iterator<Item = (usize, &'a str)> + 'a {
        self.text[offset..].split('\n').scan(offset, |at, line| {
            let start = *at;
            *at += line.len() + 1;
            Some((start, line))
        })
    }
}

/// Counts, line by line, the file's indent step (most common increase between consecutive
/// space-indented lines) and whether it indents with tabs rather than spaces.
#[derive(Default)]
struct StyleCount {
    tab_lines: usize,
    space_lines: usize,
    increases: HashMap<usize, usize>,
    previous: Option<usize>,
}

impl StyleCount {
    fn add(&mut self, line: &Line<'_>) {
        if line.is_blank() {
            return;
        }
        match line.indent.as_bytes().first() {
            Some(b'\t') => self.tab_lines += 1,
            Some(_) => self.space_lines += 1,
            None => {}
        }
        let spaces = (!line.indent.contains('\t')).then_some(line.indent.len());
        if let (Some(before), Some(now)) = (self.previous, spaces)
            && now > before
        {
            *self.increases.entry(now - before).or_insert(0) += 1;
        }
        self.previous = spaces;
    }

    fn finish(self) -> (Option<usize>, bool) {
        let tabs = self.tab_lines > self.space_lines;
        let step = self
            .increases
            .into_iter()
            .max_by_key(|&(step, count)| (count, std::cmp::Reverse(step)))
            .map(|(step, _)| step)
            .filter(|_| !tabs);
        (step, tabs)
    }
}

/// How `oldText`'s indentation maps onto the file's. Applied to `newText` before it is
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transform {
    /// The file has this whitespace in front of every line beyond `oldText`.
    Deepen(String),
    /// `oldText` has this whitespace in front of every line beyond the file.
    Undeepen(String),
    /// Indentation converted between tabs and spaces at `width`, then shifted by `shift`
    /// columns (file minus `oldText`).
    Restyle {
        width: usize,
        shift: i64,
        to_tabs: bool,
    },
}

impl Transform {
    /// The file's indentation for a line that `oldText` (or `newText`) indents with `indent`;
    /// `None` when the line is too shallow for the transformation.
    fn apply(&self, indent: &str) -> Option<String> {
        match self {
            Transform::Deepen(extra) => Some(format!("{extra}{indent}")),
            Transform::Undeepen(extra) => indent.strip_prefix(extra.as_str()).map(str::to_string),
            Transform::Restyle {
                width,
                shift,
                to_tabs,
            } => {
                let columns = i64::try_from(columns(indent, *width)).ok()? + shift;
                let columns = usize::try_from(columns).ok()?;
                Some(render(columns, *width, *to_tabs))
            }
        }
    }

    /// `new` (LF-only) with every line re-indented; empty lines stay empty, and a line of
    /// only spaces and tabs is re-indented when it can be and kept as it is otherwise. The
    /// error is the 1-based number of a line of `new` that is too shallow.
    pub fn apply_to_text(&self, new: &str) -> Result<String, usize> {
        let mut out = String::with_capacity(new.len() + 64);
        for (i, line) in new.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let body = line.trim_start_matches([' ', '\t']);
            let indent = &line[..line.len() - body.len()];
            if line.is_empty() {
                continue;
            }
            match self.apply(indent) {
                Some(indent) => {
                    out.push_str(&indent);
                    out.push_str(body);
                }
                None if line.trim().is_empty() => out.push_str(line),
                None => return Err(i + 1),
            }
        }
        Ok(out)
    }

    pub(super) fn is_identity(&self) -> bool {
        matches!(self, Transform::Deepen(s) | Transform::Undeepen(s) if s.is_empty())
    }
}

/// Width in columns of an indentation, a tab reaching the next multiple of `width`.
pub(super) fn columns(indent: &str, width: usize) -> usize {
    indent.chars().fold(0, |col, c| match c {
        '\t' => (col / width + 1) * width,
        _ => col + 1,
    })
}

/// An indentation of `columns` columns in the file's style.
fn render(columns: usize, width: usize, tabs: bool) -> String {
    if tabs {
        let mut s = "\t".repeat(columns / width);
        s.push_str(&" ".repeat(columns % width));
        s
    } else {
        " ".repeat(columns)
    }
}

/// A window of the file that `oldText` matches with its indentation transformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndentFit {
    /// Start and end of the window in the LF text.
    pub start: usize,
    pub end: usize,
    /// First and last line of the window, 1-based.
    pub first_line: usize,
    pub last_line: usize,
    pub transform: Transform,
    /// Whether `oldText` indents with tabs (for the description).
    pub(super) old_tabs: bool,
}

/// The outcome of the indentation stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IndentMatch {
    Fit(IndentFit),
    /// Several windows qualify: their first lines (1-based), the first few.
    Ambiguous(Vec<usize>),
    /// Windows whose text matches but whose indentation differs by no single
    /// transformation: their first and last lines (1-based), and whether oldText had only
    /// one line of text (for which tabs and spaces are not converted).
    Inconsistent(Vec<(usize, usize)>, bool),
    NotFound,
}

/// Looks for the one window of the file whose lines are `old`'s (LF-only) up to one
/// consistent indentation transformation. One pass over the file: a window is checked where
/// the line of `old`'s first text shows up, and only the first few windows of each kind are
/// kept (the errors name no more).
pub(crate) fn locate_indented(index: &IndentIndex<'_>, old: &str) -> IndentMatch {
    let trailing_newline = old.ends_with('\n');
    let body = old.strip_suffix('\n').unwrap_or(old);
    let old_lines: Vec<Line<'_>> = body.split('\n').map(Line::new).collect();
    let Some(anchor) = old_lines.iter().position(|l| !l.is_blank()) else {
        return IndentMatch::NotFound;
    };
    let one_line = old_lines.iter().filter(|l| !l.is_blank()).count() == 1;
    let key = &old_lines[anchor].key;
    let old_tabs = old_lines
        .iter()
        .any(|l| !l.is_blank() && l.indent.contains('\t'));
    let m = old_lines.len();
    // The starts of the last `anchor + 1` lines: a window begins `anchor` lines before the
    // line that matches `old`'s first text.
    let mut recent: VecDeque<usize> = VecDeque::with_capacity(anchor + 1);
    let (mut same_text, mut same_count) = (Vec::new(), 0usize);
    let (mut fits, mut fit_count) = (Vec::new(), 0usize);
    let mut inconsistent = Vec::new();
    for (i, (start, line)) in index.lines_from(0).enumerate() {
        if recent.len() == anchor + 1 {
            recent.pop_front();
        }
        recent.push_back(start);
        if Line::new(line).key != *key {
            continue;
        }
        same_count += 1;
        if same_text.len() < MAX_NAMED {
            same_text.push(i + 1);
        }
        if one_line && same_count > 1 {
            // One line shows nothing of the structure around it: its text must be unique,
            // and it is not.
            continue;
        }
        let Some(first) = i.checked_sub(anchor) else {
            continue;
        };
        if first + m > index.line_count {
            continue;
        }
        let window: Vec<(usize, Line<'_>)> = index
            .lines_from(recent[0])
            .take(m)
            .map(|(start, line)| (start, Line::new(line)))
            .collect();
        let text_matches = window.iter().zip(&old_lines).all(|((_, file), old)| {
            file.is_blank() == old.is_blank() && (old.is_blank() || file.key == old.key)
        });
        if !text_matches || (trailing_newline && !index.has_newline(first + m - 1)) {
            continue;
        }
        let pairs: Vec<(&str, &str)> = old_lines
            .iter()
            .zip(&window)
            .filter(|(old, _)| !old.is_blank())
            .map(|(old, (_, file))| (old.indent, file.indent))
            .collect();
        match transform_for(&pairs, one_line, index) {
            Some(transform) => {
                fit_count += 1;
                if fits.len() < MAX_NAMED {
                    // The window ends after its last line, with that line's newline only
                    // when oldText ends with one (and then the line has one).
                    let (last_start, last) = (window[m - 1].0, window[m - 1].1.len);
                    let end = last_start + last + usize::from(trailing_newline);
                    fits.push((first, recent[0], end, transform));
                }
            }
            None if inconsistent.len() < MAX_NAMED => inconsistent.push((first + 1, first + m)),
            None => {}
        }
    }
    if one_line && same_count > 1 {
        return IndentMatch::Ambiguous(same_text);
    }
    match fit_count {
        0 if inconsistent.is_empty() => IndentMatch::NotFound,
        0 => IndentMatch::Inconsistent(inconsistent, one_line),
        1 => {
            let (first, start, end, transform) = fits.remove(0);
            IndentMatch::Fit(IndentFit {
                start,
                end,
                first_line: first + 1,
                last_line: first + m,
                transform,
                old_tabs,
            })
        }
        _ => IndentMatch::Ambiguous(fits.iter().map(|(first, ..)| first + 1).collect()),
    }
}

/// The one transformation mapping every `(old, file)` indentation pair, preferring a plain
/// shift; a conversion between tabs and spaces needs more than one line to go on.
fn transform_for(
    pairs: &[(&str, &str)],
    one_line: bool,
    index: &IndentIndex<'_>,
) -> Option<Transform> {
    let &(old0, file0) = pairs.first()?;
    let shift = if let Some(extra) = file0.strip_suffix(old0) {
        Some(Transform::Deepen(extra.to_string()))
    } else {
        old0.strip_suffix(file0)
            .map(|extra| Transform::Undeepen(extra.to_string()))
    };
    let fits = |t: &Transform| {
        pairs
            .iter()
            .all(|&(old, file)| t.apply(old).as_deref() == Some(file))
    };
    if let Some(shift) = shift.filter(|t| fits(t)) {
        return Some(shift);
    }
    if one_line {
        return None;
    }
    let to_tabs = if pairs.iter().any(|(_, file)| file.contains('\t')) {
        true
    } else if pairs.iter().any(|(_, file)| !file.is_empty()) {
        false
    } else {
        index.tabs
    };
    let mut widths: Vec<usize> = index.step.into_iter().collect();
    widths.extend(WIDTHS.iter().filter(|w| Some(**w) != index.step));
    let restyle = |width: usize| {
        let shift = columns(file0, width) as i64 - columns(old0, width) as i64;
        Transform::Restyle {
            width,
            shift,
            to_tabs,
        }
    };
    // A conversion alone explains more than a conversion and a shift: only when no width
    // converts without shifting is a shift assumed (a flat block of 2-space lines in a tab
    // file is a tab per 2 spaces, not a tab per 4 spaces shifted by 2).
    let plain = widths
        .iter()
        .map(|&width| restyle(width))
        .find(|t| matches!(t, Transform::Restyle { shift: 0, .. }) && fits(t));
    plain.or_else(|| widths.iter().map(|&width| restyle(width)).find(|t| fits(t)))
}

/// The tab width an adjustment's columns are counted in for a plain shift: the file's step
/// when it has one.
pub(crate) fn default_width(index: &IndentIndex<'_>) -> usize {
    index.step.unwrap_or(WIDTHS[0])
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
    fn columns_and_rendering() {
        assert_eq!(columns("\t  ", 4), 6);
        assert_eq!(columns("  \t", 4), 4);
        assert_eq!(render(6, 4, true), "\t  ");
        assert_eq!(render(6, 4, false), "      ");
    }

    #[test]
    fn file_step_and_style() {
        let index = IndentIndex::new("a\n  b\n    c\n  d\ne\n  f\n");
        assert_eq!((index.step, index.tabs), (Some(2), false));
        let index = IndentIndex::new("a\n\tb\n\t\tc\n");
        assert_eq!((index.step, index.tabs), (None, true));
    }

    #[test]
    fn shift_restyle_and_window_offsets() {
        let file = "x\n    if a {\n        b();\n    }\ny\n";
        let f = fit(file, "  if a {\n      b();\n  }");
        assert_eq!(f.transform, Transform::Deepen("  ".into()));
        assert_eq!((f.first_line, f.last_line), (2, 4));
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
    fn a_too_shallow_new_line_is_reported() {
        let t = Transform::Undeepen("    ".into());
        assert_eq!(t.apply_to_text("    a\n  b"), Err(2));
        assert_eq!(t.apply_to_text("    a\n\n      b"), Ok("a\n\n  b".into()));
    }
}
