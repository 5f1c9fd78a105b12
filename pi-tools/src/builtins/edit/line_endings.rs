//! The line endings a replacement is written with. Matching works on LF text; writing puts
//! the endings back. In a file with one kind of ending every new line gets it. In a file
//! that mixes CRLF and LF lines, each written line gets the ending of the line it replaces,
//! or, where lines are added, of the lines around them; taking the file's first ending
//! instead wrote CRLF among LF lines (and the reverse) inside edited regions. When the
//! replaced lines themselves mix endings and the new lines do not line up with them one for
//! one, no ending is right, and the edit is refused. Bytes outside the replaced lines never
//! change.

use std::borrow::Cow;
use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::matching::LfText;

const CRLF: &str = "\r\n";
const LF: &str = "\n";

/// A replacement ready to be written: the LF range of the file it replaces (which may reach
/// past the matched region to the end of its last line, so that line's ending is chosen
/// too) and the text that goes there, with its endings.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Written<'a> {
    pub range: Range<usize>,
    pub text: Cow<'a, str>,
}

/// The replaced lines end with both CRLF and LF, and the new lines cannot be placed against
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MixedEndings;

/// `new_text` (LF-only) for the region `start..end` of `lf`'s text, with line endings.
/// `limit` is where the next replacement starts (the region is only ever widened up to it).
pub(crate) fn with_endings<'a>(
    lf: &LfText<'_>,
    start: usize,
    end: usize,
    new_text: &'a str,
    limit: usize,
) -> Result<Written<'a>, MixedEndings> {
    let unchanged = |text: Cow<'a, str>| Written {
        range: start..end,
        text,
    };
    // Nothing to choose: no line is written, none is replaced, or LF is the only ending.
    let text: &str = &lf.text;
    let no_line = !new_text.contains('\n') && !text[start..end].contains('\n');
    if no_line || !lf.has_crlf() {
        return Ok(unchanged(Cow::Borrowed(new_text)));
    }
    if lf.all_crlf() {
        return Ok(unchanged(Cow::Owned(new_text.replace('\n', CRLF))));
    }
    let bytes = text.as_bytes();
    let next_newline = |from: usize| memchr::memchr(b'\n', &bytes[from..]).map(|i| from + i);
    let ending = |newline: usize| if lf.is_crlf(newline) { CRLF } else { LF };
    // The last replaced line's ending comes after the region, when the region does not end
    // a line: the region is widened to it, so that it is chosen with the others (a line
    // deleted after a kept one takes its ending away, not the kept line's).
    let (end, new_text): (usize, Cow<'a, str>) = match next_newline(end) {
        Some(nl) if !text[start..end].ends_with('\n') && nl < limit => (
            nl + 1,
            Cow::Owned(format!("{new_text}{}\n", &text[end..nl])),
        ),
        _ => (end, Cow::Borrowed(new_text)),
    };
    let old_lines: Vec<&str> = text[start..end].split('\n').collect();
    let p = old_lines.len() - 1;
    // The ending of each old line: its own newline's, and for the last one (the line after
    // the region, or the rest of the last replaced line) the next newline's, if any.
    let mut endings: Vec<Option<&'static str>> = memchr::memchr_iter(b'\n', &bytes[start..end])
        .map(|i| Some(ending(start + i)))
        .collect();
    endings.push(next_newline(end).map(ending));
    // The replaced lines: every line up to a newline of the region, and the last one too
    // when the region ends inside it.
    let replaced = if text[start..end].ends_with('\n') {
        &endings[..p]
    } else {
        &endings[..]
    };
    let known = || replaced.iter().copied().flatten();
    let chosen = if known().next().is_none() {
        // Only the last line of a file without a final newline: the line before it tells.
        text[..start].rfind('\n').map_or(LF, ending)
    } else if let Some(shared) = uniform(known()) {
        shared
    } else {
        let new_lines: Vec<&str> = new_text.split('\n').collect();
        let forward = place(&old_lines, &new_lines, &endings, false)?;
        let backward = place(&old_lines, &new_lines, &endings, true)?;
        if forward != backward {
            return Err(MixedEndings);
        }
        let mut out = String::with_capacity(new_text.len() + forward.len());
        for (line, ending) in new_lines.iter().zip(forward.iter().chain([&""])) {
            out.push_str(line);
            out.push_str(ending);
        }
        return Ok(Written {
            range: start..end,
            text: Cow::Owned(out),
        });
    };
    let text = if chosen == LF {
        new_text
    } else {
        Cow::Owned(new_text.replace('\n', CRLF))
    };
    Ok(Written {
        range: start..end,
        text,
    })
}

/// `Some(x)` when every item is `x` (and there is one), else `None`.
fn uniform<T: PartialEq>(mut items: impl Iterator<Item = T>) -> Option<T> {
    let first = items.next()?;
    items.all(|x| x == first).then_some(first)
}

/// The ending of every new line but the last (whose ending is the file's, after the
/// region): a kept line, or one replaced one for one, takes its old line's; lines that
/// replace a different number of lines take the ending those share; added lines take the
/// ending their neighbours share. `reversed`: lines paired from the back, which differs
/// from the front where lines repeat.
fn place(
    old: &[&str],
    new: &[&str],
    endings: &[Option<&'static str>],
    reversed: bool,
) -> Result<Vec<&'static str>, MixedEndings> {
    let hunks = hunks(old, new, reversed);
    let q = new.len() - 1;
    let mut out: Vec<Option<&'static str>> = vec![None; q];
    let mut set = |j: usize, ending: Option<&'static str>| {
        if j < q {
            out[j] = ending;
        }
    };
    for (equal, old_range, new_range) in hunks {
        if equal || old_range.len() == new_range.len() {
            for (i, j) in old_range.zip(new_range) {
                set(j, endings[i]);
            }
        } else if old_range.is_empty() {
            let at = old_range.start;
            let around = at.checked_sub(1).into_iter().chain([at]);
            let shared = uniform(around.filter_map(|i| endings.get(i).copied().flatten()));
            for j in new_range {
                set(j, shared);
            }
        } else {
            let shared = uniform(endings[old_range].iter().copied()).flatten();
            for j in new_range {
                set(j, shared);
            }
        }
    }
    out.into_iter().map(|e| e.ok_or(MixedEndings)).collect()
}

/// The line diff of `old` and `new` as runs of equal lines and runs of changed ones (a
/// deletion next to an insertion is one change), in the lines' own order.
fn hunks(old: &[&str], new: &[&str], reversed: bool) -> Vec<(bool, Range<usize>, Range<usize>)> {
    let flip = |r: Range<usize>, n: usize| (n - r.end)..(n - r.start);
    let ops = if reversed {
        let (old_rev, new_rev): (Vec<&str>, Vec<&str>) = (
            old.iter().rev().copied().collect(),
            new.iter().rev().copied().collect(),
        );
        capture_diff_slices(Algorithm::Myers, &old_rev, &new_rev)
            .iter()
            .rev()
            .map(|op| {
                let (tag, o, n) = op.as_tag_tuple();
                (tag, flip(o, old.len()), flip(n, new.len()))
            })
            .collect::<Vec<_>>()
    } else {
        capture_diff_slices(Algorithm::Myers, old, new)
            .iter()
            .map(|op| op.as_tag_tuple())
            .collect()
    };
    let mut hunks: Vec<(bool, Range<usize>, Range<usize>)> = Vec::with_capacity(ops.len());
    for (tag, o, n) in ops {
        let equal = tag == DiffTag::Equal;
        match hunks.last_mut() {
            Some((false, last_o, last_n)) if !equal => {
                last_o.end = o.end.max(last_o.end);
                last_n.end = n.end.max(last_n.end);
            }
            _ => hunks.push((equal, o, n)),
        }
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `file` with `old` replaced by `new` (LF-only), the way splice writes it.
    fn write(file: &str, old: &str, new: &str) -> Result<String, MixedEndings> {
        let lf = LfText::new(file);
        let start = lf.text.find(old).expect("old is in the file");
        let written = with_endings(&lf, start, start + old.len(), new, lf.text.len())?;
        let (s, e) = (
            lf.original_offset(written.range.start),
            lf.original_offset(written.range.end),
        );
        Ok(format!("{}{}{}", &file[..s], written.text, &file[e..]))
    }

    #[test]
    fn each_line_keeps_or_takes_the_ending_of_the_line_it_replaces() {
        let file = "a\r\nb\nc\r\nd\n";
        // One line: its own ending, whatever the first line's.
        assert_eq!(write(file, "b", "b\nx"), Ok("a\r\nb\nx\nc\r\nd\n".into()));
        assert_eq!(
            write(file, "c\n", "c\nx\n"),
            Ok("a\r\nb\nc\r\nx\r\nd\n".into())
        );
        // Kept lines keep theirs; a line replaced one for one takes its old line's.
        assert_eq!(write(file, "b\nc", "B\nC"), Ok("a\r\nB\nC\r\nd\n".into()));
        assert_eq!(write(file, "a\nb\nc", "a\nc"), Ok("a\r\nc\r\nd\n".into()));
        assert_eq!(write(file, "a\nb\nc", "a\nb"), Ok("a\r\nb\nd\n".into()));
        // Added lines between two lines of one ending take it.
        assert_eq!(
            write("a\r\nb\r\nc\nd\n", "a\nb", "a\nx\nb"),
            Ok("a\r\nx\r\nb\r\nc\nd\n".into())
        );
        // Between two endings, or for lines that replace a different number of mixed ones,
        // there is no right ending.
        assert_eq!(write(file, "b\nc", "b\nx\nc"), Err(MixedEndings));
        assert_eq!(write(file, "a\nb", "x\ny\nz"), Err(MixedEndings));
    }

    #[test]
    fn files_of_one_ending_and_lines_without_one() {
        assert_eq!(
            write("a\r\nb\r\n", "a", "x\ny"),
            Ok("x\r\ny\r\nb\r\n".into())
        );
        assert_eq!(write("a\nb\n", "a", "x\ny"), Ok("x\ny\nb\n".into()));
        // The last line has no ending: the one before it tells.
        assert_eq!(write("a\nb\r\nc", "c", "c\nd"), Ok("a\nb\r\nc\r\nd".into()));
        assert_eq!(
            write("a\r\nb\nc", "b\nc", "b\nc\nd"),
            Ok("a\r\nb\nc\nd".into())
        );
    }
}
