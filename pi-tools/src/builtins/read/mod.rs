//! The `read` tool: a text file's lines (a window of them, within the output limits) or an
//! image, read without loading more of the file than the output needs.

use std::path::{Path, PathBuf};

use memchr::{memchr, memchr_iter};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::builtins::preview::{arg_str, preview};
mod image;

use crate::builtins::results::ReadResult;
use crate::builtins::sentence;
use crate::core::{ContentBlock, ResourceLink, ToolContext, ToolError, ToolResult};
use crate::env::{ExecutionEnv, FileHead, ToolContextExt, resolve_path, resolve_read_path};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};
use crate::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size};
use image::{IMAGE_MAX_FILE_BYTES, prepare_image, sniff_image_mime};

/// Arguments of `read`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// Path of the file to read, relative to the working directory or absolute.
    pub path: String,
    /// First line to read, counting from 1 (default: the first line).
    #[serde(default = "first_line")]
    pub offset: Option<i64>,
    /// Maximum number of lines to read (default: as many as the output limit allows).
    #[serde(default)]
    pub limit: Option<u64>,
}

impl ReadArgs {
    /// Reads `path` from its first line, as much as the output limits allow (set `offset`
    /// and `limit` on the result for a window).
    pub fn new(path: impl Into<String>) -> Self {
        ReadArgs {
            path: path.into(),
            offset: None,
            limit: None,
        }
    }
}

/// `offset` when the model leaves it out; the schema shows it as the default.
fn first_line() -> Option<i64> {
    Some(1)
}

/// Why a text read stopped before the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReadStop {
    /// The caller's `limit`.
    Limit,
    /// The 2000-line output limit.
    Lines,
    /// The 50 KB output limit.
    Bytes,
    /// The first requested line alone is over the byte limit.
    LineTooLong,
}

/// What a read returned, for user interfaces.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDetails {
    /// The path as resolved.
    pub path: String,
    /// `"text"` or `"image"`.
    pub kind: &'static str,
    /// Text: first line shown (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    /// Text: last line shown (0 when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// Text: lines in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// Text: why the output stopped early, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<ReadStop>,
    /// Text: the offset to continue from, if more remains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// Image: the MIME type sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Image: size sent, and the original size when it was downscaled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_size: Option<ImageSize>,
}

/// Pixel sizes of an image read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSize {
    /// Width sent.
    pub width: u32,
    /// Height sent.
    pub height: u32,
    /// Width of the file's image.
    pub original_width: u32,
    /// Height of the file's image.
    pub original_height: u32,
}

/// Bytes inspected for image magic numbers and binary content.
const FIRST_BLOCK: usize = 8 * 1024;
/// Bytes asked of the environment per read while streaming.
const CHUNK: usize = 256 * 1024;
/// Bytes read with the file's metadata in one step: a file this small is read in it whole.
const HEAD_BYTES: usize = 64 * 1024;

/// Reads a file. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "read",
    examples = [r#"{"path": "src/main.rs"}"#, r#"{"path": "logs/server.log", "offset": 2001, "limit": 500}"#],
    label = "Read",
    description = "Read a file. Text comes back as it is (no line numbers), at most 2000 lines or 50KB per call; when more remains, the output ends with the offset to continue from. PNG, JPEG, GIF and WebP images come back as images. Use offset and limit to read a window of a large file.",
    snippet = "Read a text file or view an image",
    guidelines = ["Use read to look at files rather than cat, head, tail or sed."],
    renderer = ReadRenderer,
    output = ReadResult,
    read_only
)]
pub async fn read(
    ctx: &ToolContext,
    #[args] args: ReadArgs,
) -> Result<ToolOutput<ReadDetails>, ToolError> {
    let env = ctx.env();
    let shown = args.path.as_str();
    let (path, head) = open_head(&*env, shown).await?;
    if head.metadata.is_dir {
        return Err(ToolError::new(format!(
            "{shown} is a directory, not a file. Use ls to list its entries."
        )));
    }
    if args.limit == Some(0) {
        return Err(ToolError::new(
            "limit must be at least 1. Leave it out to read as much as the output limit allows.",
        ));
    }
    let FileHead {
        metadata: meta,
        bytes: mut start,
        rest,
    } = head;
    let first = &start[..start.len().min(FIRST_BLOCK)];

    if let Some(mime) = sniff_image_mime(first) {
        // Decoding holds the file and its pixels in memory: a huge one is refused unread.
        if meta.len > IMAGE_MAX_FILE_BYTES {
            return Err(ToolError::new(format!(
                "{shown} is a {} image of {}, over the {} limit for images, so it was not read. Make a smaller copy with bash (e.g. ImageMagick's `convert`) and read that.",
                mime.trim_start_matches("image/").to_uppercase(),
                format_size(meta.len),
                format_size(IMAGE_MAX_FILE_BYTES)
            )));
        }
        if let Some(mut rest) = rest {
            rest.read_to_end(&mut start).await?;
        }
        return read_image(&path, shown, &start, mime);
    }
    if looks_binary(first, start.len() < FIRST_BLOCK) {
        return Err(ToolError::new(format!(
            "{shown} is a binary file ({} bytes), not text, so read cannot show it. Inspect it with bash instead (e.g. `file` or `xxd {shown} | head`).",
            meta.len
        )));
    }

    let from = match args.offset {
        Some(n) if n > 1 => n as u64,
        _ => 1,
    };
    let mut window = LineWindow::new(from, args.limit, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    window.feed(&start);
    if let Some(mut rest) = rest {
        let mut buf = vec![0u8; CHUNK];
        loop {
            if ctx.is_cancelled() {
                return Err(ToolError::new("The read was cancelled."));
            }
            let n = rest.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            window.feed(&buf[..n]);
        }
    }
    window.finish();
    text_output(shown, &path, from, window)
}

/// The file's start, with its metadata, in one step when the path names it as given; only
/// a path that names nothing is looked up again in the other spellings a name may have
/// (Unicode forms, curly quotes; see [`resolve_read_path`]).
async fn open_head(env: &dyn ExecutionEnv, shown: &str) -> Result<(PathBuf, FileHead), ToolError> {
    let plain = resolve_path(env, shown);
    let missing = match env.read_head(&plain, HEAD_BYTES).await {
        Ok(head) => return Ok((plain, head)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => e,
        // A file that would block a reader says so in a sentence of its own.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(e.into()),
        Err(e) => return Err(open_error(shown, &plain, e)),
    };
    let path = resolve_read_path(env, shown).await;
    if path == plain {
        return Err(open_error(shown, &plain, missing));
    }
    match env.read_head(&path, HEAD_BYTES).await {
        Ok(head) => Ok((path, head)),
        Err(e) => Err(open_error(shown, &path, e)),
    }
}

fn open_error(shown: &str, path: &Path, err: std::io::Error) -> ToolError {
    match err.kind() {
        std::io::ErrorKind::NotFound => ToolError::new(format!(
            "File not found: {shown} (looked for {}). Check the path, or use ls or find to locate the file.",
            path.display()
        )),
        _ => ToolError::new(format!("Could not read {shown}: {}", sentence(&err))),
    }
}

/// NUL bytes or bytes that are not UTF-8 (a sequence cut by the block's end is fine unless
/// the block is the whole file).
fn looks_binary(block: &[u8], whole_file: bool) -> bool {
    if memchr(0, block).is_some() {
        return true;
    }
    match std::str::from_utf8(block) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some() || whole_file,
    }
}

fn read_image(
    path: &Path,
    shown: &str,
    bytes: &[u8],
    mime: &str,
) -> Result<ToolOutput<ReadDetails>, ToolError> {
    let image = prepare_image(bytes, mime).map_err(|e| ToolError::new(format!("{shown}: {e}")))?;
    let mut text = format!("Read image file {shown} [{}]", image.mime_type);
    if image.resized() {
        text.push_str(&format!(
            "\n[The image was downscaled from {}x{} to {}x{} to fit the size limits; multiply coordinates by {:.2} to map them to the original.]",
            image.original_width,
            image.original_height,
            image.width,
            image.height,
            f64::from(image.original_width) / f64::from(image.width.max(1))
        ));
    }
    let details = ReadDetails {
        path: path.display().to_string(),
        kind: "image",
        start_line: None,
        end_line: None,
        total_lines: None,
        stopped_by: None,
        next_offset: None,
        mime_type: Some(image.mime_type.clone()),
        image_size: Some(ImageSize {
            width: image.width,
            height: image.height,
            original_width: image.original_width,
            original_height: image.original_height,
        }),
    };
    let result = ReadResult::of(&details);
    ToolOutput::blocks(vec![
        ContentBlock::text(text),
        ContentBlock::image(image.data, image.mime_type),
    ])
    .with_details(details)
    .with_structured(&result)
}

fn text_output(
    shown: &str,
    path: &Path,
    start: u64,
    window: LineWindow,
) -> Result<ToolOutput<ReadDetails>, ToolError> {
    let total = window.total_lines();
    if start > total && start > 1 {
        return Err(ToolError::new(format!(
            "Offset {start} is beyond the end of {shown}, which has {total} line{}. Use an offset between 1 and {}.",
            if total == 1 { "" } else { "s" },
            total.max(1)
        )));
    }
    let end = start + window.kept - 1;
    let mut text = String::from_utf8_lossy(&window.out).into_owned();
    // The last line shown keeps its line ending when it had one: the window stopped before
    // a later line, or the file ends with a newline. A CRLF line already kept its `\r`.
    if window.kept > 0 && (window.stop.is_some() || window.ends_with_newline) {
        text.push('\n');
    }
    let next = end + 1;
    let notice = match window.stop {
        None => None,
        Some(ReadStop::Limit) => Some(format!(
            "[{} more line{} in the file. Use offset={next} to continue.]",
            total - end,
            if total - end == 1 { "" } else { "s" }
        )),
        Some(ReadStop::Lines) => Some(format!(
            "[Showing lines {start}-{end} of {total}. Use offset={next} to continue.]"
        )),
        Some(ReadStop::Bytes) => Some(format!(
            "[Showing lines {start}-{end} of {total} ({} limit). Use offset={next} to continue.]",
            format_size(DEFAULT_MAX_BYTES as u64)
        )),
        Some(ReadStop::LineTooLong) => Some(format!(
            "[Line {start} is {}, over the {} limit of one read. Read part of it with bash: sed -n '{start}p' {shown} | head -c {DEFAULT_MAX_BYTES}]",
            format_size(window.too_long_len),
            format_size(DEFAULT_MAX_BYTES as u64)
        )),
    };
    if let Some(notice) = notice {
        // One empty line between the text (which ends with its newline) and the notice.
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&notice);
    }
    let continues = window.stop.is_some() && window.stop != Some(ReadStop::LineTooLong);
    let details = ReadDetails {
        path: path.display().to_string(),
        kind: "text",
        start_line: Some(start),
        end_line: Some(end),
        total_lines: Some(total),
        stopped_by: window.stop,
        next_offset: continues.then_some(next),
        mime_type: None,
        image_size: None,
    };
    let result = ReadResult::of(&details);
    let out = ToolOutput::text(text)
        .with_details(details)
        .with_structured(&result)?;
    // Cut short by the output's limits (not by the limit asked for): point at the whole file.
    Ok(match window.stop {
        Some(ReadStop::Lines | ReadStop::Bytes | ReadStop::LineTooLong) if path.is_absolute() => {
            out.with_link(
                ResourceLink::file(path)
                    .with_mime_type("text/plain")
                    .with_description(format!("The whole file ({total} lines).")),
            )
        }
        _ => out,
    })
}

/// Streams a file's bytes and keeps only the requested window of lines, within the output
/// limits; after the window it only counts newlines. Memory: the limits, not the file.
#[derive(Debug)]
struct LineWindow {
    start: u64,
    limit: Option<u64>,
    max_lines: u64,
    max_bytes: usize,
    /// Number of the line being read (1-based).
    line: u64,
    newlines: u64,
    seen_bytes: bool,
    ends_with_newline: bool,
    out: Vec<u8>,
    kept: u64,
    current: Vec<u8>,
    current_len: u64,
    stop: Option<ReadStop>,
    too_long_len: u64,
}

impl LineWindow {
    fn new(start: u64, limit: Option<u64>, max_lines: usize, max_bytes: usize) -> Self {
        LineWindow {
            start,
            limit,
            max_lines: max_lines as u64,
            max_bytes,
            line: 1,
            newlines: 0,
            seen_bytes: false,
            ends_with_newline: false,
            out: Vec::new(),
            kept: 0,
            current: Vec::new(),
            current_len: 0,
            stop: None,
            too_long_len: 0,
        }
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        let Some(&last) = chunk.last() else { return };
        self.seen_bytes = true;
        self.ends_with_newline = last == b'\n';
        while !chunk.is_empty() {
            if self.stop.is_some() {
                self.newlines += memchr_iter(b'\n', chunk).count() as u64;
                return;
            }
            if self.line < self.start {
                let mut rest = None;
                for pos in memchr_iter(b'\n', chunk) {
                    self.newlines += 1;
                    self.line += 1;
                    if self.line == self.start {
                        rest = Some(pos + 1);
                        break;
                    }
                }
                match rest {
                    Some(pos) => chunk = &chunk[pos..],
                    None => return,
                }
                continue;
            }
            match memchr(b'\n', chunk) {
                Some(pos) => {
                    self.append(&chunk[..pos]);
                    self.newlines += 1;
                    self.end_line();
                    self.line += 1;
                    chunk = &chunk[pos + 1..];
                }
                None => {
                    self.append(chunk);
                    return;
                }
            }
        }
    }

    fn append(&mut self, part: &[u8]) {
        self.current_len += part.len() as u64;
        let room = (self.max_bytes + 1).saturating_sub(self.current.len());
        self.current
            .extend_from_slice(&part[..part.len().min(room)]);
    }

    fn end_line(&mut self) {
        let len = self.current_len;
        self.current_len = 0;
        if self.stop.is_some() {
            self.current.clear();
            return;
        }
        if self.limit.is_some_and(|l| self.kept >= l) {
            self.stop = Some(ReadStop::Limit);
        } else if self.kept >= self.max_lines {
            self.stop = Some(ReadStop::Lines);
        } else {
            let sep = usize::from(self.kept > 0);
            if self.out.len() as u64 + sep as u64 + len > self.max_bytes as u64 {
                if self.kept == 0 {
                    self.stop = Some(ReadStop::LineTooLong);
                    self.too_long_len = len;
                } else {
                    self.stop = Some(ReadStop::Bytes);
                }
            } else {
                if sep == 1 {
                    self.out.push(b'\n');
                }
                self.out.extend_from_slice(&self.current);
                self.kept += 1;
            }
        }
        self.current.clear();
        // Once stopped, the rest is only counted.
        if self.stop.is_some() {
            self.current = Vec::new();
        }
    }

    fn finish(&mut self) {
        if self.seen_bytes && !self.ends_with_newline && self.line >= self.start {
            self.end_line();
        }
    }

    fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.seen_bytes && !self.ends_with_newline)
    }
}

/// Draws read calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadRenderer;

impl crate::tool::ToolRenderer for ReadRenderer {
    /// How a `read` call looks: the path and the requested window.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push("read ", Style::fg(Color::Cyan).bold());
        out.add(arg_str(args, "path").unwrap_or(""), Style::fg(Color::Cyan));
        let offset = args.get("offset").and_then(Value::as_i64);
        let limit = args.get("limit").and_then(Value::as_u64);
        match (offset, limit) {
            (None, None) => {}
            (o, Some(l)) => {
                let from = o.unwrap_or(1).max(1);
                out.add(
                    // Saturating: both numbers come from the model and may be huge.
                    format!(
                        ":{from}-{}",
                        from.saturating_add(i64::try_from(l).unwrap_or(i64::MAX))
                            .saturating_sub(1)
                    ),
                    Style::fg(Color::Yellow),
                );
            }
            (Some(o), None) => out.add(format!(":{}", o.max(1)), Style::fg(Color::Yellow)),
        }
        out
    }

    /// How a `read` result looks: the first lines of the text, or a note for an image.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        if !is_error && result.content.iter().any(|b| b.as_text().is_none()) {
            return Styled::plain(result.text_content());
        }
        preview(result, is_error, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &[u8], start: u64, limit: Option<u64>, chunk: usize) -> LineWindow {
        let mut w = LineWindow::new(start, limit, 3, 10);
        for part in text.chunks(chunk) {
            w.feed(part);
        }
        w.finish();
        w
    }

    #[test]
    fn window_is_independent_of_chunking() {
        for chunk in [1, 2, 3, 7, 100] {
            let w = run(b"a\nb\nc\nd\ne\n", 2, None, chunk);
            assert_eq!(w.out, b"b\nc\nd", "chunk {chunk}");
            assert_eq!(
                (w.kept, w.total_lines(), w.stop),
                (3, 5, Some(ReadStop::Lines))
            );
            let w = run(b"a\nbbbbbbb\ncccc", 1, None, chunk);
            assert_eq!(w.out, b"a\nbbbbbbb");
            assert_eq!(w.stop, Some(ReadStop::Bytes));
            assert_eq!(w.total_lines(), 3);
            let w = run(b"aaaaaaaaaaaaaaaaa\nb", 1, None, chunk);
            assert_eq!((w.stop, w.too_long_len), (Some(ReadStop::LineTooLong), 17));
            let w = run(b"a\nb\nc", 1, Some(2), chunk);
            assert_eq!(
                (w.out.as_slice(), w.stop),
                (&b"a\nb"[..], Some(ReadStop::Limit))
            );
            let w = run(b"a\nb", 1, Some(2), chunk);
            assert_eq!((w.out.as_slice(), w.stop), (&b"a\nb"[..], None));
        }
    }
}
