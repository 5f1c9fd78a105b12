//! The refusals of `apply.rs`, worded so that a model can fix its call: each says what did
//! not match, where, and what to send instead.

use super::apply::Stage;
use super::blank::BlankFit;
use super::blank_map::IllDefined;
use super::indent::{IndentFit, LineRange};
use super::matching::{LINES_SHOWN, SplitCharacter, closest_region};
use super::numbers::{Style, Unfit, elision};
use super::transform::Transform;

/// How the edits of one call are named: `oldText`, or `edits[2].oldText` when there are
/// several.
#[derive(Debug, Clone, Copy)]
pub(super) struct Labels {
    pub count: usize,
}

impl Labels {
    pub fn old_text(&self, i: usize) -> String {
        self.field(i, "oldText")
    }

    pub fn new_text(&self, i: usize) -> String {
        self.field(i, "newText")
    }

    fn field(&self, i: usize, name: &str) -> String {
        if self.count > 1 {
            format!("edits[{i}].{name}")
        } else {
            name.to_string()
        }
    }
}

pub(super) fn empty(label: &str) -> String {
    format!(
        "{label} is empty. Give the exact text to replace, with enough surrounding lines to make it unique."
    )
}

pub(super) fn ambiguous(label: &str, count: usize, lines: &[usize], shown: &str) -> String {
    let place = match lines {
        [line] => format!("all on line {line}"),
        _ => format!("starting at lines {}", line_list(lines)),
    };
    format!(
        "{label} matches {count} places in {shown} ({place}); it must match exactly one. Add surrounding lines to make it unique."
    )
}

pub(super) fn not_found_all(label: &str, text: &str, old: &str, shown: &str) -> String {
    let mut message = format!(
        "Could not find {label} in {shown}. With replaceAll, every occurrence must match the file exactly, including whitespace and indentation (no forgiving match applies): read the file again and copy the text from it."
    );
    push_region(&mut message, text, old);
    message
}

pub(super) fn overlapping_all(label: &str, first: usize, second: usize, shown: &str) -> String {
    let lines = if first == second {
        format!("both on line {first}")
    } else {
        format!("on lines {first} and {second}")
    };
    format!(
        "{label} occurs in {shown} in places that overlap ({lines}), so replacing every occurrence is not defined. Make {label} longer or shorter so that its occurrences are apart, or replace them with separate edits."
    )
}

pub(super) fn wrappers_disagree(label: &str, wrappers: &[&str], shown: &str) -> String {
    format!(
        "Could not find {label} in {shown} as sent. Without {} it matches, but those readings would write different text, so none was applied. Send oldText and newText exactly as the file has them, without wrappers.",
        wrappers.join(", or without ")
    )
}

pub(super) fn overlap(a: usize, b: usize, shown: &str) -> String {
    format!(
        "edits[{a}] and edits[{b}] overlap in {shown}. Merge them into one edit, or make them cover separate parts of the file."
    )
}

pub(super) fn mixed_endings(label: &str, new_label: &str, lines: LineRange, shown: &str) -> String {
    format!(
        "{label} replaces {} of {shown}, whose line endings mix CRLF and LF, and the lines of {new_label} do not line up with them one for one, so which ending each new line should get is not defined. Split the edit into parts that each replace lines with one kind of ending, or keep the lines around the change as they are in both texts.",
        lines.words()
    )
}

pub(super) fn no_change(shown: &str) -> String {
    format!(
        "No changes made to {shown}: the replacements produce the same content. Make newText differ from oldText."
    )
}

/// Not found at all: the rule, a note on a window whose indentation was almost right (a
/// single line at another depth: `true`), a note on elided lines, and the most similar part
/// of the file.
pub(super) fn not_found(
    label: &str,
    text: &str,
    old: &str,
    shown: &str,
    inconsistent: Option<(LineRange, bool)>,
) -> String {
    let mut message = format!(
        "Could not find {label} in {shown}. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it."
    );
    if let Some((lines, true)) = inconsistent {
        message.push_str(&format!(
            " Line {} of the file has the same text at another depth; a single line is only matched at its own depth (in tabs or in spaces), since the same line deeper or shallower is most likely another place. If it is the place you mean, copy its indentation from the file.",
            lines.first
        ));
    } else if let Some((lines, _)) = inconsistent {
        let (lines, why) = if lines.first == lines.last {
            (
                format!("Line {} of the file has", lines.first),
                "is not oldText's shifted or converted between tabs and spaces",
            )
        } else {
            (
                format!("Lines {}-{} of the file have", lines.first, lines.last),
                "differs from line to line in a way no single shift or tabs-for-spaces conversion explains",
            )
        };
        message.push_str(&format!(
            " {lines} the same text, but the indentation {why}; copy the indentation from the file."
        ));
    }
    if let Some((line, elided)) = elision(old) {
        message.push_str(&format!(
            " Line {line} of {label} (\"{elided}\") stands for lines left out, but edit matches text exactly: send {label} whole, every line copied from the file, with none left out."
        ));
    }
    push_region(&mut message, text, old);
    message
}

/// The most similar part of the file, when there is one.
fn push_region(message: &mut String, text: &str, old: &str) {
    if let Some(region) = closest_region(text, old) {
        message.push_str("\n\nThe most similar part of the file:\n");
        message.push_str(&region);
    }
}

/// The start of every refusal about line numbers copied into oldText.
pub(super) fn numbers_intro(label: &str, style: Style, example: &str) -> String {
    format!(
        "{label}'s lines begin with line numbers in the {} style ({example}), which are not part of the file.",
        style.words()
    )
}

/// The request that ends them.
const SEND_WITHOUT_NUMBERS: &str = "without line numbers, copied from the file as it is now.";

pub(super) fn unfit_numbers(label: &str, style: Style, example: &str, why: &Unfit) -> String {
    let intro = numbers_intro(label, style, example);
    let intro = intro.strip_suffix('.').unwrap_or(&intro);
    let why = match why {
        Unfit::Missing { line } => format!("but line {line} of {label} has none"),
        Unfit::NotConsecutive {
            line,
            number,
            previous,
        } => format!(
            "and they are not consecutive (line {line} of {label} has {number} after {previous})"
        ),
    };
    format!("{intro}, {why}, so they were not removed. Send {label} {SEND_WITHOUT_NUMBERS}")
}

pub(super) fn numbered_not_found(
    intro: &str,
    label: &str,
    text: &str,
    stripped: &str,
    shown: &str,
) -> String {
    let mut message = format!(
        "{intro} Even without them {label} is not in {shown}. Send {label} {SEND_WITHOUT_NUMBERS}"
    );
    push_region(&mut message, text, stripped);
    message
}

pub(super) fn wrong_numbers(
    intro: &str,
    label: &str,
    found: LineRange,
    first: usize,
    shown: &str,
) -> String {
    format!(
        "{intro} Without them {label} matches {} of {shown}, not line {first} as the first number says, so the numbers are not this file's. Send {label} {SEND_WITHOUT_NUMBERS}",
        found.words()
    )
}

pub(super) fn numbers_inside_indentation(
    intro: &str,
    label: &str,
    found: LineRange,
    shown: &str,
) -> String {
    format!(
        "{intro} Without them {label} matches {} of {shown} only from inside the indentation of its first line, where no line copied after its number starts, so the numbers do not name it. Send {label} {SEND_WITHOUT_NUMBERS}",
        found.words()
    )
}

pub(super) fn numbers_spacing_unclear(
    intro: &str,
    label: &str,
    found: LineRange,
    shown: &str,
) -> String {
    format!(
        "{intro} Without them {label} matches {} of {shown} whether or not the space after each number is taken as part of it, and the two readings would write newText differently. Send {label} and newText {SEND_WITHOUT_NUMBERS}",
        found.words()
    )
}

/// How a forgiving stage matched, for a sentence.
fn matched_how(stage: Stage) -> &'static str {
    match stage {
        Stage::Exact | Stage::Normalised => {
            "once its quotes, dashes, spaces or Unicode forms are normalised"
        }
        Stage::Indentation => "with its indentation adjusted",
        Stage::BlankLines => "with its blank lines adjusted",
    }
}

pub(super) fn already_applied(
    label: &str,
    stage: Stage,
    window: LineRange,
    found: LineRange,
    shown: &str,
) -> String {
    format!(
        "{label} matches {shown} only {} ({}), and the lines of newText are already there ({}): the edit looks already applied. Read the file again to see its current state before editing it.",
        matched_how(stage),
        window.words(),
        found.words()
    )
}

pub(super) fn sent_text_present(
    label: &str,
    new_label: &str,
    stage: Stage,
    window: LineRange,
    found: LineRange,
    shown: &str,
) -> String {
    format!(
        "{label} matches {shown} only {} ({}), and {new_label} as you sent it is already in the file ({}): the edit looks already applied there, and the match is most likely another place. Read the file again to see its current state before editing it.",
        matched_how(stage),
        window.words(),
        found.words()
    )
}

pub(super) fn unsettled_width(label: &str, fit: &IndentFit, shown: &str) -> String {
    let style = match fit.transform {
        Transform::Restyle { to_tabs: false, .. } => "spaces",
        _ => "tabs",
    };
    let copy = if fit.lines.first == fit.lines.last {
        format!("the line's indentation from the file (it is indented with {style})")
    } else {
        format!("the indentation of those lines from the file (they are indented with {style})")
    };
    format!(
        "{label} matches {} of {shown} only with its indentation converted between spaces and tabs, and {shown} does not settle how many columns a tab stands for (no modeline, no tab_width or indent_size in an .editorconfig, no lines mixing tabs and spaces), which decides how newText's lines are indented: the widths at which it matches would write them differently. Copy {copy}, and indent newText the same way.",
        fit.lines.words()
    )
}

/// `1, 5, 9`: the first [`LINES_SHOWN`] of `lines`, then `…` when there are more.
fn line_list(lines: &[usize]) -> String {
    let mut list = lines
        .iter()
        .take(LINES_SHOWN)
        .map(usize::to_string)
        .collect::<Vec<_>>();
    if lines.len() > LINES_SHOWN {
        list.push("…".to_owned());
    }
    list.join(", ")
}

pub(super) fn ambiguous_indented(label: &str, lines: &[usize], shown: &str) -> String {
    format!(
        "{label} does not match {shown} exactly, and once its indentation is set aside it matches several places (starting at lines {}); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique.",
        line_list(lines)
    )
}

pub(super) fn ambiguous_blank(label: &str, lines: &[usize], shown: &str) -> String {
    format!(
        "{label} does not match {shown} exactly, and once its blank lines and indentation are set aside it matches several places (starting at lines {}); it must match exactly one. Copy the text with its blank lines from the file, and add surrounding lines to make it unique.",
        line_list(lines)
    )
}

pub(super) fn too_shallow(new_label: &str, line: usize, fit: &IndentFit, shown: &str) -> String {
    format!(
        "{new_label} could not be re-indented for {shown}: {}, but line {line} of {new_label} is indented too little to be adjusted the same way. Indent newText the way oldText is indented, or copy the indentation from the file exactly.",
        fit.mistake()
    )
}

pub(super) fn ill_defined(
    label: &str,
    new_label: &str,
    fit: &BlankFit,
    at: IllDefined,
    shown: &str,
) -> String {
    format!(
        "{label} matches {shown} only with its blank lines adjusted ({}), but at line {} that adjustment falls among lines that {new_label} replaces with more or fewer lines, or between two kept lines with new text put between them, so where the file's blank lines belong in the new text is not defined. Copy the blank lines of {} from the file into oldText exactly, or keep a line next to them unchanged in {new_label}.",
        fit.mistake(),
        at.line,
        fit.fit.lines.words()
    )
}

pub(super) fn splits_character(label: &str, split: &SplitCharacter, shown: &str) -> String {
    let (which, advice) = if split.at_start {
        ("begins", "Start")
    } else {
        ("ends", "End")
    };
    format!(
        "{label} matches {shown} only if it {which} inside the character \"{}\" on line {}, which reads as \"{}\"; edit does not replace part of a character. {advice} {label} before or after that character, copying it from the file as it is.",
        split.character, split.line, split.reads_as
    )
}
