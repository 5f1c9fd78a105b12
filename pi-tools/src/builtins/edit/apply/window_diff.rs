//! The diff of one call's change, built from a window of whole lines around the edited
//! regions rather than from the whole file, so a large file costs its edited part.

use super::Placed;
use crate::builtins::edit::diff::{self, EditDiff, diff};

/// Lines kept around the edited region for the diff: more than the diff's own context, so
/// the diff of the window is the diff of the whole file.
const DIFF_MARGIN_LINES: usize = 8;

/// The diff of `text` (LF-only) with the located replacements (sorted, not overlapping),
/// built from a window of whole lines around them.
pub(super) fn diff_of(text: &str, located: &[Placed], shown: &str) -> EditDiff {
    let (Some(first), Some(last)) = (located.first(), located.last()) else {
        return diff(text, text, shown);
    };
    let bytes = text.as_bytes();
    // The start of the first change's line, then DIFF_MARGIN_LINES lines back.
    let line_start = |at: usize| memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
    let mut from = line_start(first.at.start);
    for _ in 0..DIFF_MARGIN_LINES {
        if from == 0 {
            break;
        }
        from = line_start(from - 1);
    }
    // Forward DIFF_MARGIN_LINES line ends from the last change.
    let mut to = last.at.end;
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
    for p in located {
        new_window.push_str(&text[pos..p.at.start]);
        new_window.push_str(&p.new_text);
        pos = p.at.end;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::edit::apply::Stage;
    use crate::builtins::edit::matching::Located;

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
                let located: Vec<Placed> = edits
                    .iter()
                    .enumerate()
                    .map(|(i, &(start, end, new))| Placed {
                        edit: i,
                        at: Located {
                            start,
                            end,
                            fuzzy: false,
                        },
                        new_text: new.to_owned(),
                        stage: Stage::Exact,
                    })
                    .collect();
                let mut whole = String::new();
                let mut pos = 0;
                for p in &located {
                    whole.push_str(&file[pos..p.at.start]);
                    whole.push_str(&p.new_text);
                    pos = p.at.end;
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
}
