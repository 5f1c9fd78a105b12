//! The `ls` tool: list one directory, sorted, directories marked with `/`.
//!
//! It goes through the execution environment's `list_dir`, so it works on any environment,
//! not only the local one.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builtins::common_args;
use crate::builtins::preview::{arg_str, detail_u64, preview};
use crate::builtins::results::{LsResult, PathEntry};
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::env::{DirEntry, ExecutionEnv, ToolContextExt, resolve_path};
use crate::search::{Skipped, reason};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};
use crate::truncate::{TruncatedBy, TruncationLimits, truncate_head};

/// Entries returned when the caller gives no limit.
pub const DEFAULT_LIMIT: usize = 500;

/// ls's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LsArgs {
    /// The directory to list (default: the current directory).
    #[serde(default = "common_args::current_dir")]
    pub path: Option<String>,
    /// The maximum number of entries to return (default: 500).
    #[serde(default = "default_limit")]
    pub limit: Option<u64>,
}

impl LsArgs {
    /// Lists `path`, up to the default limit (set `limit` on the result for another).
    pub fn new(path: impl Into<String>) -> Self {
        LsArgs {
            path: Some(path.into()),
            limit: None,
        }
    }
}

// The defaults the fields get when the model leaves them out; the schema shows them.
fn default_limit() -> Option<u64> {
    Some(DEFAULT_LIMIT as u64)
}

/// What an ls result tells a user interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LsDetails {
    /// Entries shown.
    pub entries: usize,
    /// The limit, when more entries exist beyond it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_limit_reached: Option<usize>,
    /// Which output limit cut the text, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<TruncatedBy>,
}

/// Lists a directory. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "ls",
    examples = [r#"{"path": "src"}"#],
    label = "Ls",
    description = "List the entries of a directory, sorted alphabetically \
(ignoring case), dotfiles included, one per line, with a `/` after each directory. Stops after \
`limit` entries (default 500) or 50KB of output.",
    snippet = "List a directory's contents",
    guidelines = ["Use ls to see what a directory holds instead of running ls through bash."],
    renderer = LsRenderer,
    output = LsResult,
    role = explore,
    read_only
)]
pub async fn ls(
    ctx: &ToolContext,
    #[args] args: LsArgs,
) -> Result<ToolOutput<LsDetails>, ToolError> {
    let env = ctx.env();
    let raw_path = args.path.as_deref().unwrap_or(".");
    let dir = directory(env.as_ref(), raw_path).await?;
    let listed = env
        .list_dir(&dir)
        .await
        .map_err(|e| ToolError::new(format!("Cannot list `{raw_path}`: {e}.")))?;
    let mut skipped = Skipped::default();
    let mut entries = usable_entries(env.as_ref(), &dir, listed, &mut skipped).await;
    entries.sort_by(|a, b| {
        a.name
            .to_lowercase()
            .cmp(&b.name.to_lowercase())
            .then_with(|| a.name.cmp(&b.name))
    });
    let limit = common_args::limit(args.limit, DEFAULT_LIMIT);
    listing(&entries, skipped.notice("entry", "entries"), limit)
}

/// The directory `raw_path` names, resolved; an error the model can act on when it does not
/// exist or is a file.
async fn directory(env: &dyn ExecutionEnv, raw_path: &str) -> Result<PathBuf, ToolError> {
    let dir = resolve_path(env, raw_path);
    let meta = env.metadata(&dir).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ToolError::new(format!(
                "The path `{raw_path}` does not exist. Check the spelling, or list its parent directory to see what is there."
            ))
        } else {
            ToolError::new(format!("Cannot list `{raw_path}`: {e}."))
        }
    })?;
    if !meta.is_dir {
        return Err(ToolError::new(format!(
            "`{raw_path}` is not a directory. Use the read tool to see a file's contents."
        )));
    }
    Ok(dir)
}

/// The entries of `dir` that can be used. A symbolic link whose target is gone, unreadable
/// or outside the allowed directories cannot: it goes to `skipped`, named at the end.
async fn usable_entries(
    env: &dyn ExecutionEnv,
    dir: &Path,
    listed: Vec<DirEntry>,
    skipped: &mut Skipped,
) -> Vec<DirEntry> {
    let mut entries = Vec::with_capacity(listed.len());
    for entry in listed {
        if entry.is_symlink
            && !entry.is_dir
            && let Err(err) = env.metadata(&dir.join(&entry.name)).await
        {
            let why = match err.kind() {
                std::io::ErrorKind::NotFound => "a link to nothing".to_owned(),
                _ => reason(&err),
            };
            skipped.note(&entry.name, &why);
            continue;
        }
        entries.push(entry);
    }
    entries
}

/// The result the model reads for the sorted `entries`: the first `limit` of them, one per
/// line with a `/` after each directory, within the output limits; then in brackets what
/// could not be listed (`skipped`) and what limit was reached.
fn listing(
    entries: &[DirEntry],
    skipped: Option<String>,
    limit: usize,
) -> Result<ToolOutput<LsDetails>, ToolError> {
    if entries.is_empty() {
        let text = match skipped {
            Some(notice) => format!("(empty directory)\n\n[{notice}]"),
            None => "(empty directory)".to_owned(),
        };
        return ToolOutput::text(text)
            .with_details(LsDetails::default())
            .with_structured(&LsResult {
                entries: Vec::new(),
                truncated: false,
                limit_reached: false,
            });
    }
    let text = entries
        .iter()
        .take(limit)
        .map(|e| {
            if e.is_dir {
                format!("{}/", e.name)
            } else {
                e.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let truncation = truncate_head(&text, TruncationLimits::default());
    let result = LsResult {
        entries: entries
            .iter()
            .take(limit.min(truncation.output_lines))
            .map(|e| PathEntry {
                path: e.name.clone(),
                dir: e.is_dir,
            })
            .collect(),
        truncated: truncation.truncated_by.is_some(),
        limit_reached: entries.len() > limit,
    };
    let mut out = truncation.content.clone();
    let mut details = LsDetails {
        entries: truncation.output_lines,
        ..LsDetails::default()
    };
    let mut notices: Vec<String> = skipped.into_iter().collect();
    if entries.len() > limit {
        notices.push(format!(
            "{limit} entries limit reached. Use limit={} for more",
            limit.saturating_mul(2)
        ));
        details.entry_limit_reached = Some(limit);
    }
    if let Some(by) = truncation.truncated_by {
        notices.push(format!("Output limit of {} reached", by.default_limit()));
        details.truncated_by = Some(by);
    }
    if !notices.is_empty() {
        out.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    ToolOutput::text(out)
        .with_details(details)
        .with_structured(&result)
}

/// Draws ls calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct LsRenderer;

impl crate::tool::ToolRenderer for LsRenderer {
    /// How an ls call looks to a person: `ls path`.
    fn render_call(&self, args: &Value) -> Styled {
        Styled::new()
            .push("ls ", Style::fg(Color::Cyan).bold())
            .push(arg_str(args, "path").unwrap_or("."), Style::fg(Color::Gray))
    }

    /// How an ls result looks to a person: the number of entries, then the first of them.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        let summary = detail_u64(result, "entries")
            .filter(|&n| n > 0)
            .map(|n| format!("{n} entr{}", if n == 1 { "y" } else { "ies" }));
        preview(result, is_error, summary)
    }
}
