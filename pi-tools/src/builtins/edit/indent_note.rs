//! What the indentation stage tells about an edit it adjusted: the adjustment as data (in
//! the result's details) and the one sentence a model learns from (in its text).

use super::indent::IndentFit;
use super::transform::{Transform, columns};

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
            start_line: self.lines.first,
            end_line: self.lines.last,
            columns: columns_deeper,
            shift,
            converted_to,
            tab_width,
            note: self.note(),
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
        let lines = self.lines.words();
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
                let verb = if self.lines.first == self.lines.last {
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

pub(super) fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_described_in_words() {
        assert_eq!(whitespace("    "), "4 spaces");
        assert_eq!(whitespace("\t"), "1 tab");
        assert_eq!(whitespace("\t  "), "1 tab and 2 spaces");
    }
}
