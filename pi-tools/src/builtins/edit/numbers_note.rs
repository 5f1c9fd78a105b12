//! What edit tells about line numbers it removed from an oldText: as data (in the result's
//! details) and as the sentence a model learns from (in its text).

use super::indent::LineRange;
use super::numbers::Numbered;

/// Line numbers removed from one edit's oldText (and newText), as data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LineNumberAdjustment {
    /// Index of the edit in `edits`.
    pub edit: usize,
    /// The style of the prefixes: `"cat -n"` (also `nl -ba`), `"arrow"` (`12→`), `"bar"`
    /// (`12 | `) or `"grep"` (`path:12:`, `12:`, `-` for context lines).
    pub style: String,
    /// First line of the file that the oldText without numbers matched (1-based), the one
    /// its first number named.
    pub start_line: usize,
    /// Last line of the file it matched.
    pub end_line: usize,
    /// Whether newText's lines carried numbers too, and lost them.
    pub new_text_stripped: bool,
    /// The sentence the result text gives.
    pub note: String,
}

impl LineNumberAdjustment {
    pub(super) fn new(edit: usize, numbered: &Numbered, lines: LineRange, new_text: bool) -> Self {
        let new_words = if new_text {
            "newText's line numbers were removed the same way."
        } else {
            "newText was used as sent, since not all of its lines carried one."
        };
        let note = format!(
            "your oldText's lines began with line numbers in the {} style ({}), which are not part of the file; they were removed, and oldText then matched {} of the file. {new_words}",
            numbered.style.words(),
            numbered.example,
            lines.words(),
        );
        LineNumberAdjustment {
            edit,
            style: numbered.style.name().to_string(),
            start_line: lines.first,
            end_line: lines.last,
            new_text_stripped: new_text,
            note,
        }
    }
}
