//! The file and `oldText` as the line-based stages (indentation, blank lines) read them: a
//! line split into its indentation and the normalised text after it, the file's indentation
//! style counted in one pass, and `oldText` split into lines once per edit.
//!
//! Nothing is kept per line of the file, so these stages add no memory in proportion to it,
//! however short its lines.

use std::borrow::Cow;
use std::collections::HashMap;

use super::matching::fuzzy_form;
use super::tab_width::{Mixing, modeline};

/// One line split into indentation (spaces and tabs) and the normalised text after it.
#[derive(Debug, Clone)]
pub(super) struct Line<'a> {
    /// The whole line's length in bytes (without its newline).
    pub len: usize,
    pub indent: &'a str,
    /// The text after the indentation in fuzzy form (trailing whitespace dropped); empty for a
    /// blank line.
    pub key: Cow<'a, str>,
}

impl<'a> Line<'a> {
    pub fn new(line: &'a str) -> Self {
        let body = line.trim_start_matches([' ', '\t']);
        let indent = &line[..line.len() - body.len()];
        let key = if body.is_ascii() {
            // What the fuzzy form does to ASCII, without the allocation.
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

    pub fn is_blank(&self) -> bool {
        self.key.is_empty()
    }
}

/// The file as the line-based stages read it: its style, counted once per call on first
/// need, and its lines split again wherever a window is checked.
pub(crate) struct IndentIndex<'a> {
    pub(super) text: &'a str,
    /// How many lines the file has: after a final newline comes an empty last line, as an
    /// editor shows it (oldText may end with it, a blank line with nothing after it).
    pub(super) line_count: usize,
    /// How many of its lines are blank, the empty last line aside.
    pub(super) blank_lines: usize,
    /// The file's own indent step in spaces, when it indents with spaces.
    pub(super) step: Option<usize>,
    /// Whether the file indents mostly with tabs.
    pub(super) tabs: bool,
    /// How many columns a tab stands for, when something settles it (a modeline, the
    /// file's .editorconfig, the way its lines mix tabs and spaces; `tab_width.rs`).
    pub(super) tab_width: Option<usize>,
    /// The width a modeline sets, which wins over the .editorconfig's.
    modeline: Option<usize>,
}

impl<'a> IndentIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut style = StyleCount::default();
        let mut mixing = Mixing::default();
        let (mut line_count, mut blank_lines) = (0, 0);
        for line in text.split('\n') {
            line_count += 1;
            let line = Line::new(line);
            blank_lines += usize::from(line.is_blank());
            if !line.is_blank() {
                mixing.add(line.indent);
            }
            style.add(&line);
        }
        if text.is_empty() || text.ends_with('\n') {
            blank_lines -= 1;
        }
        let (step, tabs) = style.finish();
        let modeline = modeline(text);
        IndentIndex {
            text,
            line_count,
            blank_lines,
            step,
            tabs,
            tab_width: modeline.or(mixing.width()),
            modeline,
        }
    }

    /// The index with the tab width the file's .editorconfig sets, which a modeline
    /// overrides and which overrides what the mix of tabs and spaces suggests.
    pub fn configured(mut self, tab_width: Option<usize>) -> Self {
        self.tab_width = self.modeline.or(tab_width).or(self.tab_width);
        self
    }

    /// Whether line `i` (0-based) ends with a newline.
    pub(super) fn has_newline(&self, i: usize) -> bool {
        i + 1 < self.line_count
    }

    /// The lines from byte `offset` (a line's start) on, each with its own start.
    pub(super) fn lines_from(&self, offset: usize) -> impl Iterator<Item = (usize, &'a str)> + 'a {
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

/// An `oldText` (LF-only) split into lines for the line-based stages.
pub(super) struct OldLines<'a> {
    /// Its lines; a final newline ends the last line rather than starting an empty one.
    pub lines: Vec<Line<'a>>,
    /// Whether it ends with a newline.
    pub trailing_newline: bool,
    /// Indices in `lines` of the lines with text, in order (never empty).
    pub text_lines: Vec<usize>,
    /// Whether any line with text is indented with a tab (for the description).
    pub tabs: bool,
}

impl<'a> OldLines<'a> {
    /// `None` when `old` has no line with text (nothing to locate a window by).
    pub fn new(old: &'a str) -> Option<Self> {
        let trailing_newline = old.ends_with('\n');
        let body = old.strip_suffix('\n').unwrap_or(old);
        let lines: Vec<Line<'a>> = body.split('\n').map(Line::new).collect();
        let text_lines: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_blank()).collect();
        if text_lines.is_empty() {
            return None;
        }
        let tabs = text_lines.iter().any(|&i| lines[i].indent.contains('\t'));
        Some(OldLines {
            lines,
            trailing_newline,
            text_lines,
            tabs,
        })
    }

    /// Whether only one of its lines has text (its indentation then tells no structure).
    pub fn one_line(&self) -> bool {
        self.text_lines.len() == 1
    }

    /// The first line with text: windows are looked for where it shows up.
    pub fn anchor(&self) -> &Line<'a> {
        &self.lines[self.text_lines[0]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_step_style_and_blank_lines() {
        let index = IndentIndex::new("a\n  b\n    c\n\n  d\ne\n  f\n");
        assert_eq!(
            (index.step, index.tabs, index.blank_lines),
            (Some(2), false, 1)
        );
        let index = IndentIndex::new("a\n\tb\n\t\tc");
        assert_eq!((index.step, index.tabs, index.blank_lines), (None, true, 0));
        assert_eq!(IndentIndex::new("").blank_lines, 0);
    }
}
