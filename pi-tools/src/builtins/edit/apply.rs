//! Applying one call's edits to a file's text, in memory: each `oldText` located by the
//! three stages, checked for uniqueness and overlap, its `newText` spliced into the
//! original bytes, the diff of the change built around the edited lines, and the refusals
//! worded so that a model can fix its call.

use super::Replacement;
use super::diff::{self, EditDiff, diff};
use super::indent::{IndentFit, IndentIndex, IndentMatch, default_width, locate_indented};
use super::indent_note::IndentAdjustment;
use super::matching::{LfText, LocateError, Located, SplitCharacter, closest_region, locate};
use crate::core::ToolError;

/// The outcome of applying edits to a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new content of the file.
    pub content: String,
    /// The diffs of the change (computed on the LF-normalised text).
    pub diff: EditDiff,
    /// Whether any edit was located by a forgiving match (normalised text or adjusted
    /// indentation).
    pub fuzzy: bool,
    /// The edits whose oldText matched once its indentation was adjusted, and how.
    pub indentation: Vec<IndentAdjustment>,
}

/// Applies all edits to the text of a file, in memory: each `oldText` located (exactly, else
/// through normalisation, else line by line with one consistent indentation mistake
/// forgiven) in the original, checked for uniqueness and overlap, and its `newText` (its
/// indentation transformed like oldText's, when that was adjusted) spliced into the original
/// text, whose BOM, line endings and other bytes stay as they were. All or nothing: the error
/// (naming the file as `shown`) says why no edit was applied.
///
/// This is the whole of `edit` except the file IO, for tools that keep text elsewhere.
pub fn apply_edits(
    original: &str,
    edits: &[Replacement],
    shown: &str,
) -> Result<Edited, ToolError> {
    let (bom, body) = match original.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", original),
    };
    let ending = match body.find('\n') {
        Some(i) if i > 0 && body.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    let lf = LfText::new(body);
    let label = |i: usize| {
        if edits.len() > 1 {
            format!("edits[{i}].oldText")
        } else {
            "oldText".to_string()
        }
    };

    let mut indent_cache = None;
    let mut located = Vec::with_capacity(edits.len());
    let mut indentation = Vec::new();
    for (i, edit) in edits.iter().enumerate() {
        let old = edit.old_text.replace("\r\n", "\n");
        let new_text = edit.new_text.replace("\r\n", "\n");
        if old.is_empty() {
            return Err(ToolError::new(format!(
                "{} is empty. Give the exact text to replace, with enough surrounding lines to make it unique.",
                label(i)
            )));
        }
        let split = match locate(&lf.text, &old) {
            Ok(at) => {
                located.push((i, at, new_text));
                continue;
            }
            Err(LocateError::Ambiguous(count)) => {
                return Err(ToolError::new(format!(
                    "{} matches {count} places in {shown}; it must match exactly one. Add surrounding lines to make it unique.",
                    label(i)
                )));
            }
            Err(LocateError::NotFound) => None,
            Err(LocateError::SplitsCharacter(split)) => Some(split),
        };
        let index = indent_cache.get_or_insert_with(|| IndentIndex::new(&lf.text));
        let fit = match (locate_indented(index, &old), split) {
            (IndentMatch::Fit(fit), _) => fit,
            (IndentMatch::Ambiguous(lines), _) => {
                return Err(ToolError::new(ambiguous_indented(&label(i), &lines, shown)));
            }
            (_, Some(split)) => {
                return Err(ToolError::new(splits_character(&label(i), &split, shown)));
            }
            (IndentMatch::Inconsistent(windows, one_line), None) => {
                let near = Some((windows[0], one_line));
                return Err(ToolError::new(not_found(
                    &label(i),
                    &lf.text,
                    &old,
                    shown,
                    near,
                )));
            }
            (IndentMatch::NotFound, None) => {
                return Err(ToolError::new(not_found(
                    &label(i),
                    &lf.text,
                    &old,
                    shown,
                    None,
                )));
            }
        };
        let new_text = fit.transform.apply_to_text(&new_text).map_err(|line| {
            ToolError::new(too_shallow(&new_label(edits.len(), i), line, &fit, shown))
        })?;
        if !fit.is_identity() {
            indentation.push(fit.adjustment(i, default_width(index)));
        }
        let at = Located {
            start: fit.start,
            end: fit.end,
            fuzzy: true,
        };
        located.push((i, at, new_text));
    }
    located.sort_by_key(|(_, at, _)| at.start);
    for pair in located.windows(2) {
        let ((a, first, _), (b, second, _)) = (&pair[0], &pair[1]);
        let (a, b) = (*a, *b);
        if second.start < first.end {
            let (a, b) = (a.min(b), a.max(b));
            return Err(ToolError::new(format!(
                "edits[{a}] and edits[{b}] overlap in {shown}. Merge them into one edit, or make them cover separate parts of the file."
            )));
        }
    }

    // Splice into the original bytes; the diff needs only the changed lines and a few
    // around them, so only that window of the new LF text is built.
    let mut content = String::with_capacity(original.len() + 64);
    content.push_str(bom);
    let mut orig_pos = 0;
    for (_, at, new_text) in &located {
        let (orig_start, orig_end) = (lf.original_offset(at.start), lf.original_offset(at.end));
        content.push_str(&body[orig_pos..orig_start]);
        if ending == "\n" {
            content.push_str(new_text);
        } else {
            content.push_str(&new_text.replace('\n', ending));
        }
        orig_pos = orig_end;
    }
    content.push_str(&body[orig_pos..]);

    if content == original {
        return Err(ToolError::new(format!(
            "No changes made to {shown}: the replacements produce the same content. Make newText differ from oldText."
        )));
    }
    Ok(Edited {
        content,
        diff: diff_of(&lf.text, &located, shown),
        fuzzy: located.iter().any(|(_, at, _)| at.fuzzy),
        indentation,
    })
}

/// Lines kept around the edited region for the diff: more than the diff's own context, so
/// the diff of the window is the diff of the whole file.
const DIFF_MARGIN_LINES: usize = 8;

/// The diff of `text` (LF-only) with the located replacements (sorted, not overlapping),
/// built from a window of whole lines around them.
fn diff_of(text: &str, located: &[(usize, Located, String)], shown: &str) -> EditDiff {
    let (Some(first), Some(last)) = (located.first(), located.last()) else {
        return diff(text, text, shown);
    };
    let bytes = text.as_bytes();
    // The start of the first change's line, then DIFF_MARGIN_LINES lines back.
    let line_start = |at: usize| memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
    let mut from = line_start(first.1.start);
    for _ in 0..DIFF_MARGIN_LINES {
        if from == 0 {
            break;
        }
        from = line_start(from - 1);
    }
    // Forward DIFF_MARGIN_LINES line ends from the last change.
    let mut to = last.1.end;
    for _ in 0..=DIFF_MARGIN_LINES {
        match memchr::memchr(b'\n', &bytes[to..]) {
            Some(nl) => to += nl + 1,
            None => {
                to = bytes.len();
                break;
            }
        }
    }
    let mut new_window = String::with_capacity(to - from + 64);
    let mut pos = from;
    for (_, at, new_text) in located {
        new_window.push_str(&text[pos..at.start]);
        new_window.push_str(new_text);
        pos = at.end;
    }
    new_window.push_str(&text[pos..to]);
    let lines_before = memchr::memchr_iter(b'\n', &bytes[..from]).count();
    let lines_after = text[to..].split_inclusive('\n').count();
    diff::diff_window(
        &text[from..to],
        &new_window,
        shown,
        diff::Window {
            lines_before,
            lines_after,
        },
    )
}

fn new_label(count: usize, i: usize) -> String {
    if count > 1 {
        format!("edits[{i}].newText")
    } else {
        "newText".to_string()
    }
}

/// Not found at all: the rule, a note on windows whose indentation was almost right, and
/// the most similar part of the file.
fn not_found(
    label: &str,
    text: &str,
    old: &str,
    shown: &str,
    inconsistent: Option<((usize, usize), bool)>,
) -> String {
    let mut message = format!(
        "Could not find {label} in {shown}. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it."
    );
    if let Some(((first, last), one_line)) = inconsistent {
        let lines = if first == last {
            format!("Line {first} of the file has")
        } else {
            format!("Lines {first}-{last} of the file have")
        };
        let why = if one_line {
            "is not the same whitespace with some added or removed (tabs and spaces are converted only in blocks of several lines)"
        } else {
            "differs from line to line in a way no single shift or tabs-for-spaces conversion explains"
        };
        message.push_str(&format!(
            " {lines} the same text, but the indentation {why}; copy the indentation from the file."
        ));
    }
    if let Some(region) = closest_region(text, old) {
        message.push_str("\n\nThe most similar part of the file:\n");
        message.push_str(&region);
    }
    message
}

fn ambiguous_indented(label: &str, lines: &[usize], shown: &str) -> String {
    let named = lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{label} does not match {shown} exactly, and once its indentation is set aside it matches several places (starting at lines {named}); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique."
    )
}

fn too_shallow(new_label: &str, line: usize, fit: &IndentFit, shown: &str) -> String {
    format!(
        "{new_label} could not be re-indented for {shown}: {}, but line {line} of {new_label} is indented too little to be adjusted the same way. Indent newText the way oldText is indented, or copy the indentation from the file exactly.",
        fit.mistake()
    )
}

fn splits_character(label: &str, split: &SplitCharacter, shown: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn r(old: &str, new: &str) -> Replacement {
        Replacement {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    /// The diff of the window around the edits is the diff of the whole file, wherever the
    /// edits are: at either end, far apart, across line ends, with or without a final
    /// newline.
    #[test]
    fn the_windowed_diff_is_the_whole_files_diff() {
        for ending in ["\n", ""] {
            let file: String = (1..=60)
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
                .join("\n")
                + ending;
            let at = |needle: &str| file.find(needle).unwrap();
            let cases: Vec<Vec<(usize, usize, &str)>> = vec![
                vec![(0, 1, "L")],
                vec![(at("line 30"), at("line 30") + 7, "changed")],
                vec![(at("line 2\n"), at("line 2\n") + 7, "")],
                vec![(at("line 60"), file.len(), "the end\nand more")],
                vec![(0, 6, "x"), (at("line 59"), at("line 59") + 4, "y")],
                vec![(at("line 10"), at("line 13"), "a\nb\nc\nd\n")],
                vec![(at("line 5\n") + 6, at("line 5\n") + 7, "")],
            ];
            for edits in cases {
                let located: Vec<(usize, Located, String)> = edits
                    .iter()
                    .enumerate()
                    .map(|(i, &(start, end, new))| {
                        let at = Located {
                            start,
                            end,
                            fuzzy: false,
                        };
                        (i, at, new.to_owned())
                    })
                    .collect();
                let mut whole = String::new();
                let mut pos = 0;
                for (_, at, new) in &located {
                    whole.push_str(&file[pos..at.start]);
                    whole.push_str(new);
                    pos = at.end;
                }
                whole.push_str(&file[pos..]);
                assert_eq!(
                    diff_of(&file, &located, "f"),
                    diff(&file, &whole, "f"),
                    "{edits:?} with ending {ending:?}"
                );
            }
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
