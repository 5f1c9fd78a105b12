//! The `edit` tool: exact, unique, non-overlapping text replacements, applied all or nothing
//! inside the file's mutation queue.
//!
//! Only the replaced regions change: a fuzzy match locates a region, and the new text is
//! spliced into the file's original bytes, so line endings, a byte-order mark, trailing
//! spaces and typographic characters elsewhere stay exactly as they were.

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

mod diff;
mod matching;

use crate::builtins::preview::arg_str;
use crate::builtins::sentence;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{ExecutionEnv, ToolContextExt, mutation_key, resolve_path};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};
use diff::diff;
use matching::{LfText, LocateError, closest_region, locate};

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
    /// Whether any edit was located by the forgiving (fuzzy) match.
    pub fuzzy_match: bool,
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
        cancel: ctx.cancellation().clone(),
    };
    queue.run(key, job.run()).await
}

struct EditJob {
    env: Arc<dyn ExecutionEnv>,
    path: PathBuf,
    shown: String,
    edits: Vec<Replacement>,
    cancel: CancellationToken,
}

impl EditJob {
    async fn run(self) -> Result<ToolOutput<EditDetails>, ToolError> {
        let shown = &self.shown;
        let bytes = self
            .env
            .read_file(&self.path)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => ToolError::new(format!(
                    "File not found: {shown}. Check the path; use write to create a new file."
                )),
                _ => ToolError::new(format!("Could not read {shown}: {}", sentence(&e))),
            })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            ToolError::new(format!(
                "{shown} is not UTF-8 text, so edit cannot change it safely. Use bash for binary files."
            ))
        })?;
        let edited = apply_edits(&text, &self.edits, shown)?;
        if self.cancel.is_cancelled() {
            return Err(ToolError::new(format!(
                "The edit of {shown} was cancelled before anything was written."
            )));
        }
        self.env
            .write_file(&self.path, edited.content.into_bytes())
            .await
            .map_err(|e| ToolError::new(format!("Could not write {shown}: {}", sentence(&e))))?;
        let n = self.edits.len();
        let message = format!(
            "Successfully replaced {n} block{} in {shown}.",
            if n == 1 { "" } else { "s" }
        );
        Ok(ToolOutput::text(message).with_details(EditDetails {
            path: self.path.display().to_string(),
            replacements: n,
            diff: edited.diff.numbered,
            patch: edited.diff.patch,
            first_changed_line: edited.diff.first_changed_line,
            fuzzy_match: edited.fuzzy,
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
    /// Whether any edit was located by the fuzzy match.
    pub fuzzy: bool,
}

/// Applies all edits to the text of a file, in memory: each `oldText` located (exactly, else
/// fuzzily) in the original, checked for uniqueness and overlap, and its `newText` spliced
/// into the original text, whose BOM, line endings and other bytes stay as they were. All or
/// nothing: the error (naming the file as `shown`) says why no edit was applied.
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

    let mut fuzzy_cache = None;
    let mut located = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let old = edit.old_text.replace("\r\n", "\n");
        if old.is_empty() {
            return Err(ToolError::new(format!(
                "{} is empty. Give the exact text to replace, with enough surrounding lines to make it unique.",
                label(i)
            )));
        }
        match locate(&lf.text, &mut fuzzy_cache, &old) {
            Ok(at) => located.push((i, at)),
            Err(LocateError::NotFound) => {
                let mut message = format!(
                    "Could not find {} in {shown}. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it.",
                    label(i)
                );
                if let Some(region) = closest_region(&lf.text, &old) {
                    message.push_str("\n\nThe most similar part of the file:\n");
                    message.push_str(&region);
                }
                return Err(ToolError::new(message));
            }
            Err(LocateError::Ambiguous(count)) => {
                return Err(ToolError::new(format!(
                    "{} matches {count} places in {shown}; it must match exactly one. Add surrounding lines to make it unique.",
                    label(i)
                )));
            }
        }
    }
    located.sort_by_key(|(_, at)| at.start);
    for pair in located.windows(2) {
        let ((a, first), (b, second)) = (pair[0], pair[1]);
        if second.start < first.end {
            let (a, b) = (a.min(b), a.max(b));
            return Err(ToolError::new(format!(
                "edits[{a}] and edits[{b}] overlap in {shown}. Merge them into one edit, or make them cover separate parts of the file."
            )));
        }
    }

    // Splice into the original bytes, and alongside into the LF text for the diff.
    let mut content = String::with_capacity(original.len() + 64);
    let mut new_lf = String::with_capacity(lf.text.len() + 64);
    content.push_str(bom);
    let (mut orig_pos, mut lf_pos) = (0, 0);
    for (i, at) in &located {
        let new_text = edits[*i].new_text.replace("\r\n", "\n");
        let (orig_start, orig_end) = (lf.original_offset(at.start), lf.original_offset(at.end));
        content.push_str(&body[orig_pos..orig_start]);
        if ending == "\n" {
            content.push_str(&new_text);
        } else {
            content.push_str(&new_text.replace('\n', ending));
        }
        new_lf.push_str(&lf.text[lf_pos..at.start]);
        new_lf.push_str(&new_text);
        orig_pos = orig_end;
        lf_pos = at.end;
    }
    content.push_str(&body[orig_pos..]);
    new_lf.push_str(&lf.text[lf_pos..]);

    if content == original {
        return Err(ToolError::new(format!(
            "No changes made to {shown}: the replacements produce the same content. Make newText differ from oldText."
        )));
    }
    Ok(Edited {
        content,
        diff: diff(&lf.text, &new_lf, shown),
        fuzzy: located.iter().any(|(_, at)| at.fuzzy),
    })
}

/// How an `edit` call looks: the path and the number of replacements.
pub fn render_call(args: &Value) -> Styled {
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
pub fn render_result(result: &ToolResult, is_error: bool) -> Styled {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn r(old: &str, new: &str) -> Replacement {
        Replacement {
            old_text: old.into(),
            new_text: new.into(),
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

/// Draws edit calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditRenderer;

impl crate::ToolRenderer for EditRenderer {
    fn render_call(&self, args: &serde_json::Value) -> crate::tool::render::Styled {
        render_call(args)
    }

    fn render_result(
        &self,
        result: &crate::ToolResult,
        is_error: bool,
    ) -> crate::tool::render::Styled {
        render_result(result, is_error)
    }
}
