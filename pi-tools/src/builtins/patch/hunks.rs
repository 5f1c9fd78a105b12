//! One file's V4A hunks applied in memory by edit's engine: each hunk is one replacement
//! (its context and `-` lines the text to find, its context and `+` lines the text to put
//! there), so the context lines are the anchor, matched as edit matches `oldText` (exactly
//! once, or through edit's forgiving stages, never overlapping another hunk), and the file's
//! line endings, byte-order mark and other bytes stay as they were. A hunk whose lines are
//! found more than once is placed by its `@@` line when that line is found exactly once:
//! the replacement then reaches up to it. A refusal names the hunk and says what to resend.

use crate::builtins::edit::{Edited, FileHints, Replacement, apply_edits_with};

use crate::dialect::v4a::Hunk;

/// Why a file's hunks cannot be applied: which hunk, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkRefusal {
    /// The 1-based number of the hunk in its file's section, when one hunk is to blame.
    pub hunk: Option<usize>,
    /// The line of the patch where that hunk starts.
    pub line: Option<usize>,
    /// Why, as edit says it.
    pub reason: String,
}

/// Applies `hunks` to `text` (the file shown as `shown`), all or none.
pub fn apply_hunks(
    text: &str,
    hunks: &[Hunk],
    shown: &str,
    hints: FileHints,
) -> Result<Edited, HunkRefusal> {
    let mut edits = Vec::with_capacity(hunks.len());
    for (i, hunk) in hunks.iter().enumerate() {
        edits.push(replacement(text, hunk).map_err(|reason| HunkRefusal {
            hunk: Some(i + 1),
            line: Some(hunk.line),
            reason,
        })?);
    }
    match apply_edits_with(text, &edits, shown, hints) {
        Ok(edited) => Ok(edited),
        Err(all) => {
            // Which hunk is to blame: the first that fails alone; when each applies alone,
            // they fail together (they overlap), and edit's message says how.
            for (i, edit) in edits.iter().enumerate() {
                if let Err(alone) = apply_edits_with(text, std::slice::from_ref(edit), shown, hints)
                {
                    return Err(HunkRefusal {
                        hunk: Some(i + 1),
                        line: Some(hunks[i].line),
                        reason: in_hunk_words(alone.message()),
                    });
                }
            }
            Err(HunkRefusal {
                hunk: None,
                line: None,
                reason: in_hunk_words(all.message()),
            })
        }
    }
}

/// edit's refusal in the words of a patch: its `oldText` is the hunk's context and `-`
/// lines, its `newText` the context and `+` lines, its `edits[i]` the hunk i+1.
fn in_hunk_words(message: &str) -> String {
    let mut out = message
        .replace("oldText", "the hunk's context and - lines")
        .replace("newText", "the hunk's context and + lines");
    while let Some(at) = out.find("edits[") {
        let rest = &out[at + 6..];
        let Some(end) = rest.find(']') else { break };
        let Ok(index) = rest[..end].parse::<usize>() else {
            break;
        };
        out = format!("{}hunk {}{}", &out[..at], index + 1, &rest[end + 1..]);
    }
    out
}

/// The replacement one hunk stands for.
fn replacement(text: &str, hunk: &Hunk) -> Result<Replacement, String> {
    if hunk.old.is_empty() {
        // Only `+` lines: they go after the `@@` line, or at the end of the file.
        return match (&hunk.anchor, hunk.end_of_file) {
            (Some(anchor), _) => Ok(Replacement::new(
                anchor.clone(),
                format!("{anchor}\n{}", hunk.new),
            )),
            (None, true) if text.is_empty() => Err(
                "the file is empty and the hunk has no line to find; use `*** Add File:` to give an empty file its content".to_owned(),
            ),
            (None, _) => Err(
                "the hunk has only `+` lines and no `@@` line to put them after; give it a context line (a line of the file, prefixed with a space) next to where the lines go"
                    .to_owned(),
            ),
        };
    }
    if hunk.new_lines == 0 {
        // Only removed lines: they go with their line ending (the one before them for the
        // last line of a file that ends without one).
        let with_end = format!("{}\n", hunk.old);
        return Ok(if text.replace("\r\n", "\n").contains(&with_end) {
            Replacement::new(with_end, "")
        } else {
            Replacement::new(format!("\n{}", hunk.old), "")
        });
    }
    let plain = Replacement::new(hunk.old.clone(), hunk.new.clone());
    let Some(anchor) = hunk.anchor.as_deref() else {
        return Ok(plain);
    };
    if text.matches(hunk.old.as_str()).nth(1).is_none() {
        return Ok(plain);
    }
    // Found more than once: the first time after the `@@` line, when that line is there once.
    let mut starts = line_starts(text, anchor);
    let (Some(start), None) = (starts.next(), starts.next()) else {
        return Ok(plain);
    };
    let Some(found) = text[start..].find(hunk.old.as_str()).map(|at| start + at) else {
        return Ok(plain);
    };
    let between = &text[start..found];
    Ok(Replacement::new(
        format!("{between}{}", hunk.old),
        format!("{between}{}", hunk.new),
    ))
}

/// Where the lines whose text (without line ending and trailing blanks) is `anchor` start.
fn line_starts<'t>(text: &'t str, anchor: &'t str) -> impl Iterator<Item = usize> + 't {
    let anchor = anchor.trim_end();
    let mut at = 0;
    text.split_inclusive('\n').filter_map(move |line| {
        let start = at;
        at += line.len();
        (line.trim_end() == anchor).then_some(start)
    })
}
