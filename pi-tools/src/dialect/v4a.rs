//! The V4A patch language, read: the envelope Codex and OpenAI's coding models write
//! (`*** Begin Patch` … `*** End Patch`, with `*** Add File:`, `*** Delete File:` and
//! `*** Update File:` sections, a `*** Move to:` after an update, and hunks of ` `, `-` and
//! `+` lines under `@@` headers), and the headerless diffs of the Responses `apply_patch`
//! tool's operations (an update's hunks alone, a created file's `+` lines alone).
//!
//! Reading is strict where a guess could write the wrong bytes (a line that is none of the
//! above inside a hunk is an error naming its line) and lenient where Codex is (the first
//! hunk may leave out its `@@`, an empty line in a hunk is an empty context line, the
//! envelope may end without a newline).

/// A whole patch: its file operations in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations, in order.
    pub files: Vec<FileOp>,
}

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File: path`: the file created (or replaced) with `content`.
    Add {
        /// The path as written.
        path: String,
        /// The whole content (the `+` lines, each ending in a newline).
        content: String,
    },
    /// `*** Delete File: path`.
    Delete {
        /// The path as written.
        path: String,
    },
    /// `*** Update File: path`, its hunks and where it moves to.
    Update {
        /// The path as written.
        path: String,
        /// `*** Move to:`: the new path, when the file is renamed.
        move_to: Option<String>,
        /// The hunks, in order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation is about (for a move, the old one).
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One hunk of an update: the lines it expects (context and `-` lines) and the lines it
/// puts in their place (context and `+` lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The text after `@@` (a line of the file above the hunk, such as a function's
    /// signature), when there is one.
    pub anchor: Option<String>,
    /// The context and `-` lines, joined with `\n` (no newline after the last).
    pub old: String,
    /// The context and `+` lines, joined with `\n` (no newline after the last).
    pub new: String,
    /// How many lines `new` has (0 for a hunk that only removes lines, where `new` is empty
    /// as it is for one empty line).
    pub new_lines: usize,
    /// Whether the hunk ended with `*** End of File`.
    pub end_of_file: bool,
    /// The 1-based line of the patch text where the hunk starts, for messages.
    pub line: usize,
}

/// Why a patch cannot be read: the line and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The 1-based line of the patch text.
    pub line: usize,
    /// What is wrong and how to fix it, as a sentence.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} of the patch: {}", self.line, self.message)
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Reads a whole patch, `*** Begin Patch` to `*** End Patch`.
///
/// ```
/// use pi_tools::dialect::v4a::{FileOp, parse_patch};
/// let patch = parse_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** End Patch\n").unwrap();
/// let FileOp::Update { hunks, .. } = &patch.files[0] else { panic!() };
/// assert_eq!((hunks[0].old.as_str(), hunks[0].new.as_str()), ("one\ntwo", "one\n2"));
/// ```
pub fn parse_patch(text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = split_lines(text);
    let first = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .ok_or_else(|| {
            error(
                1,
                "the patch is empty; send `*** Begin Patch`, the file sections and `*** End Patch`",
            )
        })?;
    if lines[first].trim_end() != BEGIN {
        return Err(error(
            first + 1,
            "a patch starts with `*** Begin Patch`; send the whole envelope, `*** Begin Patch` to `*** End Patch`",
        ));
    }
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(first);
    if last == first || lines[last].trim_end() != END {
        return Err(error(
            last + 1,
            "a patch ends with `*** End Patch`; send the whole envelope again with that last line",
        ));
    }
    let mut files = Vec::new();
    let mut at = first + 1;
    while at < last {
        let line = lines[at];
        if let Some(path) = line.strip_prefix(ADD) {
            let path = file_path(path, at)?;
            at += 1;
            let mut content = String::new();
            while at < last && !is_header(lines[at]) {
                let Some(added) = lines[at].strip_prefix('+') else {
                    return Err(error(
                        at + 1,
                        format!(
                            "every line of an added file starts with `+` (the file {path}); put a `+` before each line of its content"
                        ),
                    ));
                };
                content.push_str(added);
                content.push('\n');
                at += 1;
            }
            files.push(FileOp::Add { path, content });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            files.push(FileOp::Delete {
                path: file_path(path, at)?,
            });
            at += 1;
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            let path = file_path(path, at)?;
            at += 1;
            let mut move_to = None;
            if let Some(to) = lines.get(at).and_then(|l| l.strip_prefix(MOVE)) {
                move_to = Some(file_path(to, at)?);
                at += 1;
            }
            let end = (at..last).find(|&i| is_header(lines[i])).unwrap_or(last);
            let hunks = parse_hunks_at(&lines[at..end], at)?;
            if hunks.is_empty() && move_to.is_none() {
                return Err(error(
                    at + 1,
                    format!(
                        "the update of {path} has no hunk; give at least one `@@` hunk with its ` `, `-` and `+` lines"
                    ),
                ));
            }
            files.push(FileOp::Update {
                path,
                move_to,
                hunks,
            });
            at = end;
        } else if line.trim().is_empty() {
            at += 1;
        } else {
            return Err(error(
                at + 1,
                "expected a file section (`*** Add File: `, `*** Delete File: ` or `*** Update File: ` and a path)",
            ));
        }
    }
    if files.is_empty() {
        return Err(error(
            first + 1,
            "the patch has no file section; put `*** Update File: path` and its hunks between the envelope's lines",
        ));
    }
    Ok(Patch { files })
}

/// Reads the hunks of an update without the envelope (the `diff` of a Responses
/// `update_file` operation).
pub fn parse_hunks(diff: &str) -> Result<Vec<Hunk>, ParseError> {
    parse_hunks_at(&split_lines(diff), 0)
}

/// Reads a created file's content from its `+` lines (the `diff` of a Responses
/// `create_file` operation).
pub fn parse_created(diff: &str) -> Result<String, ParseError> {
    let mut content = String::new();
    for (i, line) in split_lines(diff).into_iter().enumerate() {
        match line.strip_prefix('+') {
            Some(added) => {
                content.push_str(added);
                content.push('\n');
            }
            None => {
                return Err(error(
                    i + 1,
                    "every line of a created file's diff starts with `+`; put a `+` before each line of its content",
                ));
            }
        }
    }
    Ok(content)
}

/// The lines of `text`, without their `\n` (and a `\r` before it); no last empty line for a
/// text that ends with a newline.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    lines
}

impl Hunk {
    /// A hunk opened at patch line `line` (under `@@ anchor`, or without a header), before
    /// its lines are read.
    fn opened(anchor: Option<String>, line: usize) -> Hunk {
        Hunk {
            anchor,
            old: String::new(),
            new: String::new(),
            new_lines: 0,
            end_of_file: false,
            line,
        }
    }
}

/// The hunks in `lines`, the first of which is line `offset` (0-based) of the patch.
fn parse_hunks_at(lines: &[&str], offset: usize) -> Result<Vec<Hunk>, ParseError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut current: Option<(Hunk, Vec<&str>, Vec<&str>)> = None;
    let close = |current: &mut Option<(Hunk, Vec<&str>, Vec<&str>)>,
                 hunks: &mut Vec<Hunk>|
     -> Result<(), ParseError> {
        if let Some((mut hunk, old, new)) = current.take() {
            if old.is_empty() && new.is_empty() {
                return Err(error(
                    hunk.line,
                    "the hunk has no lines; give its context and its `-` and `+` lines, or leave out its `@@`",
                ));
            }
            hunk.old = old.join("\n");
            hunk.new = new.join("\n");
            hunk.new_lines = new.len();
            hunks.push(hunk);
        }
        Ok(())
    };
    for (i, &line) in lines.iter().enumerate() {
        let number = offset + i + 1;
        if let Some(header) = line.strip_prefix("@@") {
            close(&mut current, &mut hunks)?;
            let anchor = header.trim();
            current = Some((
                Hunk::opened((!anchor.is_empty()).then(|| anchor.to_owned()), number),
                Vec::new(),
                Vec::new(),
            ));
            continue;
        }
        if line.trim_end() == END_OF_FILE {
            match current.as_mut() {
                Some((hunk, ..)) => hunk.end_of_file = true,
                None => {
                    return Err(error(
                        number,
                        "`*** End of File` ends a hunk, and no hunk came before it",
                    ));
                }
            }
            close(&mut current, &mut hunks)?;
            continue;
        }
        let (_, old, new) =
            current.get_or_insert_with(|| (Hunk::opened(None, number), Vec::new(), Vec::new()));
        match line.chars().next() {
            Some(' ') => {
                old.push(&line[1..]);
                new.push(&line[1..]);
            }
            None => {
                old.push("");
                new.push("");
            }
            Some('-') => old.push(&line[1..]),
            Some('+') => new.push(&line[1..]),
            Some(_) => {
                return Err(error(
                    number,
                    format!(
                        "`{}` is not a hunk line: each line of a hunk starts with a space (context), `-` (removed) or `+` (added); put the right one before it",
                        preview(line)
                    ),
                ));
            }
        }
    }
    close(&mut current, &mut hunks)?;
    Ok(hunks)
}

/// Whether `line` starts a file section or ends the patch.
fn is_header(line: &str) -> bool {
    [ADD, DELETE, UPDATE].iter().any(|h| line.starts_with(h)) || line.trim_end() == END
}

/// The path of a header, trimmed; an error for an empty one.
fn file_path(raw: &str, at: usize) -> Result<String, ParseError> {
    let path = raw.trim();
    if path.is_empty() {
        return Err(error(
            at + 1,
            "the header names no file; put the file's path after it",
        ));
    }
    Ok(path.to_owned())
}

/// The start of a long line, for a message.
fn preview(line: &str) -> String {
    match line.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

fn error(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}
