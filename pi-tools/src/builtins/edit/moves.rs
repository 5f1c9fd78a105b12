//! Moves against stale resends. The stale-resend guard (`stale.rs`) refuses a forgiving
//! match whose newText's lines are already in the file. An edit that *moves* lines looks
//! the same: newText brings lines that are still at their old place. The difference is the
//! edit of the same call that takes them away from there: in a move its oldText still
//! matches exactly once, over those lines, and its newText does not keep them; in a resend
//! the lines were taken away already, and that oldText no longer matches.

use super::Replacement;
use super::indent::LineRange;
use super::matching::{Located, locate};
use super::stale::sent_text_present;

/// Whether the lines `found` (1-based, of the LF `text`) that edit `i` would write again,
/// outside its own `window`, are all taken away by other edits of the call: each is inside
/// the one place another edit's oldText matches, and that edit's newText does not write them
/// again.
pub(crate) fn moved_away(
    text: &str,
    edits: &[Replacement],
    i: usize,
    window: LineRange,
    found: LineRange,
) -> bool {
    let outside: Vec<usize> = (found.first..=found.last)
        .filter(|line| !(window.first..=window.last).contains(line))
        .collect();
    if outside.is_empty() {
        return false;
    }
    let moved: Vec<LineRange> = edits
        .iter()
        .enumerate()
        .filter(|&(j, edit)| j != i && !edit.old_text.is_empty())
        .filter_map(|(_, edit)| {
            let old = edit.old_text.replace("\r\n", "\n");
            let at = locate(text, &old).ok()?;
            let lines = lines_of(text, &at);
            let taken: String = text
                .split('\n')
                .skip(found.first - 1)
                .take(found.last + 1 - found.first)
                .collect::<Vec<_>>()
                .join("\n");
            let new = edit.new_text.replace("\r\n", "\n");
            sent_text_present(&new, "", &taken)
                .is_none()
                .then_some(lines)
        })
        .collect();
    outside
        .iter()
        .all(|line| moved.iter().any(|r| (r.first..=r.last).contains(line)))
}

/// The lines (1-based) a located region covers.
fn lines_of(text: &str, at: &Located) -> LineRange {
    let bytes = text.as_bytes();
    let first = memchr::memchr_iter(b'\n', &bytes[..at.start]).count() + 1;
    let last_byte = at.end.saturating_sub(1).max(at.start);
    let last = first + memchr::memchr_iter(b'\n', &bytes[at.start..last_byte]).count();
    LineRange { first, last }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_taken_away_by_another_edit_are_a_move() {
        let text = "intro\n| a |\n| 1 |\nend\n";
        let found = LineRange { first: 2, last: 3 };
        let window = LineRange { first: 1, last: 1 };
        let take = Replacement::new("| a |\n| 1 |\nend", "intro\nend");
        assert!(moved_away(
            text,
            &[Replacement::new("x", "y"), take],
            0,
            window,
            found
        ));
        // The other edit keeps them, or no longer matches: not a move.
        let keep = Replacement::new("| a |\n| 1 |\nend", "| a |\n| 1 |\nintro\nend");
        assert!(!moved_away(
            text,
            &[Replacement::new("x", "y"), keep],
            0,
            window,
            found
        ));
        let gone = Replacement::new("| 1 |\n| a |", "");
        assert!(!moved_away(
            text,
            &[Replacement::new("x", "y"), gone],
            0,
            window,
            found
        ));
    }
}
