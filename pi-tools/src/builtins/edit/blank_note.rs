//! What the blank-line stage tells about an edit it adjusted: the places where oldText's
//! blank lines differed from the file's, as data (in the result's details) and as the one
//! sentence a model learns from (in its text).

use super::blank::{BlankFit, Gap};
use super::indent_note::plural;

/// What the blank-line stage did to one edit, as data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlankLineAdjustment {
    /// Index of the edit in `edits`.
    pub edit: usize,
    /// First line of the file that the edit's oldText matched (1-based, original file).
    pub start_line: usize,
    /// Last line of the file that the edit's oldText matched.
    pub end_line: usize,
    /// The places where oldText's blank lines differ from the file's.
    pub places: Vec<BlankLinePlace>,
    /// The sentence the result text gives.
    pub note: String,
}

/// One place where oldText's blank lines differ from the file's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlankLinePlace {
    /// The file's line (1-based) where the place is: its first blank line there, or the line
    /// that comes after the place when the file has none there.
    pub line: usize,
    /// How many blank lines the file has there.
    pub in_file: usize,
    /// How many blank lines oldText had there.
    pub in_old_text: usize,
}

impl BlankFit {
    /// The adjustment as data, for edit number `edit`.
    pub fn adjustment(&self, edit: usize) -> BlankLineAdjustment {
        let places: Vec<BlankLinePlace> = self
            .gaps
            .iter()
            .filter(|gap| gap.drifts())
            .map(|gap| BlankLinePlace {
                line: gap.line,
                in_file: gap.file.len(),
                in_old_text: gap.old,
            })
            .collect();
        BlankLineAdjustment {
            edit,
            start_line: self.fit.lines.first,
            end_line: self.fit.lines.last,
            note: self.note(),
            places,
        }
    }

    /// One sentence a model learns from: where the blank lines differed, and what was done.
    pub fn note(&self) -> String {
        let places: Vec<String> = self
            .gaps
            .iter()
            .filter(|gap| gap.drifts())
            .map(place)
            .collect();
        format!(
            "your oldText's blank lines differ from {} of the file: it has {}; the file's blank lines were kept next to the lines newText keeps, and the blank lines newText adds or removes were added or removed.",
            self.fit.lines.words(),
            join(&places)
        )
    }

    /// What was wrong with oldText's blank lines, for a refusal.
    pub fn mistake(&self) -> String {
        format!(
            "your oldText's blank lines differ from {} of the file",
            self.fit.lines.words()
        )
    }
}

/// "no blank line at line 5 (the file has 1)", "2 blank lines before line 8 (the file has
/// none)".
fn place(gap: &Gap) -> String {
    let (file, old) = (gap.file.len(), gap.old);
    let at = match file {
        0 => format!("before line {}", gap.line),
        1 => format!("at line {}", gap.line),
        n => format!("at lines {}-{}", gap.line, gap.line + n - 1),
    };
    let count = |n: usize| match n {
        0 => "no blank line".to_string(),
        n => plural(n as u64, "blank line"),
    };
    let file_has = match file {
        0 => "none".to_string(),
        n => n.to_string(),
    };
    format!("{} {at} (the file has {file_has})", count(old))
}

/// "a", "a and b", "a, b and c".
fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::edit::indent::{IndentFit, LineRange};
    use crate::builtins::edit::transform::Transform;

    #[test]
    fn places_are_described_in_words() {
        let gap = |line, file, old| Gap {
            line,
            file: vec![String::new(); file],
            old,
        };
        let fit = BlankFit {
            fit: IndentFit {
                start: 0,
                end: 0,
                lines: LineRange { first: 3, last: 9 },
                transform: Transform::Deepen(String::new()),
                old_tabs: false,
                alternatives: Vec::new(),
            },
            gaps: vec![gap(3, 0, 0), gap(5, 1, 0), gap(8, 0, 2), gap(10, 0, 0)],
        };
        assert_eq!(
            fit.note(),
            "your oldText's blank lines differ from lines 3-9 of the file: it has no blank line at line 5 (the file has 1) and 2 blank lines before line 8 (the file has none); the file's blank lines were kept next to the lines newText keeps, and the blank lines newText adds or removes were added or removed."
        );
    }
}
