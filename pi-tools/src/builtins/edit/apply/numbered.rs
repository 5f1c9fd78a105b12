//! Placing an edit whose oldText carries line numbers copied from tool output
//! (`numbers.rs` reads them): the text without them goes through the stages, and is placed
//! only where the first number says.

use super::{Locator, Miss, Placed, Stage};
use crate::builtins::edit::blank_note::BlankLineAdjustment;
use crate::builtins::edit::indent::LineRange;
use crate::builtins::edit::indent_note::IndentAdjustment;
use crate::builtins::edit::matching::Located;
use crate::builtins::edit::numbers::{self, Numbered};
use crate::builtins::edit::numbers_note::LineNumberAdjustment;
use crate::builtins::edit::refusal;
use crate::core::ToolError;

/// One reading of an oldText's line numbers that placed the edit where the first number
/// says, with what the stages noted about it.
struct Reading {
    placed: Placed,
    lines: LineRange,
    /// Whether newText lost its line numbers too.
    new_stripped: bool,
    /// The indentation and blank-line adjustments the stages noted.
    notes: (Vec<IndentAdjustment>, Vec<BlankLineAdjustment>),
}

/// What one reading of the numbers came to.
enum Outcome {
    /// Placed where the first number says.
    Placed(Reading),
    /// A stage refused the text without the numbers (several places, already applied, ...).
    Refused(Stage, ToolError),
    /// The text without the numbers is nowhere, or not where the numbers say (`true`: it
    /// is somewhere, and the message says where).
    Unfit(bool, ToolError),
}

impl Outcome {
    /// The stage that decided the reading; `None` when none did.
    fn stage(&self) -> Option<Stage> {
        match self {
            Outcome::Placed(reading) => Some(reading.placed.stage),
            Outcome::Refused(stage, _) => Some(*stage),
            Outcome::Unfit(..) => None,
        }
    }
}

impl Locator<'_> {
    /// Edit `i` with oldText's line numbers removed (and newText's, when each of its lines
    /// has one): placed when the text without them is found once, where the first number
    /// says. grep's prefixes are read with and without a space after them (pi-tools' grep
    /// prints one, GNU grep does not): the reading an earlier stage decides wins, whether
    /// it placed the edit or refused it, and two that one stage placed must write the same.
    pub(super) fn place_numbered(
        &mut self,
        i: usize,
        numbered: Numbered,
        new_text: &str,
    ) -> Result<Placed, ToolError> {
        let label = self.labels.old_text(i);
        let intro = refusal::numbers_intro(&label, numbered.style, &numbered.example);
        let readings = std::iter::once((numbered.text.as_str(), false))
            .chain(numbered.spaced.as_deref().map(|text| (text, true)));
        let mut outcomes = Vec::with_capacity(2);
        for (old, spaced) in readings {
            let outcome = self.read_numbered(i, &numbered, &intro, old, new_text, spaced);
            outcomes.push(outcome);
        }
        let decided = outcomes.iter().filter_map(Outcome::stage).min();
        let mut chosen: Option<Reading> = None;
        // When no stage decided: the message that says where the text is, else the first.
        let mut unfit: Option<(bool, ToolError)> = None;
        for outcome in outcomes {
            match outcome {
                Outcome::Refused(stage, e) if Some(stage) == decided => return Err(e),
                Outcome::Placed(reading) if Some(reading.placed.stage) == decided => {
                    match &chosen {
                        None => chosen = Some(reading),
                        Some(first)
                            if first.placed.at != reading.placed.at
                                || first.placed.new_text != reading.placed.new_text =>
                        {
                            return Err(ToolError::new(refusal::numbers_spacing_unclear(
                                &intro,
                                &label,
                                first.lines,
                                self.shown,
                            )));
                        }
                        Some(_) => {}
                    }
                }
                Outcome::Unfit(says_where, e)
                    if unfit.as_ref().is_none_or(|(said, _)| says_where && !said) =>
                {
                    unfit = Some((says_where, e));
                }
                _ => {}
            }
        }
        let Some(chosen) = chosen else {
            return Err(unfit.map(|(_, e)| e).unwrap_or_else(|| {
                ToolError::new(refusal::numbered_not_found(
                    &intro,
                    &label,
                    self.text,
                    &numbered.text,
                    self.shown,
                ))
            }));
        };
        let Reading {
            mut placed,
            lines,
            new_stripped,
            notes: (indentation, blank_lines),
        } = chosen;
        self.indentation.extend(indentation);
        self.blank_lines.extend(blank_lines);
        // Removing the numbers forgave a mistake, whichever stage then matched.
        placed.at.fuzzy = true;
        self.line_numbers
            .push(LineNumberAdjustment::new(i, &numbered, lines, new_stripped));
        Ok(placed)
    }

    /// One reading of edit `i`'s numbers: `old` is oldText without them (`spaced`: and
    /// without the space after each), newText loses them when each of its lines has one.
    fn read_numbered(
        &mut self,
        i: usize,
        numbered: &Numbered,
        intro: &str,
        old: &str,
        new_text: &str,
        spaced: bool,
    ) -> Outcome {
        let label = self.labels.old_text(i);
        let stripped_new = numbers::strip_new(new_text, numbered, spaced);
        let new = stripped_new.as_deref().unwrap_or(new_text);
        // What the stages note about an adjustment is kept for the reading chosen only.
        let marks = (self.indentation.len(), self.blank_lines.len());
        let found = self.find(i, old, new);
        let notes = (
            self.indentation.split_off(marks.0),
            self.blank_lines.split_off(marks.1),
        );
        let placed = match found {
            Ok(placed) => placed,
            Err(Miss::Refused(e)) => {
                let message = format!("{intro} Without them {}", e.message());
                return Outcome::Refused(self.reached, ToolError::new(message));
            }
            Err(Miss::NotFound { .. }) => {
                let message =
                    refusal::numbered_not_found(intro, &label, self.text, old, self.shown);
                return Outcome::Unfit(false, ToolError::new(message));
            }
        };
        let lines = lines_of(self.text, &placed.at);
        let message = if starts_inside_indentation(self.text, placed.at.start) {
            refusal::numbers_inside_indentation(intro, &label, lines, self.shown)
        } else if lines.first != numbered.first {
            refusal::wrong_numbers(intro, &label, lines, numbered.first, self.shown)
        } else {
            return Outcome::Placed(Reading {
                placed,
                lines,
                new_stripped: stripped_new.is_some(),
                notes,
            });
        };
        Outcome::Unfit(true, ToolError::new(message))
    }
}

/// Whether a match starting at `start` of `text` starts inside its line's indentation: a
/// numbered line was copied whole after its number, so its text starts where the line does,
/// or (its indentation left out) where the indentation ends, never within it.
fn starts_inside_indentation(text: &str, start: usize) -> bool {
    let bytes = text.as_bytes();
    let line_start = memchr::memrchr(b'\n', &bytes[..start]).map_or(0, |nl| nl + 1);
    start > line_start
        && bytes[line_start..start]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t'))
        && matches!(bytes.get(start), Some(b' ' | b'\t'))
}

/// The lines (1-based) a located region covers.
pub(super) fn lines_of(text: &str, at: &Located) -> LineRange {
    let bytes = text.as_bytes();
    let first = memchr::memchr_iter(b'\n', &bytes[..at.start]).count() + 1;
    let last_byte = at.end.saturating_sub(1).max(at.start);
    let last = first + memchr::memchr_iter(b'\n', &bytes[at.start..last_byte]).count();
    LineRange { first, last }
}
