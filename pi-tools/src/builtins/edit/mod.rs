//! The `edit` tool: exact, unique, non-overlapping text replacements, applied all or nothing
//! inside the file's mutation queue.
//!
//! An `oldText` is located in three stages: exactly; else through a normalisation of
//! Unicode forms, quotes, dashes, odd spaces and trailing blanks (`matching.rs`); else line by
//! line with one consistent indentation mistake forgiven, `newText` then re-indented the
//! same way (`indent.rs`). Only the replaced regions change: a match locates a region, and
//! the new text is spliced into the file's original bytes, so line endings, a byte-order mark,
//! trailing spaces and typographic characters elsewhere stay exactly as they were.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

mod diff;
mod indent;
mod matching;

use crate::builtins::preview::arg_str;
use crate::builtins::sentence;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{ExecutionEnv, ToolContextExt, mutation_key, resolve_path};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};
use diff::diff;
pub use indent::{IndentAdjustment, IndentShift, IndentStyle};
use indent::{IndentFit, IndentIndex, IndentMatch, default_width, locate_indented};
use matching::{LfText, LocateError, Located, SplitCharacter, closest_region, locate};

/// Arguments of `edit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// Path of the file to edit, relative to the working directory or absolute.
    pub path: String,
    /// The replacements, each matched against the original file.
    #[schemars(length(min = 1))]
    pub edits: Vec<Replacement>,
}

/// One replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Replacement {
    /// The exact text to replace; it must occur exactly once in the file.
    #[serde(rename = "oldText")]
    pub old_text: String,
    /// The text to put in its place.
    #[serde(rename = "newText")]
    pub new_text: String,
}

/// What an edit did, for user interfaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditDetails {
    /// The path as resolved.
    pub path: String,
    /// Number of replacements made.
    pub replacements: usize,
    /// A numbered diff (`+`/`-`/` ` then the line number: old numbers for removed lines, new
    /// numbers for the others), 4 lines of context, gaps as `...`.
    pub diff: String,
    /// A unified patch.
    pub patch: String,
    /// The first changed line, numbered in the new file.
    pub first_changed_line: Option<usize>,
    /// Whether any edit was located by a forgiving match (normalised text or adjusted
    /// indentation).
    pub fuzzy_match: bool,
    /// The edits whose indentation was adjusted, and how (absent when none was).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indentation: Vec<IndentAdjustment>,
}

/// Accepts the older single-replacement layout (`oldText`/`newText` beside `path`) by moving
/// it into `edits`.
pub fn prepare_arguments(mut args: Value) -> Value {
    if let Some(obj) = args.as_object_mut()
        && !obj.contains_key("edits")
        && obj.contains_key("oldText")
    {
        let old = obj.remove("oldText").unwrap_or(Value::Null);
        let new = obj.remove("newText").unwrap_or(Value::Null);
        obj.insert(
            "edits".into(),
            serde_json::json!([{ "oldText": old, "newText": new }]),
        );
    }
    args
}

/// [`prepare_arguments`] in the shape `#[tool(prepare = ...)]` takes.
fn prepare_legacy_arguments(args: Value) -> Result<Value, ToolError> {
    Ok(prepare_arguments(args))
}

/// edit's own configuration (`[tool.edit]` in the TOML file).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditConfig {
    /// Files larger than this many bytes are refused before they are read (default:
    /// [`DEFAULT_MAX_FILE_BYTES`]). An edit holds the file about twice in memory.
    #[serde(default)]
    pub max_file_bytes: Option<u64>,
}

/// The largest file edit changes unless `[tool.edit] max_file_bytes` says otherwise (64 MiB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Edits a file. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "edit",
    examples = [r#"{"path": "src/config.rs", "edits": [{"oldText": "let retries = 3;", "newText": "let retries = 5;"}]}"#],
    label = "Edit",
    description = "Edit a file by replacing exact text. Each edit's oldText must match exactly one place in the file (whitespace and indentation included) and edits must not overlap; all edits are checked against the original file and applied together, or none is. Use several edits in one call to change several places of one file.",
    snippet = "Replace exact text in a file (one or more non-overlapping edits)",
    guidelines = ["Read a file before editing it, and copy oldText from what you read.",
    "Keep oldText short but unique: include just enough surrounding lines to identify the place.",
    "Put all changes to one file in a single edit call with several edits."],
    renderer = EditRenderer,
    prepare = prepare_legacy_arguments,
    config = EditConfig,
    destructive
)]
pub async fn edit(
    ctx: &ToolContext,
    #[args] args: EditArgs,
) -> Result<ToolOutput<EditDetails>, ToolError> {
    if args.edits.is_empty() {
        return Err(ToolError::new(
            "edits is empty. Give at least one {oldText, newText} replacement.",
        ));
    }
    let env = ctx.env();
    let path = resolve_path(&*env, &args.path);
    let key = mutation_key(&*env, &path)
        .await
        .map_err(|e| ToolError::new(format!("Could not edit {}: {}", args.path, sentence(&e))))?;
    let queue = env.mutation_queue().clone();
    let job = EditJob {
        env,
        path,
        shown: args.path,
        edits: args.edits,
        // Read from the context (not a `#[config]` parameter) so `edit(ctx, args)` keeps its
        // signature for callers of the function.
        max_bytes: ctx
            .tool_config::<EditConfig>()
            .and_then(|c| c.max_file_bytes)
            .unwrap_or(DEFAULT_MAX_FILE_BYTES),
        cancel: ctx.cancellation().clone(),
    };
    queue.run(key, job.run()).await
}

struct EditJob {
    env: Arc<dyn ExecutionEnv>,
    path: PathBuf,
    shown: String,
    edits: Vec<Replacement>,
    max_bytes: u64,
    cancel: CancellationToken,
}

/// What one edit call changed: edits applied, the diff, whether a forgiving match was used,
/// and the indentation adjustments made.
type EditOutcome = (usize, EditDiff, bool, Vec<IndentAdjustment>);

/// Why the change refused to produce new content: the message for the model, carried
/// through the environment's `io::Error` untouched.
#[derive(Debug)]
struct Refused(ToolError);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Refused {}

impl EditJob {
    /// Reads, edits and replaces the file as one read-modify-write of the environment
    /// (which, locally, holds the file's lock against other processes throughout).
    async fn run(self) -> Result<ToolOutput<EditDetails>, ToolError> {
        let shown = self.shown.clone();
        let outcome: Arc<Mutex<Option<EditOutcome>>> = Arc::default();
        let change = {
            let (shown, edits, cancel, outcome) = (
                shown.clone(),
                self.edits,
                self.cancel.clone(),
                Arc::clone(&outcome),
            );
            Box::new(move |bytes: Vec<u8>| {
                let refuse = |e: ToolError| std::io::Error::other(Refused(e));
                let text = String::from_utf8(bytes).map_err(|_| {
                    refuse(ToolError::new(format!(
                        "{shown} is not UTF-8 text, so edit cannot change it safely. Use bash for binary files."
                    )))
                })?;
                let edited = apply_edits(&text, &edits, &shown).map_err(refuse)?;
                drop(text);
                if cancel.is_cancelled() {
                    return Err(refuse(ToolError::new(format!(
                        "The edit of {shown} was cancelled before anything was written."
                    ))));
                }
                *outcome.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some((edits.len(), edited.diff, edited.fuzzy, edited.indentation));
                Ok(edited.content.into_bytes())
            })
        };
        self.env
            .modify_file(&self.path, Some(self.max_bytes), change)
            .await
            .map_err(|e| {
                if let Some(Refused(err)) = e.get_ref().and_then(|inner| inner.downcast_ref()) {
                    return err.clone();
                }
                match e.kind() {
                    std::io::ErrorKind::NotFound => ToolError::new(format!(
                        "File not found: {shown}. Check the path; use write to create a new file."
                    )),
                    std::io::ErrorKind::FileTooLarge => ToolError::new(format!(
                        "{shown} is larger than edit's limit of {} bytes, so it was not read. Change it with bash (e.g. sed), or raise [tool.edit] max_file_bytes in the configuration.",
                        self.max_bytes
                    )),
                    _ => ToolError::new(format!("Could not edit {shown}: {}", sentence(&e))),
                }
            })?;
        let Some((n, diff, fuzzy, indentation)) = outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return Err(ToolError::new(format!(
                "The edit of {shown} finished without a result; read the file to see its state."
            )));
        };
        let mut message = format!(
            "Successfully replaced {n} block{} in {shown}.",
            if n == 1 { "" } else { "s" }
        );
        for adjustment in &indentation {
            if n == 1 {
                message.push_str("\nApplied with indentation adjusted: ");
            } else {
                message.push_str(&format!(
                    "\nedits[{}] was applied with indentation adjusted: ",
                    adjustment.edit
                ));
            }
            message.push_str(&adjustment.note);
        }
        Ok(ToolOutput::text(message).with_details(EditDetails {
            path: self.path.display().to_string(),
            replacements: n,
            diff: diff.numbered,
            patch: diff.patch,
            first_changed_line: diff.first_changed_line,
            fuzzy_match: fuzzy,
            indentation,
        }))
    }
}

pub use diff::EditDiff;

/// The outcome of applying edits to a file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The new content of the file.
    pub content: String,
    /// The diffs of the change (computed on the LF-normalised text).
    pub diff: EditDiff,
    /// Whether any edit was located by a forgiving match (normalised text or adjusted
    /// indentation).
    pub fuzzy: bool,
    /// The edits whose oldText matched once its indentation was adjusted, and how.
    pub indentation: Vec<IndentAdjustment>,
}

/// Applies all edits to the text of a file, in memory: each `oldText` located (exactly, else
/// through normalisation, else line by line with one consistent indentation mistake
/// forgiven) in the original, checked for uniqueness and overlap, and its `newText` (its
/// indentation transformed like oldText's, when that was adjusted) spliced into the original
/// text, whose BOM, line endings and other bytes stay as they were. All or nothing: the error
/// (naming the file as `shown`) says why no edit was applied.
///
/// This is the whole of `edit` except the file IO, for tools that keep text elsewhere.
pub fn apply_edits(
    original: &str,
    edits: &[Replacement],
    shown: &str,
) -> Result<Edited, ToolError> {
    let (bom, body) = match original.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", original),
    };
    let ending = match body.find('\n') {
        Some(i) if i > 0 && body.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    let lf = LfText::new(body);
    let label = |i: usize| {
        if edits.len() > 1 {
            format!("edits[{i}].oldText")
        } else {
            "oldText".to_string()
        }
    };

    let mut indent_cache = None;
    let mut located = Vec::with_capacity(edits.len());
    let mut indentation = Vec::new();
    for (i, edit) in edits.iter().enumerate() {
        let old = edit.old_text.replace("\r\n", "\n");
        let new_text = edit.new_text.replace("\r\n", "\n");
        if old.is_empty() {
            return Err(ToolError::new(format!(
                "{} is empty. Give the exact text to replace, with enough surrounding lines to make it unique.",
                label(i)
            )));
        }
        let split = match locate(&lf.text, &old) {
            Ok(at) => {
                located.push((i, at, new_text));
                continue;
            }
            Err(LocateError::Ambiguous(count)) => {
                return Err(ToolError::new(format!(
                    "{} matches {count} places in {shown}; it must match exactly one. Add surrounding lines to make it unique.",
                    label(i)
                )));
            }
            Err(LocateError::NotFound) => None,
            Err(LocateError::SplitsCharacter(split)) => Some(split),
        };
        let index = indent_cache.get_or_insert_with(|| IndentIndex::new(&lf.text));
        let fit = match (locate_indented(index, &old), split) {
            (IndentMatch::Fit(fit), _) => fit,
            (IndentMatch::Ambiguous(lines), _) => {
                return Err(ToolError::new(ambiguous_indented(&label(i), &lines, shown)));
            }
            (_, Some(split)) => {
                return Err(ToolError::new(splits_character(&label(i), &split, shown)));
            }
            (IndentMatch::Inconsistent(windows, one_line), None) => {
                let near = Some((windows[0], one_line));
                return Err(ToolError::new(not_found(
                    &label(i),
                    &lf.text,
                    &old,
                    shown,
                    near,
                )));
            }
            (IndentMatch::NotFound, None) => {
                return Err(ToolError::new(not_found(
                    &label(i),
                    &lf.text,
                    &old,
                    shown,
                    None,
                )));
            }
        };
        let new_text = fit.transform.apply_to_text(&new_text).map_err(|line| {
            ToolError::new(too_shallow(&new_label(edits.len(), i), line, &fit, shown))
        })?;
        if !fit.is_identity() {
            indentation.push(fit.adjustment(i, default_width(index)));
        }
        let at = Located {
            start: fit.start,
            end: fit.end,
            fuzzy: true,
        };
        located.push((i, at, new_text));
    }
    located.sort_by_key(|(_, at, _)| at.start);
    for pair in located.windows(2) {
        let ((a, first, _), (b, second, _)) = (&pair[0], &pair[1]);
        let (a, b) = (*a, *b);
        if second.start < first.end {
            let (a, b) = (a.min(b), a.max(b));
            return Err(ToolError::new(format!(
                "edits[{a}] and edits[{b}] overlap in {shown}. Merge them into one edit, or make them cover separate parts of the file."
            )));
        }
    }

    // Splice into the original bytes; the diff needs only the changed lines and a few
    // around them, so only that window of the new LF text is built.
    let mut content = String::with_capacity(original.len() + 64);
    content.push_str(bom);
    let mut orig_pos = 0;
    for (_, at, new_text) in &located {
        let (orig_start, orig_end) = (lf.original_offset(at.start), lf.original_offset(at.end));
        content.push_str(&body[orig_pos..orig_start]);
        if ending == "\n" {
            content.push_str(new_text);
        } else {
            content.push_str(&new_text.replace('\n', ending));
        }
        orig_pos = orig_end;
    }
    content.push_str(&body[orig_pos..]);

    if content == original {
        return Err(ToolError::new(format!(
            "No changes made to {shown}: the replacements produce the same content. Make newText differ from oldText."
        )));
    }
    Ok(Edited {
        content,
        diff: diff_of(&lf.text, &located, shown),
        fuzzy: located.iter().any(|(_, at, _)| at.fuzzy),
        indentation,
    })
}

/// Lines kept around the edited region for the diff: more than the diff's own context, so
/// the diff of the window is the diff of the whole file.
const DIFF_MARGIN_LINES: usize = 8;

/// The diff of `text` (LF-only) with the located replacements (sorted, not overlapping),
/// built from a window of whole lines around them.
fn diff_of(text: &str, located: &[(usize, Located, String)], shown: &str) -> EditDiff {
    let (Some(first), Some(last)) = (located.first(), located.last()) else {
        return diff(text, text, shown);
    };
    let bytes = text.as_bytes();
    // The start of the first change's line, then DIFF_MARGIN_LINES lines back.
    let line_start = |at: usize| memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |nl| nl + 1);
    let mut from = line_start(first.1.start);
    for _ in 0..DIFF_MARGIN_LINES {
        if from == 0 {
            break;
        }
        from = line_start(from - 1);
    }
    // Forward DIFF_MARGIN_LINES line ends from the last change.
    let mut to = last.1.end;
    for _ in 0..=DIFF_MARGIN_LINES {
        match memchr::memchr(b'\n', &bytes[to..]) {
            Some(nl) => to += nl + 1,
            None => {
                to = bytes.len();
                break;
            }
        }
    }
    let mut new_window = String::with_capacity(to - from + 64);
    let mut pos = from;
    for (_, at, new_text) in located {
        new_window.push_str(&text[pos..at.start]);
        new_window.push_str(new_text);
        pos = at.end;
    }
    new_window.push_str(&text[pos..to]);
    let lines_before = memchr::memchr_iter(b'\n', &bytes[..from]).count();
    let lines_after = text[to..].split_inclusive('\n').count();
    diff::diff_window(
        &text[from..to],
        &new_window,
        shown,
        diff::Window {
            lines_before,
            lines_after,
        },
    )
}

fn new_label(count: usize, i: usize) -> String {
    if count > 1 {
        format!("edits[{i}].newText")
    } else {
        "newText".to_string()
    }
}

/// Not found at all: the rule, a note on windows whose indentation was almost right, and
/// the most similar part of the file.
fn not_found(
    label: &str,
    text: &str,
    old: &str,
    shown: &str,
    inconsistent: Option<((usize, usize), bool)>,
) -> String {
    let mut message = format!(
        "Could not find {label} in {shown}. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it."
    );
    if let Some(((first, last), one_line)) = inconsistent {
        let lines = if first == last {
            format!("Line {first} of the file has")
        } else {
            format!("Lines {first}-{last} of the file have")
        };
        let why = if one_line {
            "is not the same whitespace with some added or removed (tabs and spaces are converted only in blocks of several lines)"
        } else {
            "differs from line to line in a way no single shift or tabs-for-spaces conversion explains"
        };
        message.push_str(&format!(
            " {lines} the same text, but the indentation {why}; copy the indentation from the file."
        ));
    }
    if let Some(region) = closest_region(text, old) {
        message.push_str("\n\nThe most similar part of the file:\n");
        message.push_str(&region);
    }
    message
}

fn ambiguous_indented(label: &str, lines: &[usize], shown: &str) -> String {
    let named = lines
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{label} does not match {shown} exactly, and once its indentation is set aside it matches several places (starting at lines {named}); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique."
    )
}

fn too_shallow(new_label: &str, line: usize, fit: &IndentFit, shown: &str) -> String {
    format!(
        "{new_label} could not be re-indented for {shown}: {}, but line {line} of {new_label} is indented too little to be adjusted the same way. Indent newText the way oldText is indented, or copy the indentation from the file exactly.",
        fit.mistake()
    )
}

fn splits_character(label: &str, split: &SplitCharacter, shown: &str) -> String {
    let (which, advice) = if split.at_start {
        ("begins", "Start")
    } else {
        ("ends", "End")
    };
    format!(
        "{label} matches {shown} only if it {which} inside the character \"{}\" on line {}, which reads as \"{}\"; edit does not replace part of a character. {advice} {label} before or after that character, copying it from the file as it is.",
        split.character, split.line, split.reads_as
    )
}

/// Draws edit calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditRenderer;

impl crate::tool::ToolRenderer for EditRenderer {
    /// How an `edit` call looks: the path and the number of replacements.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push("edit ", Style::fg(Color::Cyan).bold());
        out.add(arg_str(args, "path").unwrap_or(""), Style::fg(Color::Cyan));
        if let Some(n) = args.get("edits").and_then(Value::as_array).map(Vec::len)
            && n > 1
        {
            out.add(format!(" ({n} edits)"), Style::fg(Color::Gray));
        }
        out
    }

    /// How an `edit` result looks: the numbered diff, removed lines red and added lines green;
    /// an error in red.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        if is_error {
            return Styled::new().push(result.text_content(), Style::fg(Color::Red));
        }
        let Some(diff) = result.details.get("diff").and_then(Value::as_str) else {
            return Styled::plain(result.text_content());
        };
        let mut out = Styled::new();
        for (i, line) in diff.lines().enumerate() {
            if i > 0 {
                out.add("\n", Style::PLAIN);
            }
            let style = match line.chars().next() {
                Some('+') => Style::fg(Color::Green),
                Some('-') => Style::fg(Color::Red),
                _ => Style::fg(Color::Gray),
            };
            out.add(line, style);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(old: &str, new: &str) -> Replacement {
        Replacement {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    /// The diff of the window around the edits is the diff of the whole file, wherever the
    /// edits are: at either end, far apart, across line ends, with or without a final
    /// newline.
    #[test]
    fn the_windowed_diff_is_the_whole_files_diff() {
        for ending in ["\n", ""] {
            let file: String = (1..=60)
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
                .join("\n")
                + ending;
            let at = |needle: &str| file.find(needle).unwrap();
            let cases: Vec<Vec<(usize, usize, &str)>> = vec![
                vec![(0, 1, "L")],
                vec![(at("line 30"), at("line 30") + 7, "changed")],
                vec![(at("line 2\n"), at("line 2\n") + 7, "")],
                vec![(at("line 60"), file.len(), "the end\nand more")],
                vec![(0, 6, "x"), (at("line 59"), at("line 59") + 4, "y")],
                vec![(at("line 10"), at("line 13"), "a\nb\nc\nd\n")],
                vec![(at("line 5\n") + 6, at("line 5\n") + 7, "")],
            ];
            for edits in cases {
                let located: Vec<(usize, Located, String)> = edits
                    .iter()
                    .enumerate()
                    .map(|(i, &(start, end, new))| {
                        let at = Located {
                            start,
                            end,
                            fuzzy: false,
                        };
                        (i, at, new.to_owned())
                    })
                    .collect();
                let mut whole = String::new();
                let mut pos = 0;
                for (_, at, new) in &located {
                    whole.push_str(&file[pos..at.start]);
                    whole.push_str(new);
                    pos = at.end;
                }
                whole.push_str(&file[pos..]);
                assert_eq!(
                    diff_of(&file, &located, "f"),
                    diff(&file, &whole, "f"),
                    "{edits:?} with ending {ending:?}"
                );
            }
        }
    }

    #[test]
    fn splices_into_original_bytes() {
        let original = "\u{FEFF}a  \r\nsay \u{201C}hi\u{201D}\r\nend\n";
        let out = apply_edits(original, &[r("say \"hi\"", "say \"bye\"")], "f").unwrap();
        assert_eq!(out.content, "\u{FEFF}a  \r\nsay \"bye\"\r\nend\n");
        assert!(out.fuzzy);
    }
}
