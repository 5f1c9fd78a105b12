//! `str_replace_based_edit_tool`: Anthropic's schema-less text editor
//! (`text_editor_20250728`), served by the built-ins. Each command is the built-in the
//! model would otherwise call, run in this call with the same environment, confinement and
//! mutation queue: `view` is read (or ls for a directory), `create` is write, `str_replace`
//! is edit (one replacement, refused as edit refuses it when `old_str` is found more than
//! once), and `insert` puts lines after a line number inside the file's mutation queue.
//! The policy judges each command as the built-in it stands for (see
//! [`crate::policy`]), and `[tool.edit] max_file_bytes` limits the files it changes. Off
//! by default; `[tools] shapes = "native"` offers it to Anthropic models in place of edit
//! and write.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::builtins::edit::{EditArgs, Replacement, edit, max_file_bytes, too_large};
use crate::builtins::ls::{LsArgs, ls};
use crate::builtins::read::{ReadArgs, read};
use crate::builtins::write::{WriteArgs, write};
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{ToolContextExt, mutation_key, resolve_path};
use crate::text::sentence;
use crate::tool;
use crate::tool::IntoToolResult;

/// The text editor's commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditorCommand {
    /// Show a file (or a range of its lines) or list a directory.
    View,
    /// Create or overwrite a file with `file_text`.
    Create,
    /// Replace `old_str`, found exactly once, with `new_str`.
    StrReplace,
    /// Insert `insert_text` after line `insert_line` (0: at the start).
    Insert,
}

/// Arguments of `str_replace_based_edit_tool`, as Anthropic's models send them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TextEditorArgs {
    /// What to do.
    pub command: EditorCommand,
    /// The file or directory.
    pub path: String,
    /// `view`: `[first, last]` lines, counting from 1; `last` -1 reads to the end.
    #[serde(default)]
    pub view_range: Option<Vec<i64>>,
    /// `create`: the file's whole content.
    #[serde(default)]
    pub file_text: Option<String>,
    /// `str_replace`: the exact text to replace, found exactly once.
    #[serde(default)]
    pub old_str: Option<String>,
    /// `str_replace`: the text to put in its place (absent: removed).
    #[serde(default)]
    pub new_str: Option<String>,
    /// `insert`: the line after which the text goes (0: before the first line).
    #[serde(default)]
    pub insert_line: Option<u64>,
    /// `insert`: the text to insert.
    #[serde(default)]
    pub insert_text: Option<String>,
}

/// Anthropic's text editor, served by read, ls, write and edit. Registered as a built-in
/// tool by `#[tool]`.
#[tool(
    name = "str_replace_based_edit_tool",
    examples = [r#"{"command": "str_replace", "path": "src/config.rs", "old_str": "let retries = 3;", "new_str": "let retries = 5;"}"#],
    label = "Text editor",
    description = "View, create and edit files. Commands: view (a file, with view_range [first, last] for some lines, or a directory), create (file_text is the whole file), str_replace (old_str must be found exactly once; it is replaced by new_str), insert (insert_text goes after line insert_line; 0 is before the first line).",
    snippet = "View, create and edit files (Anthropic's text editor)",
    guidelines = ["View a file before editing it, and copy old_str from what you viewed."],
    destructive
)]
pub async fn str_replace_based_edit_tool(
    ctx: &ToolContext,
    #[args] args: TextEditorArgs,
) -> Result<ToolResult, ToolError> {
    let path = args.path.clone();
    match args.command {
        EditorCommand::View => view(ctx, args).await,
        EditorCommand::Create => {
            let content = required(args.file_text, "file_text", "create")?;
            write(ctx, WriteArgs::new(path, content))
                .await?
                .into_tool_result()
        }
        EditorCommand::StrReplace => {
            let old = required(args.old_str, "old_str", "str_replace")?;
            let new = args.new_str.unwrap_or_default();
            // edit's refusals, in the names the model sees.
            edit(ctx, EditArgs::new(path, [Replacement::new(old, new)]))
                .await
                .map_err(|e| {
                    ToolError::new(
                        e.message()
                            .replace("oldText", "old_str")
                            .replace("newText", "new_str"),
                    )
                })?
                .into_tool_result()
        }
        EditorCommand::Insert => {
            let line = required(args.insert_line, "insert_line", "insert")?;
            let text = required(args.insert_text.or(args.new_str), "insert_text", "insert")?;
            insert(ctx, &path, line, text).await
        }
    }
}

/// `view`: ls for a directory, read for a file (a `view_range` as offset and limit).
async fn view(ctx: &ToolContext, args: TextEditorArgs) -> Result<ToolResult, ToolError> {
    let env = ctx.env();
    let resolved = resolve_path(&*env, &args.path);
    if env.metadata(&resolved).await.is_ok_and(|m| m.is_dir) {
        let listed = LsArgs {
            path: Some(args.path),
            limit: None,
        };
        return ls(ctx, listed).await?.into_tool_result();
    }
    let mut read_args = ReadArgs::new(args.path);
    if let Some(range) = args.view_range {
        let [first, last] = range[..] else {
            return Err(ToolError::new(
                "view_range must be two line numbers, [first, last]; use -1 as last to read to the end.",
            ));
        };
        if first < 1 || (last != -1 && last < first) {
            return Err(ToolError::new(format!(
                "view_range [{first}, {last}] is not a range of lines: first counts from 1 and last is at least first, or -1 for the end."
            )));
        }
        read_args.offset = Some(first);
        read_args.limit = u64::try_from(last - first + 1).ok().filter(|_| last != -1);
    }
    read(ctx, read_args).await?.into_tool_result()
}

/// `insert`: `text` after line `line` (0: at the start), in the file's mutation queue, the
/// new lines ending as the file's lines do.
async fn insert(
    ctx: &ToolContext,
    shown: &str,
    line: u64,
    text: String,
) -> Result<ToolResult, ToolError> {
    let env = ctx.env();
    let path = resolve_path(&*env, shown);
    let key = mutation_key(&*env, &path)
        .await
        .map_err(|e| ToolError::new(format!("Could not edit {shown}: {}", sentence(&e))))?;
    let queue = env.mutation_queue().clone();
    let max_bytes = max_file_bytes(ctx);
    let shown_owned = shown.to_owned();
    let target = path.clone();
    let done = queue
        .run(key, async move {
            let refused = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
            let slot = std::sync::Arc::clone(&refused);
            let change = Box::new(move |bytes: Vec<u8>| {
                let refuse = |message: String| {
                    if let Ok(mut s) = slot.lock() {
                        *s = Some(message.clone());
                    }
                    std::io::Error::other(message)
                };
                let original = String::from_utf8(bytes).map_err(|_| {
                    refuse(format!(
                        "{shown_owned} is not UTF-8 text, so insert cannot change it safely. Use bash for binary files."
                    ))
                })?;
                insert_lines(&original, line, &text)
                    .map(String::into_bytes)
                    .map_err(|m| refuse(format!("{m} in {shown_owned}")))
            });
            let result = env
                .modify_file(&target, Some(max_bytes), change)
                .await;
            let message = refused.lock().ok().and_then(|mut s| s.take());
            (result, message)
        })
        .await;
    match done {
        (Ok(()), _) => Ok(ToolResult::text(format!(
            "Inserted the text after line {line} of {shown}."
        ))),
        (Err(_), Some(message)) => Err(ToolError::new(format!("{message}. Nothing was changed."))),
        (Err(e), None) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            Err(ToolError::new(too_large(shown, max_bytes)))
        }
        (Err(e), None) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::new(format!(
            "File not found: {shown}. Check the path; use create to make a new file."
        ))),
        (Err(e), None) => Err(ToolError::new(format!(
            "Could not edit {shown}: {}",
            sentence(&e)
        ))),
    }
}

/// `original` with `text` after line `line` (0: at the start): the inserted lines end as
/// the file's lines do (CRLF when the file's first line does), and a last line without a
/// newline gets one before the insertion.
///
/// ```
/// use pi_tools::builtins::text_editor::insert_lines;
/// assert_eq!(insert_lines("a\nb\n", 0, "x").unwrap(), "x\na\nb\n");
/// assert_eq!(insert_lines("a\r\nb\r\n", 2, "x\ny").unwrap(), "a\r\nb\r\nx\r\ny\r\n");
/// assert_eq!(insert_lines("a\nb", 2, "x").unwrap(), "a\nb\nx\n");
/// assert!(insert_lines("a\n", 3, "x").is_err());
/// ```
pub fn insert_lines(original: &str, line: u64, text: &str) -> Result<String, String> {
    let lines: Vec<&str> = original.split_inclusive('\n').collect();
    let count = lines.len() as u64;
    if line > count {
        return Err(format!(
            "insert_line {line} is past the end: the file has {count} line{}; use a line from 0 (before the first) to {count} (after the last)",
            if count == 1 { "" } else { "s" }
        ));
    }
    let ending = match lines.first() {
        Some(first) if first.ends_with("\r\n") => "\r\n",
        _ => "\n",
    };
    let body = text.strip_suffix('\n').unwrap_or(text);
    let body = body.strip_suffix('\r').unwrap_or(body);
    let mut inserted: String = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect::<Vec<_>>()
        .join(ending);
    inserted.push_str(ending);
    let at = usize::try_from(line).unwrap_or(usize::MAX);
    let mut out = String::with_capacity(original.len() + inserted.len() + 2);
    for (i, l) in lines.iter().enumerate() {
        if i == at {
            out.push_str(&inserted);
        }
        out.push_str(l);
    }
    if at == lines.len() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(ending);
        }
        out.push_str(&inserted);
    }
    Ok(out)
}

/// An argument the command needs, or an error saying so.
fn required<T>(value: Option<T>, name: &str, command: &str) -> Result<T, ToolError> {
    value.ok_or_else(|| {
        ToolError::new(format!(
            "The {command} command needs {name}; call the tool again with it."
        ))
    })
}
