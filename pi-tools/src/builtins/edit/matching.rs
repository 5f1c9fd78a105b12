//! Locating an edit's `oldText` in a file: exactly, or else through a normalisation that
//! forgives what models typically get wrong (Unicode compatibility forms, trailing spaces,
//! curly quotes, dashes, odd spaces). The normalisation is only used to *find* the region;
//! the map back to the original text lets the edit replace exactly that region and nothing
//! else.

use std::borrow::Cow;
use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// A text with Windows line endings turned into `\n`, and the way back to the original
/// offsets.
pub(crate) struct LfText<'a> {
    /// The text with every `\r\n` turned into `\n`.
    pub text: Cow<'a, str>,
    /// Offsets in `text` of the `\n`s that had a `\r` before them, ascending.
    crlf_at: Vec<usize>,
}

impl<'a> LfText<'a> {
    pub fn new(original: &'a str) -> Self {
        if !original.contains("\r\n") {
            return LfText {
                text: Cow::Borrowed(original),
                crlf_at: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len());
        let mut crlf_at = Vec::new();
        let mut rest = original;
        while let Some(i) = rest.find("\r\n") {
            text.push_str(&rest[..i]);
            crlf_at.push(text.len());
            text.push('\n');
            rest = &rest[i + 2..];
        }
        text.push_str(rest);
        LfText {
            text: Cow::Owned(text),
            crlf_at,
        }
    }

    /// The original offset of an offset in `text` (a boundary before a `\n` that had a `\r`
    /// maps to before the `\r`).
    pub fn original_offset(&self, offset: usize) -> usize {
        offset + self.crlf_at.partition_point(|&p| p < offset)
    }
}

fn fuzzy_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// A text in fuzzy form, with each of its bytes mapped to the span of the original it came
/// from.
pub(crate) struct FuzzyText {
    pub text: String,
    /// For each byte of `text`: start and end of the original span that produced it.
    spans: Vec<(usize, usize)>,
}

impl FuzzyText {
    /// Normalises `source` (already LF-only): NFKC per base character with its combining
    /// marks, quotes, dashes and spaces unified, trailing whitespace of every line dropped.
    pub fn new(source: &str) -> Self {
        let mut text = String::with_capacity(source.len());
        let mut spans = Vec::with_capacity(source.len());
        let mut line_start = 0;
        for line in source.split_inclusive('\n') {
            let (body, newline) = match line.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (line, false),
            };
            let out_line_start = text.len();
            let mut chars = body.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                // A segment is a character and the combining marks after it, so NFKC can
                // compose them without crossing into the next segment.
                let mut end = i + c.len_utf8();
                while let Some(&(j, next)) = chars.peek() {
                    if canonical_combining_class(next) == 0 {
                        break;
                    }
                    end = j + next.len_utf8();
                    chars.next();
                }
                let segment = &body[i..end];
                let span = (line_start + i, line_start + end);
                if segment.len() == 1 && c.is_ascii() {
                    text.push(c);
                    spans.push(span);
                } else {
                    for n in segment.nfkc() {
                        let n = fuzzy_char(n);
                        text.push(n);
                        spans.extend(std::iter::repeat_n(span, n.len_utf8()));
                    }
                }
            }
            let kept = text[out_line_start..].trim_end().len();
            text.truncate(out_line_start + kept);
            spans.truncate(out_line_start + kept);
            if newline {
                let nl = line_start + body.len();
                text.push('\n');
                spans.push((nl, nl + 1));
            }
            line_start += line.len();
        }
        FuzzyText { text, spans }
    }

    /// The original span covering fuzzy bytes `start..end` (`end > start`).
    pub fn original_range(&self, start: usize, end: usize) -> (usize, usize) {
        (self.spans[start].0, self.spans[end - 1].1)
    }

    /// Whether fuzzy byte offset `at` lies between the expansions of two original
    /// characters, not inside the expansion of one (`ﬁ` expands to `fi`: no boundary between
    /// the `f` and the `i`).
    fn is_boundary(&self, at: usize) -> bool {
        at == 0 || at >= self.spans.len() || self.spans[at - 1] != self.spans[at]
    }
}

/// Where an edit's `oldText` is, in the LF-normalised text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Located {
    pub start: usize,
    pub end: usize,
    pub fuzzy: bool,
}

/// Why an `oldText` could not be located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LocateError {
    NotFound,
    Ambiguous(usize),
    /// The only fuzzy matches begin or end inside the compatibility expansion of one
    /// character; replacing the whole character would change bytes nobody asked to change.
    SplitsCharacter(SplitCharacter),
}

/// The character a fuzzy match would have cut in two.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitCharacter {
    /// The character (with its combining marks) as it is in the file.
    pub character: String,
    /// What it reads as after normalisation.
    pub reads_as: String,
    /// Its line, 1-based.
    pub line: usize,
    /// Whether the match would have begun (rather than ended) inside it.
    pub at_start: bool,
}

/// Finds `old` (LF-only) in `content`: an exact, unique match first; otherwise a unique
/// match of the fuzzy forms whose ends fall between original characters. `fuzzy` caches
/// the content's fuzzy form across edits.
pub(crate) fn locate(
    content: &str,
    fuzzy: &mut Option<FuzzyText>,
    old: &str,
) -> Result<Located, LocateError> {
    if let Some(start) = content.find(old) {
        // Counting every occurrence is only needed for the error.
        if content[start + old.len()..].contains(old) {
            return Err(LocateError::Ambiguous(content.matches(old).count()));
        }
        return Ok(Located {
            start,
            end: start + old.len(),
            fuzzy: false,
        });
    }
    let needle = FuzzyText::new(old).text;
    if needle.is_empty() {
        return Err(LocateError::NotFound);
    }
    let haystack = fuzzy.get_or_insert_with(|| FuzzyText::new(content));
    // Every occurrence, overlapping ones included: one that cuts a character in two does
    // not count, and must not hide a whole-character one that overlaps it.
    let mut whole = Vec::new();
    let mut split = None;
    let mut from = 0;
    while let Some(i) = haystack.text[from..].find(&needle) {
        let start = from + i;
        let end = start + needle.len();
        match (haystack.is_boundary(start), haystack.is_boundary(end)) {
            (true, true) => whole.push(start),
            (starts, _) => {
                split.get_or_insert((if starts { end - 1 } else { start }, !starts));
            }
        }
        from = start
            + haystack.text[start..]
                .chars()
                .next()
                .map_or(1, char::len_utf8);
    }
    // Count as the exact stage does: occurrences that do not overlap, from the left.
    let mut count = 0;
    let mut taken_end = 0;
    for &start in &whole {
        if count == 0 || start >= taken_end {
            count += 1;
            taken_end = start + needle.len();
        }
    }
    match (whole.first(), count) {
        (Some(&start), 1) => {
            let (start, end) = haystack.original_range(start, start + needle.len());
            Ok(Located {
                start,
                end,
                fuzzy: true,
            })
        }
        (Some(_), count) => Err(LocateError::Ambiguous(count)),
        (None, _) => match split {
            Some((at, at_start)) => {
                let (s, e) = haystack.original_range(at, at + 1);
                let first = haystack.spans.partition_point(|span| span.0 < s);
                let last = haystack.spans.partition_point(|span| span.0 <= s);
                Err(LocateError::SplitsCharacter(SplitCharacter {
                    character: content[s..e].to_string(),
                    reads_as: haystack.text[first..last].to_string(),
                    line: content[..s].matches('\n').count() + 1,
                    at_start,
                }))
            }
            None => Err(LocateError::NotFound),
        },
    }
}

/// The part of `content` that looks most like the start of `old`, with line numbers, to
/// show a model whose `oldText` was not found. `None` when nothing is similar.
pub(crate) fn closest_region(content: &str, old: &str) -> Option<String> {
    const MAX_LINES_SCANNED: usize = 50_000;
    let needle = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    let needle_grams = bigrams(needle);
    let lines: Vec<&str> = content.lines().take(MAX_LINES_SCANNED).collect();
    let (best, score) = lines
        .iter()
        .enumerate()
        .map(|(i, line)| (i, dice(&needle_grams, line.trim())))
        .fold(
            (0, 0.0f64),
            |acc, cur| if cur.1 > acc.1 { cur } else { acc },
        );
    if score < 0.4 {
        return None;
    }
    let old_lines = old.lines().count().max(1);
    let from = best.saturating_sub(2);
    let to = (best + old_lines + 2).min(lines.len()).min(from + 40);
    let width = to.to_string().len();
    let region = (from..to)
        .map(|i| format!("{:>width$} | {}", i + 1, lines[i]))
        .collect::<Vec<_>>()
        .join("\n");
    Some(region)
}

fn bigrams(s: &str) -> HashMap<(char, char), usize> {
    let chars: Vec<char> = s.chars().collect();
    let mut map = HashMap::new();
    for w in chars.windows(2) {
        *map.entry((w[0], w[1])).or_insert(0) += 1;
    }
    map
}

/// Dice similarity of two strings' character bigrams (1.0 = same bigrams).
fn dice(needle: &HashMap<(char, char), usize>, line: &str) -> f64 {
    let needle_total: usize = needle.values().sum();
    if needle_total == 0 || line.len() < 2 {
        return 0.0;
    }
    let mut seen: HashMap<(char, char), usize> = HashMap::new();
    let mut common = 0;
    let mut total = 0;
    let mut prev = None;
    for c in line.chars() {
        if let Some(p) = prev {
            total += 1;
            let used = seen.entry((p, c)).or_insert(0);
            if *used < needle.get(&(p, c)).copied().unwrap_or(0) {
                *used += 1;
                common += 1;
            }
        }
        prev = Some(c);
    }
    2.0 * common as f64 / (needle_total + total) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_offsets_map_back_around_carriage_returns() {
        let lf = LfText::new("a\r\nb\r\nc");
        assert_eq!(lf.text, "a\nb\nc");
        assert_eq!(lf.original_offset(1), 1); // before "\r\n"
        assert_eq!(lf.original_offset(2), 3); // "b"
        assert_eq!(lf.original_offset(5), 7);
    }

    #[test]
    fn fuzzy_form_maps_to_original_spans() {
        let src = "say \u{201C}hi\u{201D}   \nx\u{00A0}y";
        let f = FuzzyText::new(src);
        assert_eq!(f.text, "say \"hi\"\nx y");
        let start = f.text.find("\"hi\"").unwrap();
        let (s, e) = f.original_range(start, start + 4);
        assert_eq!(&src[s..e], "\u{201C}hi\u{201D}");
        // Combining marks stay with their base character.
        let f = FuzzyText::new("e\u{0301}x");
        assert_eq!(f.text, "\u{e9}x");
        assert_eq!(f.original_range(0, 2), (0, 3));
    }

    #[test]
    fn closest_region_points_at_the_similar_line() {
        let content = "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n";
        let region = closest_region(content, "let answr = 42;").unwrap();
        assert!(region.contains("2 |     let answer = 42;"), "{region}");
        assert_eq!(closest_region(content, "zzzzqqqq"), None);
    }
}
