//! `replaceAll`: an edit that replaces every occurrence of its oldText, for renames. Only
//! exact occurrences count (the forgiving stages guess at one place, and a guess repeated
//! over a file is a guess too many), and they must not overlap, since replacing one would
//! change another.

use super::matching::Located;

/// How many occurrences a `replaceAll` edit replaced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplacedAll {
    /// Index of the edit in `edits`.
    pub edit: usize,
    /// How many occurrences of its oldText were replaced.
    pub count: usize,
}

/// Why the occurrences of an oldText cannot all be replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AllError {
    /// No exact occurrence.
    NotFound,
    /// Two occurrences overlap: the 1-based lines they start on.
    Overlap(usize, usize),
}

/// Every exact occurrence of `old` (LF-only, non-empty) in `text`, in order, none
/// overlapping another.
pub(crate) fn locate_all(text: &str, old: &str) -> Result<Vec<Located>, AllError> {
    let step = old.chars().next().map_or(1, char::len_utf8);
    let mut found: Vec<Located> = Vec::new();
    let mut from = 0;
    // Every occurrence is looked for, overlapping ones included, so that an overlap is seen.
    while let Some(i) = text[from..].find(old) {
        let start = from + i;
        if let Some(last) = found.last()
            && start < last.end
        {
            return Err(AllError::Overlap(
                line_of(text, last.start),
                line_of(text, start),
            ));
        }
        found.push(Located {
            start,
            end: start + old.len(),
            fuzzy: false,
        });
        from = start + step;
    }
    if found.is_empty() {
        return Err(AllError::NotFound);
    }
    Ok(found)
}

fn line_of(text: &str, at: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exact_occurrence_and_overlaps() {
        let spans = |text: &str, old: &str| {
            locate_all(text, old)
                .map(|all| all.iter().map(|l| (l.start, l.end)).collect::<Vec<_>>())
        };
        assert_eq!(
            spans("a.b a.b\na.b", "a.b"),
            Ok(vec![(0, 3), (4, 7), (8, 11)])
        );
        assert_eq!(spans("abc", "x"), Err(AllError::NotFound));
        assert_eq!(spans("x\naaa\n", "aa"), Err(AllError::Overlap(2, 2)));
        assert_eq!(spans("é é", "é"), Ok(vec![(0, 2), (3, 5)]));
    }
}
