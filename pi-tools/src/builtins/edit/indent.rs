//! The third matching stage: an `oldText` whose lines are the lines of one window of the file
//! except for one consistent indentation mistake (every line shifted by the same whitespace,
//! tabs where the file has spaces or the reverse at one width, or both).
//!
//! Forgiving must not mean guessing: the mistake has to be one transformation that maps the
//! indentation of every non-blank line of `oldText` onto the file's, exactly one window may
//! qualify, and `newText` goes through the same transformation, so its relative indentation
//! is kept and it lands in the file's style. Pure logic: offsets are in the LF text.

use std::borrow::Cow;
use std::collections::HashMap;

use super::matching::fuzzy_form;

/// Tab widths tried, after the file's own indent step, when tabs and spaces are converted.
const WIDTHS: [usize; 3] = [4, 2, 8];

/// Line numbers named in an ambiguity error, at most.
const MAX_NAMED: usize = 8;

/// One line split into indentation (spaces and tabs) and the normalised text after it.
struct Line<'a> {
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
        Line { indent, key }
    }

    fn is_blank(&self) -> bool {
        self.key.is_empty()
    }
}

/// The file's lines, indexed for the indentation stage; built once per call, on first need.
pub(crate) struct IndentIndex<'a> {
    lines: Vec<Line<'a>>,
    /// Byte offset of each line's start in the LF text, plus one past the end (counting a
    /// newline after the last line).
    starts: Vec<usize>,
    /// The file's own indent step in spaces, when it indents with spaces.
    step: Option<usize>,
    /// Whether the file indents mostly with tabs.
    tabs: bool,
}

impl<'a> IndentIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        // After a final newline comes an empty last line, as an editor shows it: oldText
        // may end with it (a blank line with nothing after it).
        let mut lines = Vec::new();
        let mut starts = vec![0];
        for line in text.split('\n') {
            lines.push(Line::new(line));
            starts.push(starts[starts.len() - 1] + line.len() + 1);
        }
        let (step, tabs) = indent_style(&lines);
        IndentIndex {
            lines,
            starts,
            step,
            tabs,
        }
    }

    /// Whether line `i` (0-based) ends with a newline.
    fn has_newline(&self, i: usize) -> bool {
        i + 1 < self.lines.len()
    }
}

/// The file's indent step (most common increase between consecutive space-indented lines)
/// and whether it indents with tabs rather than spaces.
fn indent_style(lines: &[Line<'_>]) -> (Option<usize>, bool) {
    let (mut tab_lines, mut space_lines) = (0usize, 0usize);
    let mut increases: HashMap<usize, usize> = HashMap::new();
    let mut previous = None;
    for line in lines.iter().filter(|l| !l.is_blank()) {
        match line.indent.as_bytes().first() {
            Some(b'\t') => tab_lines += 1,
            Some(_) => space_lines += 1,
            None => {}
        }
        let spaces = (!line.indent.contains('\t')).then_some(line.indent.len());
        if let (Some(before), Some(now)) = (previous, spaces)
            && now > before
        {
            *increases.entry(now - before).or_insert(0) += 1;
        }
        previous = spaces;
    }
    let tabs = tab_lines > space_lines;
    let step = increases
        .into_iter()
        .max_by_key(|&(step, count)| (count, std::cmp::Reverse(step)))
        .map(|(step, _)| step)
        .filter(|_| !tabs);
    (step, tabs)
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

    fn is_identity(&self) -> bool {
        matches!(self, Transform::Deepen(s) | Transform::Undeepen(s) if s.is_empty())
    }
}

/// Width in columns of an indentation, a tab reaching the next multiple of `width`.
fn columns(indent: &str, width: usize) -> usize {
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
    old_tabs: bool,
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
/// consistent indentation transformation.
pub(crate) fn locate_indented(index: &IndentIndex<'_>, old: &str) -> IndentMatch {
    let trailing_newline = old.ends_with('\n');
    let body = old.strip_suffix('\n').unwrap_or(old);
    let old_lines: Vec<Line<'_>> = body.split('\n').map(Line::new).collect();
    let Some(anchor) = old_lines.iter().position(|l| !l.is_blank()) else {
        return IndentMatch::NotFound;
    };
    let non_blank = old_lines.iter().filter(|l| !l.is_blank()).count();
    let key = &old_lines[anchor].key;
    let same_text: Vec<usize> = (0..index.lines.len())
        .filter(|&i| index.lines[i].key == *key)
        .collect();
    if non_blank == 1 && same_text.len() > 1 {
        // One line shows nothing of the structure around it: its text must be unique.
        return IndentMatch::Ambiguous(same_text.iter().take(MAX_NAMED).map(|i| i + 1).collect());
    }
    let old_tabs = old_lines
        .iter()
        .any(|l| !l.is_blank() && l.indent.contains('\t'));
    let m = old_lines.len();
    let mut fits = Vec::new();
    let mut inconsistent = Vec::new();
    for first in same_text
        .into_iter()
        .filter_map(|i| i.checked_sub(anchor))
        .filter(|first| first + m <= index.lines.len())
    {
        let window = &index.lines[first..first + m];
        let text_matches = window.iter().zip(&old_lines).all(|(file, old)| {
            file.is_blank() == old.is_blank() && (old.is_blank() || file.key == old.key)
        });
        if !text_matches || (trailing_newline && !index.has_newline(first + m - 1)) {
            continue;
        }
        let pairs: Vec<(&str, &str)> = old_lines
            .iter()
            .zip(window)
            .filter(|(old, _)| !old.is_blank())
            .map(|(old, file)| (old.indent, file.indent))
            .collect();
        match transform_for(&pairs, non_blank == 1, index) {
            Some(transform) => fits.push((first, transform)),
            None => inconsistent.push((first + 1, first + m)),
        }
    }
    match fits.len() {
        0 if inconsistent.is_empty() => IndentMatch::NotFound,
        0 => IndentMatch::Inconsistent(inconsistent, non_blank == 1),
        1 => {
            let (first, transform) = fits.remove(0);
            let last = first + m - 1;
            // `starts` counts a newline after every line; the window takes it only when
            // oldText ends with one (and then the line has one).
            let end = index.starts[last + 1] - usize::from(!trailing_newline);
            IndentMatch::Fit(IndentFit {
                start: index.starts[first],
                end,
                first_line: first + 1,
                last_line: last + 1,
                transform,
                old_tabs,
            })
        }
        _ => IndentMatch::Ambiguous(
            fits.iter()
                .take(MAX_NAMED)
                .map(|(first, _)| first + 1)
                .collect(),
        ),
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

/// What the indentation stage did to one edit, as data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndentAdjustment {
    /// Index of the edit in `edits`.
    pub edit: usize,
    /// First line of the file that the edit's oldText matched (1-based, original file).
    pub start_line: usize,
    /// Last line of the file that the edit's oldText matched.
    pub end_line: usize,
    /// How many columns deeper oldText was indented than the file (negative: less deep),
    /// a tab counted at `tab_width`.
    pub columns: i64,
    /// The whitespace added to (`"deepen"`) or removed from (`"undeepen"`) the front of every
    /// line, when the adjustment was a plain shift.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift: Option<IndentShift>,
    /// The style newText was converted to, when oldText used tabs where the file has
    /// spaces or the reverse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converted_to: Option<IndentStyle>,
    /// The tab width used for the conversion and for `columns`.
    pub tab_width: usize,
    /// The sentence the result text gives.
    pub note: String,
}

/// A plain shift of every line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IndentShift {
    /// The file had this whitespace in front of every line beyond oldText.
    Deepen(String),
    /// oldText had this whitespace in front of every line beyond the file.
    Undeepen(String),
}

/// How a file indents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum IndentStyle {
    /// Tabs (spaces after them only to reach a column between two tab stops).
    Tabs,
    /// Spaces only.
    Spaces,
}

impl IndentFit {
    /// Whether the text matched with its indentation as it is (nothing to report).
    pub fn is_identity(&self) -> bool {
        self.transform.is_identity()
    }

    /// The adjustment as data, for edit number `edit`, with the tab width `default_width`
    /// used for columns when the transformation is a plain shift.
    pub fn adjustment(&self, edit: usize, default_width: usize) -> IndentAdjustment {
        let (columns_deeper, shift, converted_to, tab_width) = match &self.transform {
            Transform::Deepen(extra) => (
                -(columns(extra, default_width) as i64),
                Some(IndentShift::Deepen(extra.clone())),
                None,
                default_width,
            ),
            Transform::Undeepen(extra) => (
                columns(extra, default_width) as i64,
                Some(IndentShift::Undeepen(extra.clone())),
                None,
                default_width,
            ),
            Transform::Restyle {
                width,
                shift,
                to_tabs,
            } => (
                -shift,
                None,
                Some(if *to_tabs {
                    IndentStyle::Tabs
                } else {
                    IndentStyle::Spaces
                }),
                *width,
            ),
        };
        IndentAdjustment {
            edit,
            start_line: self.first_line,
            end_line: self.last_line,
            columns: columns_deeper,
            shift,
            converted_to,
            tab_width,
            note: self.note(),
        }
    }

    /// "lines 3-7" / "line 3".
    fn lines(&self) -> String {
        if self.first_line == self.last_line {
            format!("line {}", self.first_line)
        } else {
            format!("lines {}-{}", self.first_line, self.last_line)
        }
    }

    /// One sentence a model learns from: what was wrong, and what was done to newText.
    pub fn note(&self) -> String {
        let remedy = match &self.transform {
            Transform::Deepen(_) => "newText was shifted deeper by the same amount",
            Transform::Undeepen(_) => "newText was shifted back by the same amount",
            Transform::Restyle { .. } => {
                "newText was converted to the file's indentation the same way"
            }
        };
        format!("{}; {remedy}.", self.mistake())
    }

    /// What was wrong with oldText's indentation: "your oldText was indented 4 spaces deeper
    /// than lines 3-7 of the file".
    pub fn mistake(&self) -> String {
        let lines = self.lines();
        match &self.transform {
            Transform::Deepen(extra) => format!(
                "your oldText was indented {} less deeply than {lines} of the file",
                whitespace(extra)
            ),
            Transform::Undeepen(extra) => format!(
                "your oldText was indented {} deeper than {lines} of the file",
                whitespace(extra)
            ),
            Transform::Restyle {
                width,
                shift,
                to_tabs,
            } => {
                let (old_style, file_style) = match (self.old_tabs, to_tabs) {
                    (true, false) => ("tabs", "spaces"),
                    (false, true) => ("spaces", "tabs"),
                    (true, true) => ("tabs and spaces", "tabs"),
                    (false, false) => ("tabs and spaces", "spaces"),
                };
                let depth = match shift {
                    0 => String::new(),
                    s if *s < 0 => format!(", {} deeper,", plural(s.unsigned_abs(), "column")),
                    s => format!(", {} less deeply,", plural(s.unsigned_abs(), "column")),
                };
                let verb = if self.first_line == self.last_line {
                    "is"
                } else {
                    "are"
                };
                format!(
                    "your oldText was indented with {old_style}{depth} where {lines} of the file {verb} indented with {file_style} (a tab is {width} columns)"
                )
            }
        }
    }
}

/// "4 spaces", "1 tab", "1 tab and 2 spaces".
pub(crate) fn whitespace(s: &str) -> String {
    let tabs = s.matches('\t').count() as u64;
    let spaces = s.len() as u64 - tabs;
    match (tabs, spaces) {
        (0, n) => plural(n, "space"),
        (t, 0) => plural(t, "tab"),
        (t, n) => format!("{} and {}", plural(t, "tab"), plural(n, "space")),
    }
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
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

    #[test]
    fn whitespace_is_described_in_words() {
        assert_eq!(whitespace("    "), "4 spaces");
        assert_eq!(whitespace("\t"), "1 tab");
        assert_eq!(whitespace("\t  "), "1 tab and 2 spaces");
    }
}
