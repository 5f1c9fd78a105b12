//! The `edit` tool: exact, unique, non-overlapping text replacements, applied all or nothing
//! inside the file's mutation queue.
//!
//! An `oldText` is located in four stages: exactly; else through a normalisation of
//! Unicode forms, quotes, dashes, odd spaces and trailing blanks (`matching.rs`); else line by
//! line with one consistent indentation mistake forgiven, `newText` then re-indented the
//! same way (`indent.rs`, `transform.rs`); else with the blank lines of both set aside as
//! well, `newText` then placed around the file's own blank lines (`blank.rs`,
//! `blank_map.rs`). Every stage counts overlapping occurrences, and more than one is a
//! refusal. A single line is never moved to another depth: it may only be converted between
//! tabs and spaces at the tab width the file settles (`tab_width.rs`), or, where nothing
//! settles it, at the widths of 2, 4 and 8 that keep it at its depth; a conversion the
//! file's width would decide is refused only when those widths write newText differently.
//! A match through a forgiving stage whose newText is already around it, or is already in
//! the file as it was sent, looks like an edit sent again, and is refused (`stale.rs`). An
//! oldText found nowhere whose lines carry line numbers copied from tool output is matched
//! without them when they name the matched lines (`numbers.rs`, `apply/numbered.rs`); one
//! that came in a wrapper (a code fence, diff prefixes, JSON escaping, HTML entities) is
//! matched without it when both texts carry it and no other reading writes different bytes
//! (`wrappers.rs`, `apply/unwrapped.rs`). A move (another edit of the call takes away the
//! lines that make a match look already applied) is not a resend (`moves.rs`). An edit with
//! `replaceAll` replaces every exact occurrence, no forgiving stage applying
//! (`replace_all.rs`).
//!
//! Only the replaced regions change: a match locates a region, and the new
//! text is spliced into the file's original bytes, so line endings, a byte-order mark,
//! trailing spaces and typographic characters elsewhere stay exactly as they were. Each
//! written line takes the ending of the line it replaces, or of its neighbours where lines
//! are added, so a file that mixes CRLF and LF keeps its mix (`line_endings.rs`).
//! `apply.rs` does all of that in memory (the whole tool but the file IO, also public as
//! [`apply_edits`]); this file holds the tool, its arguments and its rendering, and reads
//! the file's `.editorconfig` for its tab width.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

mod apply;
mod blank;
mod blank_map;
mod blank_note;
mod diff;
mod indent;
mod indent_note;
mod line_endings;
mod lines;
mod matching;
mod moves;
mod numbers;
mod numbers_note;
mod refusal;
mod replace_all;
mod stale;
mod tab_width;
mod transform;
mod wrappers;

use crate::builtins::preview::arg_str;
use crate::builtins::results::{EditResult, EditStage, changed_lines};
use crate::builtins::sentence;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{ExecutionEnv, ToolContextExt, mutation_key, resolve_path};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};
pub use blank_note::{BlankLineAdjustment, BlankLinePlace};
pub use indent_note::{IndentAdjustment, IndentShift, IndentStyle};
pub use numbers_note::LineNumberAdjustment;

/// Arguments of `edit`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// Path of the file to edit, relative to the working directory or absolute.
    pub path: String,
    /// The replacements, each matched against the original file.
    #[schemars(length(min = 1))]
    pub edits: Vec<Replacement>,
}

impl EditArgs {
    /// Applies `edits` to `path`, all or none.
    pub fn new(path: impl Into<String>, edits: impl IntoIterator<Item = Replacement>) -> Self {
        EditArgs {
            path: path.into(),
            edits: edits.into_iter().collect(),
        }
    }
}

/// One replacement.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Replacement {
    /// The exact text to replace; it must occur exactly once in the file (or see replaceAll).
    #[serde(rename = "oldText")]
    pub old_text: String,
    /// The text to put in its place.
    #[serde(rename = "newText")]
    pub new_text: String,
    /// Replace every exact occurrence of oldText (for renames) instead of requiring exactly one.
    #[serde(
        rename = "replaceAll",
        alias = "replace_all",
        default,
        deserialize_with = "null_as_false"
    )]
    pub replace_all: bool,
}

/// A flag sent as `null` (as strict dialects send an optional one) is `false`.
fn null_as_false<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Option::<bool>::deserialize(d).map(Option::unwrap_or_default)
}

impl Replacement {
    /// Replaces `old_text`, which must occur once in the file, with `new_text`.
    pub fn new(old_text: impl Into<String>, new_text: impl Into<String>) -> Self {
        Replacement {
            old_text: old_text.into(),
            new_text: new_text.into(),
            replace_all: false,
        }
    }

    /// Replaces every exact occurrence of `old_text` with `new_text` (`replaceAll`).
    ///
    /// ```
    /// use pi_tools::builtins::edit::{Replacement, apply_edits};
    /// let edited = apply_edits("a(); a();\n", &[Replacement::all("a()", "b()")], "f").unwrap();
    /// assert_eq!(edited.content, "b(); b();\n");
    /// ```
    pub fn all(old_text: impl Into<String>, new_text: impl Into<String>) -> Self {
        Replacement {
            replace_all: true,
            ..Replacement::new(old_text, new_text)
        }
    }
}

/// What an edit did, for user interfaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditDetails {
    /// The path as resolved.
    pub path: String,
    /// Number of regions replaced (each occurrence of a `replaceAll` edit counts).
    pub replacements: usize,
    /// A numbered diff (`+`/`-`/` ` then the line number: old numbers for removed lines, new
    /// numbers for the others), 4 lines of context, gaps as `...`.
    pub diff: String,
    /// A unified patch.
    pub patch: String,
    /// The first changed line, numbered in the new file.
    pub first_changed_line: Option<usize>,
    /// Whether any edit was located by a forgiving match (normalised text, adjusted
    /// indentation or blank lines, line numbers removed).
    pub fuzzy_match: bool,
    /// The edits whose indentation was adjusted, and how (absent when none was).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indentation: Vec<IndentAdjustment>,
    /// The edits whose oldText matched once blank lines were set aside, and where its blank
    /// lines differed from the file's (absent when none did).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blank_lines: Vec<BlankLineAdjustment>,
    /// The edits whose oldText matched once the line numbers copied into it were removed
    /// (absent when none did).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub line_numbers: Vec<LineNumberAdjustment>,
    /// The `replaceAll` edits and how many occurrences each replaced (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced_all: Vec<ReplacedAll>,
    /// The edits whose texts were found only once the wrapper they came in (a code fence,
    /// diff prefixes, JSON escaping, HTML entities) was removed (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wrappers: Vec<WrapperRemoved>,
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
        let mut edit = serde_json::json!({ "oldText": old, "newText": new });
        if let Some(all) = obj.remove("replaceAll") {
            edit["replaceAll"] = all;
        }
        obj.insert("edits".into(), serde_json::json!([edit]));
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

/// The largest file a call may change: `[tool.edit] max_file_bytes` when the call runs with
/// edit's configuration (edit and the tools that stand for it do), else
/// [`DEFAULT_MAX_FILE_BYTES`].
pub fn max_file_bytes(ctx: &ToolContext) -> u64 {
    ctx.tool_config::<EditConfig>()
        .and_then(|c| c.max_file_bytes)
        .unwrap_or(DEFAULT_MAX_FILE_BYTES)
}

/// The refusal of a file over the limit, the same from every tool that edits files: the
/// limit, and how to change the file anyway or raise it.
///
/// ```
/// use pi_tools::builtins::edit::too_large;
/// assert_eq!(
///     too_large("big.txt", 10),
///     "big.txt is larger than edit's limit of 10 bytes, so it was not read. Change it with bash (e.g. sed), or raise [tool.edit] max_file_bytes in the configuration."
/// );
/// ```
pub fn too_large(shown: &str, limit: u64) -> String {
    format!(
        "{shown} is larger than edit's limit of {limit} bytes, so it was not read. Change it with bash (e.g. sed), or raise [tool.edit] max_file_bytes in the configuration."
    )
}

/// Edits a file. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "edit",
    examples = [r#"{"path": "src/config.rs", "edits": [{"oldText": "let retries = 3;", "newText": "let retries = 5;"}]}"#],
    label = "Edit",
    description = "Edit a file by replacing exact text. Each edit's oldText must match exactly one place in the file (whitespace and indentation included) and edits must not overlap; all edits are checked against the original file and applied together, or none is. Use several edits in one call to change several places of one file, or replaceAll: true on an edit to replace every exact occurrence of its oldText (for renames).",
    snippet = "Replace exact text in a file (one or more non-overlapping edits)",
    guidelines = ["Read a file before editing it, and copy oldText from what you read.",
    "Keep oldText short but unique: include just enough surrounding lines to identify the place.",
    "Put all changes to one file in a single edit call with several edits."],
    renderer = EditRenderer,
    output = EditResult,
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
        max_bytes: max_file_bytes(ctx),
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

/// What one edit call changed, kept from the change of the file for the result.
struct EditOutcome {
    /// How many edits were applied.
    replacements: usize,
    diff: EditDiff,
    /// Whether a forgiving match was used.
    fuzzy: bool,
    indentation: Vec<IndentAdjustment>,
    blank_lines: Vec<BlankLineAdjustment>,
    line_numbers: Vec<LineNumberAdjustment>,
    replaced_all: Vec<ReplacedAll>,
    wrappers: Vec<WrapperRemoved>,
    /// How many edits the call had (notes name them by index when there were several).
    edits: usize,
    /// How each edit was located.
    stages: Vec<EditStage>,
}

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
        let hints = FileHints {
            tab_width: editorconfig_tab_width(&*self.env, &self.path).await,
        };
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
                let edited = apply_edits_with(&text, &edits, &shown, hints).map_err(refuse)?;
                drop(text);
                if cancel.is_cancelled() {
                    return Err(refuse(ToolError::new(format!(
                        "The edit of {shown} was cancelled before anything was written."
                    ))));
                }
                *outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(EditOutcome {
                    replacements: edited.replacements,
                    diff: edited.diff,
                    fuzzy: edited.fuzzy,
                    indentation: edited.indentation,
                    blank_lines: edited.blank_lines,
                    line_numbers: edited.line_numbers,
                    replaced_all: edited.replaced_all,
                    wrappers: edited.wrappers,
                    edits: edits.len(),
                    stages: edited.stages,
                });
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
                    std::io::ErrorKind::FileTooLarge => {
                        ToolError::new(too_large(&shown, self.max_bytes))
                    }
                    _ => ToolError::new(format!("Could not edit {shown}: {}", sentence(&e))),
                }
            })?;
        let Some(outcome) = outcome
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return Err(ToolError::new(format!(
                "The edit of {shown} finished without a result; read the file to see its state."
            )));
        };
        let result = EditResult {
            path: self.path.display().to_string(),
            changed_lines: changed_lines(&outcome.diff.patch),
            diff: outcome.diff.patch.clone(),
            edits: outcome.stages.clone(),
        };
        ToolOutput::text(result_text(&outcome, &shown))
            .with_details(EditDetails {
                path: self.path.display().to_string(),
                replacements: outcome.replacements,
                diff: outcome.diff.numbered,
                patch: outcome.diff.patch,
                first_changed_line: outcome.diff.first_changed_line,
                fuzzy_match: outcome.fuzzy,
                indentation: outcome.indentation,
                blank_lines: outcome.blank_lines,
                line_numbers: outcome.line_numbers,
                replaced_all: outcome.replaced_all,
                wrappers: outcome.wrappers,
            })
            .with_structured(&result)
    }
}

/// The result text: how many blocks were replaced, then one sentence per adjustment, in
/// the order of the edits.
fn result_text(outcome: &EditOutcome, shown: &str) -> String {
    let n = outcome.replacements;
    let mut message = format!(
        "Successfully replaced {n} block{} in {shown}.",
        if n == 1 { "" } else { "s" }
    );
    let indentation = outcome
        .indentation
        .iter()
        .map(|a| (a.edit, "indentation adjusted", &a.note));
    let blank_lines = outcome
        .blank_lines
        .iter()
        .map(|a| (a.edit, "blank lines adjusted", &a.note));
    let line_numbers = outcome
        .line_numbers
        .iter()
        .map(|a| (a.edit, "line numbers removed", &a.note));
    let wrappers = outcome
        .wrappers
        .iter()
        .map(|w| (w.edit, "a wrapper removed", &w.note));
    let mut notes: Vec<(usize, &str, &String)> = wrappers
        .chain(line_numbers)
        .chain(indentation)
        .chain(blank_lines)
        .collect();
    notes.sort_by_key(|&(edit, ..)| edit);
    let one_edit = outcome.edits == 1 && outcome.replaced_all.is_empty();
    for (edit, what, note) in notes {
        if one_edit {
            message.push_str(&format!("\nApplied with {what}: {note}"));
        } else {
            message.push_str(&format!("\nedits[{edit}] was applied with {what}: {note}"));
        }
    }
    for all in &outcome.replaced_all {
        let (count, s) = (all.count, if all.count == 1 { "" } else { "s" });
        message.push_str(&format!(
            "\nedits[{}] (replaceAll) replaced {count} occurrence{s} of its oldText.",
            all.edit
        ));
    }
    message
}

pub use apply::{Edited, FileHints, apply_edits, apply_edits_with};
pub use replace_all::ReplacedAll;
pub use wrappers::{Wrapper, WrapperRemoved};

/// The tab width the `.editorconfig` files above `path` set for it, read through `env`
/// (nearest first, up to one that says `root = true`); `None` when none does or none can be
/// read.
pub(crate) async fn editorconfig_tab_width(
    env: &dyn ExecutionEnv,
    path: &std::path::Path,
) -> Option<usize> {
    /// More than any real .editorconfig; a larger one is not read.
    const MAX_BYTES: usize = 256 << 10;
    let mut configs = Vec::new();
    // A confined environment's files say nothing about what lies above its roots.
    let roots = env.allowed_roots();
    let inside = |candidate: &std::path::Path| {
        roots.is_empty() || roots.iter().any(|root| candidate.starts_with(root))
    };
    for candidate in tab_width::editorconfig_candidates(path)
        .into_iter()
        .filter(|c| inside(c))
    {
        let Ok(head) = env.read_head(&candidate, MAX_BYTES).await else {
            continue;
        };
        let Ok(text) = String::from_utf8(head.bytes) else {
            continue;
        };
        let config = tab_width::EditorConfig {
            dir: candidate
                .parent()
                .map(std::path::Path::to_path_buf)
                .unwrap_or_default(),
            text,
        };
        let root = config.is_root();
        configs.push(config);
        if root {
            break;
        }
    }
    tab_width::editorconfig_width(&configs, path)
}
pub use diff::EditDiff;

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
