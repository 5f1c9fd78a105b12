//! Applying one call's edits to a file's text, in memory: each `oldText` located by the
//! four stages, checked for uniqueness and overlap, its `newText` spliced into the original
//! bytes, and the diff of the change built around the edited lines. The refusals are worded
//! in `refusal.rs`.

use super::Replacement;
use super::blank::{BlankFit, BlankMatch, locate_drifted};
use super::blank_map::map_new_text;
use super::blank_note::BlankLineAdjustment;
use super::diff::EditDiff;
use super::indent::{IndentFit, IndentMatch, LineRange, locate_indented};
use super::indent_note::IndentAdjustment;
use super::line_endings::with_endings;
use super::lines::IndentIndex;
use super::matching::{LfText, LocateError, Located, SplitCharacter, locate};
use super::moves::moved_away;
use super::numbers::{self, Prefixes};
use super::numbers_note::LineNumberAdjustment;
use super::refusal::{self, Labels};
use super::replace_all::{AllError, ReplacedAll, locate_all};
use super::stale::{already_applied, sent_text_present};
use super::transform::default_width;
use super::wrappers::WrapperRemoved;
use crate::builtins::results::EditStage;
use crate::core::ToolError;

mod numbered;
mod unwrapped;
mod window_diff;

use window_diff::diff_of;

/// The outcome of applying edits to a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new content of the file.
    pub content: String,
    /// The diffs of the change (computed on the LF-normalised text).
    pub diff: EditDiff,
    /// Whether any edit was located by a forgiving match (normalised text, adjusted
    /// indentation or blank lines, line numbers removed).
    pub fuzzy: bool,
    /// The edits whose oldText matched once its indentation was adjusted, and how.
    pub indentation: Vec<IndentAdjustment>,
    /// The edits whose oldText matched once its blank lines were set aside, and where they
    /// differed.
    pub blank_lines: Vec<BlankLineAdjustment>,
    /// The edits whose oldText matched once the line numbers copied into it were removed.
    pub line_numbers: Vec<LineNumberAdjustment>,
    /// How many regions were replaced (each occurrence of a `replaceAll` edit counts).
    pub replacements: usize,
    /// The `replaceAll` edits and how many occurrences each replaced.
    pub replaced_all: Vec<ReplacedAll>,
    /// The edits whose texts were found only without the wrapper they came in.
    pub wrappers: Vec<WrapperRemoved>,
    /// How each edit, in the order given, was located.
    pub stages: Vec<EditStage>,
}

/// What [`apply_edits_with`] knows about the file beyond its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileHints {
    /// How many columns a tab stands for, as the file's `.editorconfig` sets it
    /// (`tab_width`, else `indent_size`). A modeline in the file overrides it.
    pub tab_width: Option<usize>,
}

/// Applies all edits to the text of a file, in memory: each `oldText` located in the
/// original (exactly; else through normalisation; else line by line with one consistent
/// indentation mistake forgiven; else with blank lines set aside as well), checked for
/// uniqueness and overlap, and its `newText` (re-indented and placed around the file's blank
/// lines the way oldText was matched) spliced into the original text, whose BOM, line
/// endings and other bytes stay as they were. All or nothing: the error (naming the file as
/// `shown`) says why no edit was applied.
///
/// This is the whole of `edit` except the file IO, for tools that keep text elsewhere.
pub fn apply_edits(
    original: &str,
    edits: &[Replacement],
    shown: &str,
) -> Result<Edited, ToolError> {
    apply_edits_with(original, edits, shown, FileHints::default())
}

/// [`apply_edits`] with what is known about the file beyond its text (its .editorconfig's
/// tab width).
pub fn apply_edits_with(
    original: &str,
    edits: &[Replacement],
    shown: &str,
    hints: FileHints,
) -> Result<Edited, ToolError> {
    let (bom, body) = match original.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", original),
    };
    let lf = LfText::new(body);
    let labels = Labels { count: edits.len() };
    let mut locator = Locator {
        text: &lf.text,
        index: None,
        tab_width: hints.tab_width,
        shown,
        edits,
        labels,
        reached: Stage::Exact,
        indentation: Vec::new(),
        blank_lines: Vec::new(),
        line_numbers: Vec::new(),
        wrappers: Vec::new(),
    };
    let mut placed: Vec<Placed> = Vec::with_capacity(edits.len());
    let mut replaced_all = Vec::new();
    for (i, edit) in edits.iter().enumerate() {
        if edit.replace_all {
            let all = locator.place_all(i, edit)?;
            replaced_all.push(ReplacedAll {
                edit: i,
                count: all.len(),
            });
            placed.extend(all);
        } else {
            placed.push(locator.place(i, edit)?);
        }
    }
    let Locator {
        indentation,
        blank_lines,
        line_numbers,
        wrappers,
        ..
    } = locator;
    placed.sort_by_key(|p| p.at.start);
    check_overlaps(&placed, shown)?;
    let content = splice(bom, body, &lf, &placed, labels, shown)?;
    if content == original {
        return Err(ToolError::new(refusal::no_change(shown)));
    }
    let stages = edit_stages(
        edits.len(),
        &placed,
        &replaced_all,
        &line_numbers,
        &wrappers,
    );
    Ok(Edited {
        stages,
        content,
        diff: diff_of(&lf.text, &placed, shown),
        fuzzy: placed.iter().any(|p| p.at.fuzzy),
        indentation,
        blank_lines,
        line_numbers,
        replacements: placed.len(),
        replaced_all,
        wrappers,
    })
}

/// One edit located in the LF text, with the text to put there.
struct Placed {
    /// Its index in `edits`.
    edit: usize,
    at: Located,
    new_text: String,
    /// The stage that located it.
    stage: Stage,
}

/// The stage that located each edit, for the typed result: a wrapper removed or line
/// numbers removed say so first (the text was found only without them), then `replaceAll`,
/// then the matching stage.
fn edit_stages(
    count: usize,
    placed: &[Placed],
    replaced_all: &[ReplacedAll],
    line_numbers: &[LineNumberAdjustment],
    wrappers: &[WrapperRemoved],
) -> Vec<EditStage> {
    let mut stages = vec![EditStage::Exact; count];
    for p in placed {
        if let Some(stage) = stages.get_mut(p.edit) {
            *stage = match p.stage {
                Stage::Exact => EditStage::Exact,
                Stage::Normalised => EditStage::Normalised,
                Stage::Indentation => EditStage::Indentation,
                Stage::BlankLines => EditStage::BlankLines,
            };
        }
    }
    let marks = replaced_all.iter().map(|r| (r.edit, EditStage::ReplaceAll));
    let marks = marks.chain(
        line_numbers
            .iter()
            .map(|n| (n.edit, EditStage::LineNumbers)),
    );
    let marks = marks.chain(wrappers.iter().map(|w| (w.edit, EditStage::Unwrapped)));
    for (edit, stage) in marks {
        if let Some(slot) = stages.get_mut(edit) {
            *slot = stage;
        }
    }
    stages
}

/// The matching stages, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    Exact,
    Normalised,
    Indentation,
    BlankLines,
}

/// Why the stages placed no edit: nothing matched (with what the refusal can tell about
/// it), or a stage refused.
enum Miss {
    NotFound {
        split: Option<SplitCharacter>,
        inconsistent: Option<(LineRange, bool)>,
    },
    Refused(ToolError),
}

impl From<ToolError> for Miss {
    fn from(e: ToolError) -> Self {
        Miss::Refused(e)
    }
}

/// Locates the edits of one call in the LF text, stage by stage, and gathers what the
/// forgiving stages adjusted.
struct Locator<'t> {
    text: &'t str,
    /// The file as the line-based stages read it, built on first need.
    index: Option<IndentIndex<'t>>,
    /// The tab width the file's .editorconfig sets.
    tab_width: Option<usize>,
    shown: &'t str,
    /// All edits of the call: one that moves lines is told from a resend by another.
    edits: &'t [Replacement],
    labels: Labels,
    /// The last stage tried for the current edit (the one that refused it, when one did).
    reached: Stage,
    indentation: Vec<IndentAdjustment>,
    blank_lines: Vec<BlankLineAdjustment>,
    line_numbers: Vec<LineNumberAdjustment>,
    wrappers: Vec<WrapperRemoved>,
}

impl<'t> Locator<'t> {
    /// Every exact occurrence of edit `i`'s oldText (`replaceAll`), each with its newText;
    /// no forgiving stage applies.
    fn place_all(&self, i: usize, edit: &Replacement) -> Result<Vec<Placed>, ToolError> {
        let old = edit.old_text.replace("\r\n", "\n");
        let new_text = edit.new_text.replace("\r\n", "\n");
        let label = self.labels.old_text(i);
        if old.is_empty() {
            return Err(ToolError::new(refusal::empty(&label)));
        }
        let all = locate_all(self.text, &old).map_err(|e| {
            ToolError::new(match e {
                AllError::NotFound => refusal::not_found_all(&label, self.text, &old, self.shown),
                AllError::Overlap(a, b) => refusal::overlapping_all(&label, a, b, self.shown),
            })
        })?;
        Ok(all
            .into_iter()
            .map(|at| Placed {
                edit: i,
                at,
                new_text: new_text.clone(),
                stage: Stage::Exact,
            })
            .collect())
    }

    /// Locates edit `i` and prepares its newText, or says why it cannot be applied: through
    /// the stages, else without the line numbers copied into it.
    fn place(&mut self, i: usize, edit: &Replacement) -> Result<Placed, ToolError> {
        let old = edit.old_text.replace("\r\n", "\n");
        let new_text = edit.new_text.replace("\r\n", "\n");
        let label = self.labels.old_text(i);
        if old.is_empty() {
            return Err(ToolError::new(refusal::empty(&label)));
        }
        let (split, inconsistent) = match self.find(i, &old, &new_text) {
            Ok(placed) => return Ok(placed),
            Err(Miss::Refused(e)) => return Err(e),
            Err(Miss::NotFound {
                split,
                inconsistent,
            }) => (split, inconsistent),
        };
        // Wrappers and line numbers are looked for only in an oldText that matched nothing at
        // all, not even in part of a character or with another indentation.
        if split.is_none()
            && inconsistent.is_none()
            && let Some(placed) = self.place_unwrapped(i, &old, &new_text)
        {
            return placed;
        }
        let prefixes = match (&split, inconsistent) {
            (None, None) => numbers::detect(&old),
            _ => Prefixes::None,
        };
        let message = match prefixes {
            Prefixes::Numbered(numbered) => return self.place_numbered(i, numbered, &new_text),
            Prefixes::Unfit(style, example, why) => {
                refusal::unfit_numbers(&label, style, &example, &why)
            }
            Prefixes::None => match split {
                Some(split) => refusal::splits_character(&label, &split, self.shown),
                None => refusal::not_found(&label, self.text, &old, self.shown, inconsistent),
            },
        };
        Err(ToolError::new(message))
    }

    /// Edit `i` through the four stages; a match through a forgiving stage is refused when
    /// the edit looks already applied, unless another edit of the call takes the lines that
    /// make it look so away from where they are (a move, `moves.rs`).
    fn find(&mut self, i: usize, old: &str, new_text: &str) -> Result<Placed, Miss> {
        let placed = self.stages(i, old, new_text)?;
        self.reached = placed.stage;
        if placed.stage != Stage::Exact
            && let Some((window, found)) =
                already_applied(self.text, placed.at.start, placed.at.end, &placed.new_text)
            && !moved_away(self.text, self.edits, i, window, found)
        {
            let label = self.labels.old_text(i);
            return Err(Miss::Refused(ToolError::new(refusal::already_applied(
                &label,
                placed.stage,
                window,
                found,
                self.shown,
            ))));
        }
        if placed.stage != Stage::Exact
            && let Some(found) = sent_text_present(self.text, old, new_text)
        {
            let window = numbered::lines_of(self.text, &placed.at);
            if !moved_away(self.text, self.edits, i, window, found) {
                let label = self.labels.old_text(i);
                return Err(Miss::Refused(ToolError::new(refusal::sent_text_present(
                    &label,
                    &self.labels.new_text(i),
                    placed.stage,
                    window,
                    found,
                    self.shown,
                ))));
            }
        }
        Ok(placed)
    }

    fn stages(&mut self, i: usize, old: &str, new_text: &str) -> Result<Placed, Miss> {
        self.reached = Stage::Exact;
        let split = match locate(self.text, old) {
            Ok(at) => {
                return Ok(Placed {
                    edit: i,
                    at,
                    new_text: new_text.to_string(),
                    stage: if at.fuzzy {
                        Stage::Normalised
                    } else {
                        Stage::Exact
                    },
                });
            }
            Err(LocateError::Ambiguous { count, lines }) => {
                return Err(ToolError::new(refusal::ambiguous(
                    &self.labels.old_text(i),
                    count,
                    &lines,
                    self.shown,
                ))
                .into());
            }
            Err(LocateError::NotFound) => None,
            Err(LocateError::SplitsCharacter(split)) => Some(split),
        };
        let (text, tab_width) = (self.text, self.tab_width);
        let index = self
            .index
            .get_or_insert_with(|| IndentIndex::new(text).configured(tab_width));
        self.reached = Stage::Indentation;
        let inconsistent = match locate_indented(index, old) {
            IndentMatch::Fit(fit) => return self.place_indented(i, fit, new_text),
            IndentMatch::Ambiguous(lines) => {
                let label = self.labels.old_text(i);
                return Err(ToolError::new(refusal::ambiguous_indented(
                    &label, &lines, self.shown,
                ))
                .into());
            }
            IndentMatch::Inconsistent(windows, other_depth) => {
                windows.first().map(|&w| (w, other_depth))
            }
            IndentMatch::NotFound => None,
        };
        self.reached = Stage::BlankLines;
        match locate_drifted(index, old) {
            BlankMatch::Fit(fit) => return self.place_drifted(i, fit, old, new_text),
            BlankMatch::Ambiguous(lines) => {
                let label = self.labels.old_text(i);
                return Err(
                    ToolError::new(refusal::ambiguous_blank(&label, &lines, self.shown)).into(),
                );
            }
            BlankMatch::NotFound => {}
        }
        Err(Miss::NotFound {
            split,
            inconsistent,
        })
    }

    /// `new_text` re-indented the way the indentation stage matched oldText; refused when
    /// the tab widths the file leaves open would write it differently.
    fn reindent(&self, i: usize, fit: &IndentFit, new_text: &str) -> Result<String, ToolError> {
        let indented = fit.transform.apply_to_text(new_text).map_err(|line| {
            ToolError::new(refusal::too_shallow(
                &self.labels.new_text(i),
                line,
                fit,
                self.shown,
            ))
        })?;
        if fit
            .alternatives
            .iter()
            .any(|other| other.apply_to_text(new_text).as_ref() != Ok(&indented))
        {
            return Err(ToolError::new(refusal::unsettled_width(
                &self.labels.old_text(i),
                fit,
                self.shown,
            )));
        }
        Ok(indented)
    }

    /// Reports an indentation adjustment, when there was one.
    fn note_indentation(&mut self, i: usize, fit: &IndentFit) {
        if !fit.is_identity() {
            let width = self.index.as_ref().map_or(4, default_width);
            self.indentation.push(fit.adjustment(i, width));
        }
    }

    fn place_indented(&mut self, i: usize, fit: IndentFit, new_text: &str) -> Result<Placed, Miss> {
        let new_text = self.reindent(i, &fit, new_text)?;
        self.note_indentation(i, &fit);
        Ok(Placed {
            edit: i,
            at: Located {
                start: fit.start,
                end: fit.end,
                fuzzy: true,
            },
            new_text,
            stage: Stage::Indentation,
        })
    }

    fn place_drifted(
        &mut self,
        i: usize,
        fit: BlankFit,
        old: &str,
        new_text: &str,
    ) -> Result<Placed, Miss> {
        let indented = self.reindent(i, &fit.fit, new_text)?;
        let new_text = map_new_text(&fit.gaps, old, new_text, &indented).map_err(|at| {
            let (label, new_label) = (self.labels.old_text(i), self.labels.new_text(i));
            ToolError::new(refusal::ill_defined(
                &label, &new_label, &fit, at, self.shown,
            ))
        })?;
        self.note_indentation(i, &fit.fit);
        self.blank_lines.push(fit.adjustment(i));
        Ok(Placed {
            edit: i,
            at: Located {
                start: fit.fit.start,
                end: fit.fit.end,
                fuzzy: true,
            },
            new_text,
            stage: Stage::BlankLines,
        })
    }
}

/// Refuses edits (sorted by start) that overlap, naming the first two.
fn check_overlaps(placed: &[Placed], shown: &str) -> Result<(), ToolError> {
    for pair in placed.windows(2) {
        let (first, second) = (&pair[0], &pair[1]);
        if second.at.start < first.at.end {
            let (a, b) = (first.edit.min(second.edit), first.edit.max(second.edit));
            return Err(ToolError::new(refusal::overlap(a, b, shown)));
        }
    }
    Ok(())
}

/// The file's new content: each placed newText (sorted, not overlapping) spliced into the
/// original bytes of `body`, after the BOM, with the line endings of the lines it replaces
/// (`line_endings.rs`).
fn splice(
    bom: &str,
    body: &str,
    lf: &LfText<'_>,
    placed: &[Placed],
    labels: Labels,
    shown: &str,
) -> Result<String, ToolError> {
    let mut content = String::with_capacity(bom.len() + body.len() + 64);
    content.push_str(bom);
    let mut orig_pos = 0;
    for (k, p) in placed.iter().enumerate() {
        let limit = placed
            .get(k + 1)
            .map_or(lf.text.len(), |next| next.at.start);
        let written = with_endings(lf, p.at.start, p.at.end, &p.new_text, limit).map_err(|_| {
            let lines = numbered::lines_of(&lf.text, &p.at);
            ToolError::new(refusal::mixed_endings(
                &labels.old_text(p.edit),
                &labels.new_text(p.edit),
                lines,
                shown,
            ))
        })?;
        let from = lf.original_offset(written.range.start);
        content.push_str(&body[orig_pos..from]);
        content.push_str(&written.text);
        orig_pos = lf.original_offset(written.range.end);
    }
    content.push_str(&body[orig_pos..]);
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(old: &str, new: &str) -> Replacement {
        Replacement {
            old_text: old.into(),
            new_text: new.into(),
            replace_all: false,
        }
    }

    #[test]
    fn splices_into_original_bytes() {
        let original = "\u{FEFF}a  \r\nsay \u{201C}hi\u{201D}\r\nend\n";
        let out = apply_edits(original, &[r("say \"hi\"", "say \"bye\"")], "f").unwrap();
        assert_eq!(out.content, "\u{FEFF}a  \r\nsay \"bye\"\r\nend\n");
        assert!(out.fuzzy);
    }
}
