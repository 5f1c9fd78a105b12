//! The indentation mistakes edit forgives: every line shifted by the same whitespace, or
//! tabs and spaces converted at one width (and shifted). Finding the one transformation that
//! maps `oldText`'s indentation onto a window of the file, and applying it to `newText`.

use super::lines::IndentIndex;
use super::tab_width::WIDTHS;

/// How `oldText`'s indentation maps onto the file's. Applied to `newText` before it is
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Transform {
    /// The file has this whitespace in front of every line beyond `oldText`.
    Deepen(String),
    /// `oldText` has this whitespace in front of every line beyond the file.
    Undeepen(String),
    /// Indentation converted between tabs and spaces at `width`, then shifted by `shift`
    /// columns (file minus `oldText`).
    Restyle {
        width: usize,
        shift: i64,
        to_tabs: bool,
    },
}

impl Transform {
    /// The file's indentation for a line that `oldText` (or `newText`) indents with `indent`;
    /// `None` when the line is too shallow for the transformation.
    fn apply(&self, indent: &str) -> Option<String> {
        match self {
            Transform::Deepen(extra) => Some(format!("{extra}{indent}")),
            Transform::Undeepen(extra) => indent.strip_prefix(extra.as_str()).map(str::to_string),
            Transform::Restyle {
                width,
                shift,
                to_tabs,
            } => {
                let columns = i64::try_from(columns(indent, *width)).ok()? + shift;
                let columns = usize::try_from(columns).ok()?;
                Some(render(columns, *width, *to_tabs))
            }
        }
    }

    /// `new` (LF-only) with every line re-indented; empty lines stay empty, and a line of
    /// only spaces and tabs is re-indented when it can be and kept as it is otherwise. The
    /// error is the 1-based number of a line of `new` that is too shallow.
    pub fn apply_to_text(&self, new: &str) -> Result<String, usize> {
        let mut out = String::with_capacity(new.len() + 64);
        for (i, line) in new.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let body = line.trim_start_matches([' ', '\t']);
            let indent = &line[..line.len() - body.len()];
            if line.is_empty() {
                continue;
            }
            match self.apply(indent) {
                Some(indent) => {
                    out.push_str(&indent);
                    out.push_str(body);
                }
                None if line.trim().is_empty() => out.push_str(line),
                None => return Err(i + 1),
            }
        }
        Ok(out)
    }

    pub(super) fn is_identity(&self) -> bool {
        matches!(self, Transform::Deepen(s) | Transform::Undeepen(s) if s.is_empty())
    }
}

/// Width in columns of an indentation, a tab reaching the next multiple of `width`.
pub(super) fn columns(indent: &str, width: usize) -> usize {
    indent.chars().fold(0, |col, c| match c {
        '\t' => (col / width + 1) * width,
        _ => col + 1,
    })
}

/// An indentation of `columns` columns in the file's style.
fn render(columns: usize, width: usize, tabs: bool) -> String {
    if tabs {
        let mut s = "\t".repeat(columns / width);
        s.push_str(&" ".repeat(columns % width));
        s
    } else {
        " ".repeat(columns)
    }
}

/// The tab width an adjustment's columns are counted in for a plain shift: the one the file
/// settles, else its step when it has one, else 4.
pub(crate) fn default_width(index: &IndentIndex<'_>) -> usize {
    index.tab_width.or(index.step).unwrap_or(WIDTHS[0])
}

/// What [`transform_for`] found for one window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fitting {
    /// The one transformation.
    Fit(Transform),
    /// A line or block converted between tabs and spaces (a block perhaps shifted too),
    /// which fits at several tab widths that the file does not choose between: the first,
    /// and the others (newText is refused unless they re-indent it alike).
    Alternatives(Transform, Vec<Transform>),
    /// No transformation; `other_depth` when the window is a single line that a shift or a
    /// conversion would have mapped, but to another depth.
    Unfit { other_depth: bool },
}

/// The one transformation mapping every `(old, file)` indentation pair, preferring a plain
/// shift. A block of several lines is converted between tabs and spaces at the width its
/// levels fit. A single line shows no levels, and the same line at another depth is most
/// likely another place (or a change already made): it is only converted between tabs and
/// spaces at its own depth, at the tab width the file settles (a file in spaces: its step).
pub(super) fn transform_for(
    pairs: &[(&str, &str)],
    one_line: bool,
    index: &IndentIndex<'_>,
) -> Fitting {
    let Some(&(old0, file0)) = pairs.first() else {
        return Fitting::Unfit { other_depth: false };
    };
    let shift = if let Some(extra) = file0.strip_suffix(old0) {
        Some(Transform::Deepen(extra.to_string()))
    } else {
        old0.strip_suffix(file0)
            .map(|extra| Transform::Undeepen(extra.to_string()))
    };
    let fits = |t: &Transform| {
        pairs
            .iter()
            .all(|&(old, file)| t.apply(old).as_deref() == Some(file))
    };
    let to_tabs = if pairs.iter().any(|(_, file)| file.contains('\t')) {
        true
    } else if pairs.iter().any(|(_, file)| !file.is_empty()) {
        false
    } else {
        index.tabs
    };
    let restyle = |width: usize| {
        let shift = columns(file0, width) as i64 - columns(old0, width) as i64;
        Transform::Restyle {
            width,
            shift,
            to_tabs,
        }
    };
    if one_line {
        if old0 == file0 {
            return Fitting::Fit(Transform::Deepen(String::new()));
        }
        let settled = index.tab_width.or(if to_tabs { None } else { index.step });
        let level = |width: usize| {
            Some(restyle(width))
                .filter(|t| matches!(t, Transform::Restyle { shift: 0, .. }) && fits(t))
        };
        // Unsettled, the line is taken at every width that keeps it at its depth: one
        // width is the only reading; several must write newText alike.
        let found = match settled {
            Some(width) => level(width).map(Fitting::Fit),
            None => readings(WIDTHS.iter().filter_map(|&w| level(w))),
        };
        return found.unwrap_or_else(|| Fitting::Unfit {
            other_depth: shift.is_some()
                || settled
                    .into_iter()
                    .chain(WIDTHS)
                    .any(|width| fits(&restyle(width))),
        });
    }
    if let Some(shift) = shift.filter(|t| fits(t)) {
        return Fitting::Fit(shift);
    }
    let mut widths: Vec<usize> = Vec::with_capacity(5);
    for width in index.tab_width.into_iter().chain(index.step).chain(WIDTHS) {
        if !widths.contains(&width) {
            widths.push(width);
        }
    }
    // A conversion alone explains more than a conversion and a shift: only when no width
    // converts without shifting is a shift assumed (a flat block of 2-space lines in a tab
    // file is a tab per 2 spaces, not a tab per 4 spaces shifted by 2).
    let plain = |width: usize| {
        Some(restyle(width)).filter(|t| matches!(t, Transform::Restyle { shift: 0, .. }) && fits(t))
    };
    let settled = index.tab_width.or(if to_tabs { None } else { index.step });
    let found = match settled.and_then(plain) {
        Some(at_settled) => Some(Fitting::Fit(at_settled)),
        None => readings(widths.iter().filter_map(|&w| plain(w))),
    };
    if let Some(found) = found {
        return found;
    }
    // Converted and shifted: a flat block fits at every width, each shifting it its own
    // way. Unless the file settles the width, the others are kept, and newText is refused
    // if they would indent it differently.
    let mut shifted = widths
        .iter()
        .map(|&width| restyle(width))
        .filter(|t| fits(t));
    let Some(first) = shifted.next() else {
        return Fitting::Unfit { other_depth: false };
    };
    let others: Vec<Transform> = shifted.collect();
    match (&first, settled) {
        (Transform::Restyle { width, .. }, Some(settled)) if *width == settled => {
            Fitting::Fit(first)
        }
        _ if others.is_empty() => Fitting::Fit(first),
        _ => Fitting::Alternatives(first, others),
    }
}

/// The transformations at the tab widths a file leaves open, as one answer: the only one,
/// or the first with the others (which must then write newText alike); `None` when none
/// fits.
fn readings(mut fitting: impl Iterator<Item = Transform>) -> Option<Fitting> {
    let first = fitting.next()?;
    let others: Vec<Transform> = fitting.collect();
    Some(if others.is_empty() {
        Fitting::Fit(first)
    } else {
        Fitting::Alternatives(first, others)
    })
}

/// [`transform_for`] for one `oldText` against many windows, remembering the answer for the
/// last indentations seen: in a file whose windows repeat (the same lines again and again)
/// each window then costs a comparison.
pub(super) struct TransformCache<'o, 'f> {
    old: Vec<&'o str>,
    one_line: bool,
    pairs: Vec<(&'o str, &'f str)>,
    last: Option<(Vec<&'f str>, Fitting)>,
}

impl<'o, 'f> TransformCache<'o, 'f> {
    /// For `oldText` lines with these indentations (its lines with text, in order).
    pub fn new(old: Vec<&'o str>) -> Self {
        let one_line = old.len() == 1;
        TransformCache {
            pairs: Vec::with_capacity(old.len()),
            old,
            one_line,
            last: None,
        }
    }

    /// The transformation for a window whose lines with text have these indentations.
    pub fn get(
        &mut self,
        file: impl Iterator<Item = &'f str> + Clone,
        index: &IndentIndex<'_>,
    ) -> Fitting {
        if let Some((indents, answer)) = &self.last
            && indents.iter().copied().eq(file.clone())
        {
            return answer.clone();
        }
        self.pairs.clear();
        self.pairs
            .extend(self.old.iter().copied().zip(file.clone()));
        let answer = transform_for(&self.pairs, self.one_line, index);
        self.last = Some((file.collect(), answer.clone()));
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_rendering() {
        assert_eq!(columns("\t  ", 4), 6);
        assert_eq!(columns("  \t", 4), 4);
        assert_eq!(render(6, 4, true), "\t  ");
        assert_eq!(render(6, 4, false), "      ");
    }

    #[test]
    fn a_too_shallow_new_line_is_reported() {
        let t = Transform::Undeepen("    ".into());
        assert_eq!(t.apply_to_text("    a\n  b"), Err(2));
        assert_eq!(t.apply_to_text("    a\n\n      b"), Ok("a\n\n  b".into()));
    }

    #[test]
    fn one_line_converts_at_its_own_depth_and_a_settled_width() {
        let spaces = IndentIndex::new("a\n   b\n      c\n");
        assert_eq!(
            transform_for(&[("\t", "   ")], true, &spaces),
            Fitting::Fit(Transform::Restyle {
                width: 3,
                shift: 0,
                to_tabs: false
            })
        );
        // Two tabs are not three spaces deep at a tab of 3.
        assert_eq!(
            transform_for(&[("\t\t", "   ")], true, &spaces),
            Fitting::Unfit { other_depth: true }
        );
        // Nothing settles a tab file's width: four spaces are two tabs only at 2.
        let tabs = IndentIndex::new("a\n\tb\n\t\tc\n");
        assert_eq!(
            transform_for(&[("    ", "\t\t")], true, &tabs),
            Fitting::Fit(Transform::Restyle {
                width: 2,
                shift: 0,
                to_tabs: true
            })
        );
        // Two spaces and a tab are one tab at 4 and at 8: both readings are kept.
        let restyle = |width| Transform::Restyle {
            width,
            shift: 0,
            to_tabs: true,
        };
        assert_eq!(
            transform_for(&[("  \t", "\t")], true, &tabs),
            Fitting::Alternatives(restyle(4), vec![restyle(8)])
        );
        let tabs = IndentIndex::new("a\n\tb\n\t\tc\n// vim: ts=2\n");
        assert_eq!(
            transform_for(&[("    ", "\t\t")], true, &tabs),
            Fitting::Fit(Transform::Restyle {
                width: 2,
                shift: 0,
                to_tabs: true
            })
        );
        // A shift of one line is another depth.
        assert_eq!(
            transform_for(&[("  ", "    ")], true, &spaces),
            Fitting::Unfit { other_depth: true }
        );
        // An indentation no conversion renders (a space before a tab) is not guessed at.
        assert_eq!(
            transform_for(&[("  ", " \t")], true, &tabs),
            Fitting::Unfit { other_depth: false }
        );
    }
}
