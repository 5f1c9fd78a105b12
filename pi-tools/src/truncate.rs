//! Output limits shared by the built-in tools: keep the head or the tail of a text within a
//! number of lines and of UTF-8 bytes, on char boundaries, and say what was kept.
//!
//! A trailing newline does not count as an extra (empty) line.

/// Lines of output a tool shows at most.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Bytes (UTF-8) of output a tool shows at most: 50 KB.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Characters of one grep result line shown at most.
pub const GREP_MAX_LINE_CHARS: usize = 500;

/// The limits to truncate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationLimits {
    /// Maximum number of lines.
    pub max_lines: usize,
    /// Maximum number of UTF-8 bytes (newlines between kept lines included).
    pub max_bytes: usize,
}

impl Default for TruncationLimits {
    fn default() -> Self {
        TruncationLimits {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Which limit stopped the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

impl TruncatedBy {
    /// The default limit this names, in words for a notice: `2000 lines` or `50KB`.
    pub fn default_limit(self) -> String {
        match self {
            TruncatedBy::Lines => format!("{DEFAULT_MAX_LINES} lines"),
            TruncatedBy::Bytes => format_size(DEFAULT_MAX_BYTES as u64),
        }
    }
}

/// What a truncation kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// The kept text (without a trailing newline when truncated).
    pub content: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// The limit that cut, when something was cut.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the whole input.
    pub total_lines: usize,
    /// Bytes in the whole input.
    pub total_bytes: usize,
    /// Lines kept (a partial last line counts).
    pub output_lines: usize,
    /// Bytes kept.
    pub output_bytes: usize,
    /// Tail only: the one kept line is the end of a line longer than the byte limit.
    pub last_line_partial: bool,
    /// Head only: the first line alone is over the byte limit, so nothing was kept.
    pub first_line_exceeds_limit: bool,
    /// The limits applied.
    pub limits: TruncationLimits,
}

/// Splits into lines; a final newline ends the last line instead of starting an empty one.
fn lines_of(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').collect()
}

fn untruncated(text: &str, total_lines: usize, limits: TruncationLimits) -> Truncation {
    Truncation {
        content: text.to_string(),
        truncated: false,
        truncated_by: None,
        total_lines,
        total_bytes: text.len(),
        output_lines: total_lines,
        output_bytes: text.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        limits,
    }
}

/// How many lines, taken in the iterator's order (first lines for head, last lines for tail),
/// fit both limits once joined with newlines, and which limit stopped the count.
fn whole_lines_that_fit<'a>(
    lines: impl Iterator<Item = &'a &'a str>,
    limits: TruncationLimits,
) -> (usize, TruncatedBy) {
    let mut bytes = 0usize;
    let mut count = 0usize;
    for (i, line) in lines.enumerate() {
        if i >= limits.max_lines {
            return (i, TruncatedBy::Lines);
        }
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > limits.max_bytes {
            return (i, TruncatedBy::Bytes);
        }
        bytes += cost;
        count += 1;
    }
    // Everything fitted: the caller sees every line kept and does not truncate.
    (count, TruncatedBy::Lines)
}

/// Keeps the first whole lines that fit both limits (for read, grep, find, ls).
///
/// ```
/// use pi_tools::truncate::{truncate_head, TruncationLimits, TruncatedBy};
/// let t = truncate_head("a\nb\nc\n", TruncationLimits { max_lines: 2, max_bytes: 100 });
/// assert_eq!(t.content, "a\nb");
/// assert_eq!((t.total_lines, t.output_lines), (3, 2));
/// assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
/// ```
pub fn truncate_head(text: &str, limits: TruncationLimits) -> Truncation {
    let lines = lines_of(text);
    let total_lines = lines.len();
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return untruncated(text, total_lines, limits);
    }
    let (kept, by) = whole_lines_that_fit(lines.iter(), limits);
    if kept == total_lines {
        // Everything fits once the trailing newline is not counted.
        return untruncated(text, total_lines, limits);
    }
    let content = lines[..kept].join("\n");
    Truncation {
        output_bytes: content.len(),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: text.len(),
        output_lines: kept,
        last_line_partial: false,
        first_line_exceeds_limit: kept == 0 && by == TruncatedBy::Bytes,
        limits,
    }
}

/// Keeps the last whole lines that fit both limits (for bash). If even the last line alone
/// is over the byte limit, keeps its last bytes (on a char boundary).
///
/// ```
/// use pi_tools::truncate::{truncate_tail, TruncationLimits};
/// let t = truncate_tail("a\nb\nc\n", TruncationLimits { max_lines: 2, max_bytes: 100 });
/// assert_eq!(t.content, "b\nc");
/// ```
pub fn truncate_tail(text: &str, limits: TruncationLimits) -> Truncation {
    let lines = lines_of(text);
    let total_lines = lines.len();
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return untruncated(text, total_lines, limits);
    }
    let (kept, by) = whole_lines_that_fit(lines.iter().rev(), limits);
    if kept == total_lines {
        return untruncated(text, total_lines, limits);
    }
    let mut last_line_partial = false;
    let content = if kept == 0 {
        let last = lines.last().copied().unwrap_or("");
        last_line_partial = true;
        tail_bytes(last, limits.max_bytes).to_string()
    } else {
        lines[total_lines - kept..].join("\n")
    };
    Truncation {
        output_bytes: content.len(),
        output_lines: kept.max(usize::from(last_line_partial)),
        content,
        truncated: true,
        truncated_by: Some(by),
        total_lines,
        total_bytes: text.len(),
        last_line_partial,
        first_line_exceeds_limit: false,
        limits,
    }
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a char boundary.
pub fn head_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The longest suffix of `text` of at most `max_bytes` bytes that starts on a char boundary.
pub fn tail_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Clips one line to `max_chars` characters, marking the cut with `... [truncated]`.
/// Returns the line and whether it was clipped.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        None => (line.to_string(), false),
        Some((cut, _)) => (format!("{}... [truncated]", &line[..cut]), true),
    }
}

/// A byte count for people: `512B`, `50.0KB`, `3.2MB`.
pub fn format_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes}B")
    } else if b < KB * KB {
        format!("{:.1}KB", b / KB)
    } else if b < KB * KB * KB {
        format!("{:.1}MB", b / (KB * KB))
    } else {
        format!("{:.1}GB", b / (KB * KB * KB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim(max_lines: usize, max_bytes: usize) -> TruncationLimits {
        TruncationLimits {
            max_lines,
            max_bytes,
        }
    }

    #[test]
    fn trailing_newline_is_not_a_line() {
        let t = truncate_head("a\nb\n", lim(2, 100));
        assert!(!t.truncated);
        assert_eq!(t.total_lines, 2);
        assert_eq!(t.content, "a\nb\n");
    }

    #[test]
    fn head_by_bytes_keeps_whole_lines() {
        let t = truncate_head("aaaa\nbbbb\ncccc", lim(10, 9));
        assert_eq!(t.content, "aaaa\nbbbb");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(t.output_bytes, 9);
    }

    #[test]
    fn head_first_line_too_long() {
        let t = truncate_head("aaaaaaaaaa\nb", lim(10, 5));
        assert!(t.first_line_exceeds_limit);
        assert_eq!(t.content, "");
    }

    #[test]
    fn tail_cuts_long_last_line_on_char_boundary() {
        let t = truncate_tail("x\nééééé", lim(10, 5));
        assert!(t.last_line_partial);
        assert_eq!(t.content, "éé");
        let t = truncate_tail("1\n2\n3\n4", lim(3, 100));
        assert_eq!(t.content, "2\n3\n4");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
    }

    #[test]
    fn line_clipping_and_sizes() {
        assert_eq!(
            truncate_line("héllo", 2),
            ("hé... [truncated]".into(), true)
        );
        assert_eq!(truncate_line("hé", 2), ("hé".into(), false));
        assert_eq!(format_size(51_200), "50.0KB");
        assert_eq!(format_size(10), "10B");
        assert_eq!(head_bytes("éé", 3), "é");
    }
}
