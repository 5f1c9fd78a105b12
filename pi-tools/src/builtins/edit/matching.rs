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
    /// Whether every `\n` had a `\r` before it (and there was one).
    all_crlf: bool,
}

impl<'a> LfText<'a> {
    pub fn new(original: &'a str) -> Self {
        if !original.contains("\r\n") {
            return LfText {
                text: Cow::Borrowed(original),
                crlf_at: Vec::new(),
                all_crlf: false,
            };
        }
        let mut text = String::with_capacity(original.len());
        let mut crlf_at = Vec::new();
        let mut rest = original;
        let mut lone_lf = false;
        while let Some(i) = rest.find("\r\n") {
            lone_lf = lone_lf || memchr::memchr(b'\n', &rest.as_bytes()[..i]).is_some();
            text.push_str(&rest[..i]);
            crlf_at.push(text.len());
            text.push('\n');
            rest = &rest[i + 2..];
        }
        lone_lf = lone_lf || rest.contains('\n');
        text.push_str(rest);
        LfText {
            text: Cow::Owned(text),
            crlf_at,
            all_crlf: !lone_lf,
        }
    }

    /// Whether some line ends with `\r\n`.
    pub fn has_crlf(&self) -> bool {
        !self.crlf_at.is_empty()
    }

    /// Whether every line ending is `\r\n` (and there is one).
    pub fn all_crlf(&self) -> bool {
        self.all_crlf
    }

    /// Whether the `\n` at `newline` of `text` had a `\r` before it.
    pub fn is_crlf(&self, newline: usize) -> bool {
        self.crlf_at.binary_search(&newline).is_ok()
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

/// Calls `emit` with each character of the fuzzy form of `source` (LF-only) and the span
/// of `source` it came from: NFKC per base character with its combining marks, quotes,
/// dashes and spaces unified, trailing whitespace of every line dropped.
///
/// Nothing is collected: a caller keeps only what it needs, so searching the fuzzy form of
/// a large file costs a bounded window, not a map per byte.
fn normalize(source: &str, mut emit: impl FnMut(char, (usize, usize))) {
    let mut line_start = 0;
    for line in source.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (line, false),
        };
        // First pass: how many bytes of the line's fuzzy form come before its trailing
        // whitespace. Second pass: emit those.
        let mut kept = 0;
        let mut length = 0;
        segments(body, |_, segment| {
            for_each_fuzzy_char(segment, |c| {
                length += c.len_utf8();
                if !c.is_whitespace() {
                    kept = length;
                }
            });
        });
        let mut produced = 0;
        segments(body, |at, segment| {
            let span = (line_start + at, line_start + at + segment.len());
            for_each_fuzzy_char(segment, |c| {
                if produced < kept {
                    produced += c.len_utf8();
                    emit(c, span);
                }
            });
        });
        if newline {
            let nl = line_start + body.len();
            emit('\n', (nl, nl + 1));
        }
        line_start += line.len();
    }
}

/// Calls `each` with the offset and text of every segment of `line`: a character and the
/// combining marks after it, so NFKC can compose them without crossing into the next one.
fn segments(line: &str, mut each: impl FnMut(usize, &str)) {
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let mut end = i + c.len_utf8();
        while let Some(&(j, next)) = chars.peek() {
            if canonical_combining_class(next) == 0 {
                break;
            }
            end = j + next.len_utf8();
            chars.next();
        }
        each(i, &line[i..end]);
    }
}

/// The characters one segment reads as.
fn for_each_fuzzy_char(segment: &str, mut each: impl FnMut(char)) {
    match segment.as_bytes() {
        [b] if b.is_ascii() => each(char::from(*b)),
        _ => segment.nfkc().map(fuzzy_char).for_each(each),
    }
}

/// The fuzzy form of `source` (see [`normalize`]).
pub(crate) fn fuzzy_form(source: &str) -> String {
    let mut text = String::with_capacity(source.len());
    normalize(source, |c, _| text.push(c));
    text
}

/// The part of the fuzzy form of a text not yet searched, with the original span of each
/// of its bytes. Searched and dropped as it grows, so it stays about [`WINDOW_BYTES`] plus
/// the needle long.
struct Window {
    text: String,
    spans: Vec<(usize, usize)>,
    /// The span of the byte just before `text[0]`, once some were dropped.
    before: Option<(usize, usize)>,
    /// Where, in `text`, the next search starts (a character boundary).
    from: usize,
}

/// How much of the fuzzy form is gathered before it is searched.
const WINDOW_BYTES: usize = 256 << 10;

impl Window {
    /// Whether offset `at` of `text` lies between the expansions of two original
    /// characters, not inside the expansion of one (`ﬁ` expands to `fi`: no boundary
    /// between the `f` and the `i`). The end of the window is a boundary: it is only
    /// searched after whole segments.
    fn is_boundary(&self, at: usize) -> bool {
        if at >= self.spans.len() {
            return true;
        }
        match at.checked_sub(1) {
            Some(previous) => self.spans[previous] != self.spans[at],
            None => self.before.is_none_or(|before| before != self.spans[0]),
        }
    }
}

/// What a search of the fuzzy form found, gathered as the window moves.
#[derive(Default)]
struct Found {
    /// Original range of the first occurrence that begins and ends between characters.
    first: Option<(usize, usize)>,
    /// Such occurrences, overlapping ones included, as the exact stage counts them.
    count: usize,
    /// The lines the counted occurrences start on.
    lines: StartLines,
    /// The first occurrence that cuts a character: the original span of that character
    /// and whether the match would begin (rather than end) inside it.
    split: Option<((usize, usize), bool)>,
}

impl Found {
    /// Finds every occurrence of `needle` wholly inside the window, overlapping ones
    /// included (one that cuts a character in two does not count, and must not hide a
    /// whole-character one that overlaps it), then drops what no later occurrence can
    /// start in.
    fn search(&mut self, window: &mut Window, needle: &str, content: &str) {
        while let Some(i) = window.text[window.from..].find(needle) {
            let start = window.from + i;
            let end = start + needle.len();
            match (window.is_boundary(start), window.is_boundary(end)) {
                (true, true) => {
                    self.count += 1;
                    self.lines.note(content, window.spans[start].0);
                    self.first
                        .get_or_insert((window.spans[start].0, window.spans[end - 1].1));
                }
                (starts, _) => {
                    let at = if starts { end - 1 } else { start };
                    self.split.get_or_insert((window.spans[at], !starts));
                }
            }
            window.from = start
                + window.text[start..]
                    .chars()
                    .next()
                    .map_or(1, char::len_utf8);
        }
        // Every occurrence that fits was found: the next can only start where it would
        // reach past the window's end.
        let len = window.text.len();
        let mut keep = (len + 1).saturating_sub(needle.len()).max(window.from);
        while !window.text.is_char_boundary(keep) {
            keep += 1;
        }
        if keep > 0 {
            window.before = Some(window.spans[keep - 1]);
            window.text.drain(..keep);
            window.spans.drain(..keep);
        }
        window.from -= keep.min(window.from);
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
    /// Several occurrences: how many (overlapping ones included), and the
    /// lines the first of them start on (1-based, each once, at most [`LINES_SHOWN`] + 1, so
    /// that a refusal can tell whether there are more).
    Ambiguous {
        count: usize,
        lines: Vec<usize>,
    },
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

/// How many of an ambiguous `oldText`'s lines a refusal names.
pub(crate) const LINES_SHOWN: usize = 10;

/// The 1-based lines on which occurrences start, each line once, noted in ascending order:
/// at most [`LINES_SHOWN`] + 1 of them, so that a refusal can tell whether there are more.
#[derive(Default)]
struct StartLines {
    lines: Vec<usize>,
    /// Line ends before `counted_to`.
    ends: usize,
    counted_to: usize,
}

impl StartLines {
    /// Notes the occurrence at byte `at` of `content` (not before the last one noted).
    fn note(&mut self, content: &str, at: usize) {
        if self.lines.len() > LINES_SHOWN {
            return;
        }
        let passed = content
            .as_bytes()
            .get(self.counted_to..at)
            .unwrap_or_default();
        self.ends += memchr::memchr_iter(b'\n', passed).count();
        self.counted_to = at;
        let line = self.ends + 1;
        if self.lines.last() != Some(&line) {
            self.lines.push(line);
        }
    }
}

/// Finds `old` (LF-only) in `content`: an exact, unique match first; otherwise a unique
/// match of the fuzzy forms whose ends fall between original characters.
///
/// The fuzzy form of `content` is produced and searched a window at a time, so the search
/// holds about [`WINDOW_BYTES`] plus `old`'s length, whatever the size of `content`.
pub(crate) fn locate(content: &str, old: &str) -> Result<Located, LocateError> {
    if let Some(start) = content.find(old) {
        // Occurrences may overlap ("a\na\n" twice in "a\na\na\n"): the next is looked for
        // from the character after this one's start, and counting them all is only needed
        // for the error.
        let step = old.chars().next().map_or(1, char::len_utf8);
        if content[start + step..].contains(old) {
            let mut lines = StartLines::default();
            let (mut count, mut from) = (0, start);
            while let Some(i) = content[from..].find(old) {
                count += 1;
                lines.note(content, from + i);
                from += i + step;
            }
            return Err(LocateError::Ambiguous {
                count,
                lines: lines.lines,
            });
        }
        return Ok(Located {
            start,
            end: start + old.len(),
            fuzzy: false,
        });
    }
    let needle = fuzzy_form(old);
    if needle.is_empty() {
        return Err(LocateError::NotFound);
    }
    let mut window = Window {
        text: String::new(),
        spans: Vec::new(),
        before: None,
        from: 0,
    };
    let mut found = Found::default();
    let mut last_span = (usize::MAX, usize::MAX);
    normalize(content, |c, span| {
        // Search only between segments, so no occurrence is judged on half a character.
        if span != last_span && window.text.len() >= WINDOW_BYTES + needle.len() {
            found.search(&mut window, &needle, content);
        }
        last_span = span;
        window.text.push(c);
        window.spans.extend(std::iter::repeat_n(span, c.len_utf8()));
    });
    found.search(&mut window, &needle, content);
    match (found.first, found.count) {
        (Some((start, end)), 1) => Ok(Located {
            start,
            end,
            fuzzy: true,
        }),
        (Some(_), count) => Err(LocateError::Ambiguous {
            count,
            lines: found.lines.lines,
        }),
        (None, _) => match found.split {
            Some(((s, e), at_start)) => Err(LocateError::SplitsCharacter(SplitCharacter {
                character: content[s..e].to_string(),
                reads_as: content[s..e].nfkc().map(fuzzy_char).collect(),
                line: memchr::memchr_iter(b'\n', &content.as_bytes()[..s]).count() + 1,
                at_start,
            })),
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

    /// The fuzzy form with the original span of each of its bytes.
    fn spans_of(src: &str) -> (String, Vec<(usize, usize)>) {
        let (mut text, mut spans) = (String::new(), Vec::new());
        normalize(src, |c, span| {
            text.push(c);
            spans.extend(std::iter::repeat_n(span, c.len_utf8()));
        });
        (text, spans)
    }

    #[test]
    fn fuzzy_form_maps_to_original_spans() {
        let src = "say \u{201C}hi\u{201D}   \nx\u{00A0}y";
        let (text, spans) = spans_of(src);
        assert_eq!(text, "say \"hi\"\nx y");
        let start = text.find("\"hi\"").unwrap();
        let (s, e) = (spans[start].0, spans[start + 3].1);
        assert_eq!(&src[s..e], "\u{201C}hi\u{201D}");
        // Combining marks stay with their base character.
        let (text, spans) = spans_of("e\u{0301}x");
        assert_eq!(text, "\u{e9}x");
        assert_eq!((spans[0].0, spans[1].1), (0, 3));
    }

    #[test]
    fn the_window_finds_occurrences_across_its_moves() {
        // Far more fuzzy text than one window, the match straddling window ends.
        let line = "let \u{201C}q\u{201D} = 1; ";
        let mut content = line.repeat(3 * WINDOW_BYTES / line.len());
        content.push_str("the \u{2018}needle\u{2019} here\n");
        content.push_str(&line.repeat(10));
        let at = locate(&content, "the 'needle' here").unwrap();
        assert_eq!(
            &content[at.start..at.end],
            "the \u{2018}needle\u{2019} here"
        );
        assert!(at.fuzzy);
        // Occurrences are counted as the exact stage counts them.
        let many = "\u{2018}ab\u{2019} ".repeat(WINDOW_BYTES / 4);
        assert_eq!(
            locate(&many, "'ab'"),
            Err(LocateError::Ambiguous {
                count: WINDOW_BYTES / 4,
                lines: vec![1]
            })
        );
        assert_eq!(locate(&many, "'abc'"), Err(LocateError::NotFound));
    }

    #[test]
    fn closest_region_points_at_the_similar_line() {
        let content = "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n";
        let region = closest_region(content, "let answr = 42;").unwrap();
        assert!(region.contains("2 |     let answer = 42;"), "{region}");
        assert_eq!(closest_region(content, "zzzzqqqq"), None);
    }
}
