//! The `write` tool: create or overwrite a file, atomically, inside the file's mutation queue.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builtins::preview::arg_str;
use crate::builtins::results::{WriteOutcome, WriteResult};
use crate::builtins::sentence;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{ExecutionEnv, ToolContextExt, mutation_key, resolve_path};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};

/// Arguments of `write`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// Path of the file to write, relative to the working directory or absolute.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

impl WriteArgs {
    /// Writes `content` to `path`.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        WriteArgs {
            path: path.into(),
            content: content.into(),
        }
    }
}

/// What a write did, for user interfaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteDetails {
    /// The path as resolved.
    pub path: String,
    /// Bytes written (UTF-8).
    pub bytes: usize,
    /// Whether the file existed before.
    pub overwritten: bool,
}

/// Writes a file. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "write",
    examples = [r#"{"path": "notes/todo.md", "content": "To do:\n- Write the tests.\n"}"#],
    label = "Write",
    description = "Write content to a file, creating it (and its parent directories) if needed and replacing it completely if it exists. The file is replaced atomically.",
    snippet = "Create or overwrite a file",
    guidelines = ["Use write only for new files or complete rewrites; use edit to change part of a file."],
    renderer = WriteRenderer,
    output = WriteResult,
    destructive
)]
pub async fn write(
    ctx: &ToolContext,
    #[args] args: WriteArgs,
) -> Result<ToolOutput<WriteDetails>, ToolError> {
    let env = ctx.env();
    let path = resolve_path(&*env, &args.path);
    let key = mutation_key(&*env, &path)
        .await
        .map_err(|e| ToolError::new(format!("Could not write {}: {}", args.path, sentence(&e))))?;
    let queue = env.mutation_queue().clone();
    let bytes = args.content.len();
    let shown = args.path.clone();
    let target = path.clone();
    let overwritten = queue
        .run(key, write_in_queue(env, target, args.content.into_bytes()))
        .await
        .map_err(|e| ToolError::new(format!("Could not write {shown}: {}", sentence(&e))))?;
    let result = WriteResult {
        path: path.display().to_string(),
        bytes: bytes as u64,
        outcome: if overwritten {
            WriteOutcome::Replaced
        } else {
            WriteOutcome::Created
        },
    };
    ToolOutput::text(format!("Successfully wrote {bytes} bytes to {}", args.path))
        .with_details(WriteDetails {
            path: result.path.clone(),
            bytes,
            overwritten,
        })
        .with_structured(&result)
}

async fn write_in_queue(
    env: Arc<dyn ExecutionEnv>,
    path: std::path::PathBuf,
    data: Vec<u8>,
) -> std::io::Result<bool> {
    if let Some(parent) = path.parent() {
        env.create_dir_all(parent).await?;
    }
    let existed = env.metadata(&path).await.is_ok();
    env.write_file(&path, data).await?;
    Ok(existed)
}

/// Draws write calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteRenderer;

impl crate::tool::ToolRenderer for WriteRenderer {
    /// How a `write` call looks: the path and the size of the content.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push("write ", Style::fg(Color::Cyan).bold());
        out.add(arg_str(args, "path").unwrap_or(""), Style::fg(Color::Cyan));
        let content = arg_str(args, "content").unwrap_or("");
        out.add(
            format!(
                " ({} lines, {} bytes)",
                content.lines().count(),
                content.len()
            ),
            Style::fg(Color::Gray),
        );
        out
    }

    /// How a `write` result looks: the confirmation in green, or the error in red.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        let color = if is_error { Color::Red } else { Color::Green };
        Styled::new().push(result.text_content(), Style::fg(color))
    }
}
