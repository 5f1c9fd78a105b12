//! The built-ins' typed results: what each tool returns beside its text, for programs (an
//! MCP client's `structuredContent`, a tool calling another through `ctx.call_tool`, a
//! transcript reader). Each type is its tool's output schema (`#[tool(output = ...)]`); the
//! text the model reads is unchanged. A failed call has an error result and none of these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a `bash` command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// The exit code, when the shell exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that ended the shell, when one did.
    pub signal: Option<i32>,
    /// Whether the text shows only the output's last 2000 lines or 50KB.
    pub truncated: bool,
    /// The file holding the whole output, once it passed the limits (deleted when the
    /// session ends).
    pub full_output_path: Option<String>,
    /// How long the command ran, in milliseconds (until it was handed back, for a job).
    pub duration_ms: u64,
    /// The job the command became when it was handed back still running (read it with
    /// `job_output`); null when it finished within the call.
    pub job: Option<u64>,
}

/// What a `read` returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    /// The path as resolved.
    pub path: String,
    /// Whether the file was read as text or as an image.
    pub kind: ReadKind,
    /// Text: the first line shown (1-based).
    pub start_line: Option<u64>,
    /// Text: the last line shown (0 when none).
    pub end_line: Option<u64>,
    /// Text: the lines in the file.
    pub total_lines: Option<u64>,
    /// Text: whether the output stopped before the end of the window asked for, at an
    /// output limit.
    pub truncated: bool,
    /// Text: the offset to continue from, when more remains.
    pub next_offset: Option<u64>,
    /// Image: what was sent.
    pub image: Option<ImageInfo>,
}

impl ReadResult {
    /// The typed result of a read, from its details.
    pub(crate) fn of(details: &crate::builtins::read::ReadDetails) -> Self {
        use crate::builtins::read::ReadStop;
        let image = match (&details.mime_type, details.image_size) {
            (Some(mime_type), Some(size)) => Some(ImageInfo {
                mime_type: mime_type.clone(),
                width: size.width,
                height: size.height,
                original_width: size.original_width,
                original_height: size.original_height,
            }),
            _ => None,
        };
        ReadResult {
            path: details.path.clone(),
            kind: if image.is_some() {
                ReadKind::Image
            } else {
                ReadKind::Text
            },
            start_line: details.start_line,
            end_line: details.end_line,
            total_lines: details.total_lines,
            truncated: matches!(
                details.stopped_by,
                Some(ReadStop::Lines | ReadStop::Bytes | ReadStop::LineTooLong)
            ),
            next_offset: details.next_offset,
            image,
        }
    }
}

/// How a file was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReadKind {
    /// As text.
    Text,
    /// As an image.
    Image,
}

/// An image `read` sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageInfo {
    /// The MIME type sent.
    pub mime_type: String,
    /// The width sent, in pixels.
    pub width: u32,
    /// The height sent, in pixels.
    pub height: u32,
    /// The width of the file's image.
    pub original_width: u32,
    /// The height of the file's image.
    pub original_height: u32,
}

/// What a `grep` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    /// Each matching line the text shows, in its order (context lines are not records).
    pub matches: Vec<GrepMatch>,
    /// Whether an output limit cut the text (the records stop where it does).
    pub truncated: bool,
    /// Whether more matches exist beyond the `limit` asked for.
    pub limit_reached: bool,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepMatch {
    /// The file, relative to the search directory.
    pub path: String,
    /// The line number (1-based).
    pub line: u64,
    /// The line's text (clipped to 500 characters, as shown).
    pub text: String,
}

/// What a `find` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindResult {
    /// Each path the text shows, in its order.
    pub paths: Vec<PathEntry>,
    /// Whether an output limit cut the text.
    pub truncated: bool,
    /// Whether more paths exist beyond the `limit` asked for.
    pub limit_reached: bool,
}

/// What an `ls` listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LsResult {
    /// Each entry the text shows, in its order.
    pub entries: Vec<PathEntry>,
    /// Whether an output limit cut the text.
    pub truncated: bool,
    /// Whether more entries exist beyond the `limit` asked for.
    pub limit_reached: bool,
}

/// A path `find` or `ls` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathEntry {
    /// The path (relative to the search directory) or the entry's name, without the `/`
    /// the text puts after a directory.
    pub path: String,
    /// Whether it is a directory.
    pub dir: bool,
}

impl PathEntry {
    /// The entry of one line of `find` or `ls` text (`name` or `name/`).
    pub(crate) fn of_line(line: &str) -> Self {
        match line.strip_suffix('/') {
            Some(dir) => PathEntry {
                path: dir.to_owned(),
                dir: true,
            },
            None => PathEntry {
                path: line.to_owned(),
                dir: false,
            },
        }
    }
}

/// What an `edit` changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    /// The path as resolved.
    pub path: String,
    /// The change as a unified diff.
    pub diff: String,
    /// The lines of the new file that changed, as ranges (1-based, inclusive); a range
    /// whose `end` is below its `start` is a removal, before the line `start` now is.
    pub changed_lines: Vec<LineSpan>,
    /// How each edit, in the order given, was located.
    pub edits: Vec<EditStage>,
}

/// A range of lines (1-based, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LineSpan {
    /// The first line.
    pub start: u64,
    /// The last line.
    pub end: u64,
}

/// The stage of `edit`'s matching that located an edit's `oldText`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EditStage {
    /// The text as given.
    Exact,
    /// The text with quotes, dashes, spaces and trailing whitespace normalised.
    Normalised,
    /// The text with its indentation adjusted to the file's.
    Indentation,
    /// The text with its blank lines set aside.
    BlankLines,
    /// The text without the line numbers copied into it.
    LineNumbers,
    /// The text without the wrapper it came in (a code fence, diff prefixes, escaping).
    Unwrapped,
    /// Every occurrence of the text (`replaceAll`).
    ReplaceAll,
}

/// What a `write` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteResult {
    /// The path as resolved.
    pub path: String,
    /// The bytes written (UTF-8).
    pub bytes: u64,
    /// Whether the file was created or replaced.
    pub outcome: WriteOutcome,
}

/// Whether `write` made a new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteOutcome {
    /// The file did not exist.
    Created,
    /// The file existed and was replaced whole.
    Replaced,
}

/// The changed lines of a unified diff, on the new side: each run of added lines is a
/// range, and a run of removed lines with nothing added in its place is an empty range
/// (`end = start - 1`) before the line that now follows it. Context lines are not changed.
pub(crate) fn changed_lines(patch: &str) -> Vec<LineSpan> {
    let mut spans: Vec<LineSpan> = Vec::new();
    let mut next: u64 = 0;
    let mut in_hunk = false;
    let mut run: Option<LineSpan> = None;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("@@ -") {
            spans.extend(run.take());
            let new = rest
                .split_once(" +")
                .and_then(|(_, n)| n.split([',', ' ']).next());
            next = new.and_then(|n| n.parse().ok()).unwrap_or(0).max(1);
            in_hunk = true;
            continue;
        }
        if !in_hunk {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'+') => {
                let span = run.get_or_insert(LineSpan {
                    start: next,
                    end: next.saturating_sub(1),
                });
                span.end = next;
                next += 1;
            }
            Some(b'-') => {
                run.get_or_insert(LineSpan {
                    start: next,
                    end: next.saturating_sub(1),
                });
            }
            Some(b'\\') => {}
            _ => {
                spans.extend(run.take());
                next += 1;
            }
        }
    }
    spans.extend(run.take());
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_the_new_sides_ranges() {
        let patch = "--- a\n+++ b\n@@ -1,3 +1,4 @@\n a\n+b\n c\n d\n@@ -10,3 +11,2 @@\n k\n-x\n+y\n-z\n@@ -20,3 +20,1 @@\n-p\n-q\n r\n";
        assert_eq!(
            changed_lines(patch),
            vec![
                LineSpan { start: 2, end: 2 },
                LineSpan { start: 12, end: 12 },
                LineSpan { start: 20, end: 19 }
            ]
        );
    }
}
