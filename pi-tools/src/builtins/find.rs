//! The `find` tool: list the files and directories whose path matches a glob.
//!
//! The walk runs in-process (ripgrep's `ignore` and `globset` crates): no `fd` binary, and
//! the pattern is never read as a command-line flag.

use std::ops::ControlFlow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builtins::preview::{arg_str, detail_u64, preview};
use crate::builtins::run_in_env;
use crate::builtins::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationLimits, truncate_head,
};
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::search::path_glob::PathGlob;
use crate::search::walk::{WalkEnd, search_root, spare_cores, walk_sorted};
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};

/// Results returned when the caller gives no limit.
pub const DEFAULT_LIMIT: usize = 1000;

/// find's arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FindArgs {
    /// Glob pattern to match, e.g. `*.rs`, `**/*.spec.ts` or `src/**/mod.rs`.
    pub pattern: String,
    /// The directory to search (default: the current directory).
    #[serde(default)]
    pub path: Option<String>,
    /// The maximum number of results (default: 1000).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// What a find result tells a user interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FindDetails {
    /// Paths shown.
    pub results: usize,
    /// The limit, when more results exist beyond it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_limit_reached: Option<usize>,
    /// Which output limit cut the text, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<TruncatedBy>,
}

/// Finds paths by glob. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "find",
    label = "Find",
    description = "Find files and directories by glob pattern. A pattern without \
`/` matches file names at any depth (`*.rs`); a pattern with `/` matches the whole path relative \
to the search directory, at any depth unless it starts with `/` (`src/**/*.ts`, `/docs/*.md`). \
Prints matching paths relative to the search directory, directories with a trailing `/`. Hidden \
files are included; files ignored by .gitignore or .ignore, and the .git directory, are skipped. \
Stops after `limit` results (default 1000) or 50KB of output.",
    snippet = "Find files by glob pattern (respects .gitignore)",
    guidelines = ["Use find to locate files by name instead of running find or fd through bash."],
    renderer = FindRenderer,
    read_only
)]
pub async fn find(
    ctx: &ToolContext,
    #[args] args: FindArgs,
) -> Result<ToolOutput<FindDetails>, ToolError> {
    if let Some(output) = run_in_env(ctx, "find", &args).await {
        return output;
    }
    let raw_path = args.path.as_deref().unwrap_or(".");
    let (root, meta) = search_root(
        ctx,
        "find",
        Some(raw_path),
        "Use bash to list files there instead.",
    )
    .await?;
    if !meta.is_dir {
        return Err(ToolError::new(format!(
            "`{raw_path}` is a file, not a directory. Give the directory to search in as path."
        )));
    }
    let glob = PathGlob::new(&args.pattern).map_err(ToolError::new)?;
    let limit = usize::try_from(args.limit.unwrap_or(DEFAULT_LIMIT as u64))
        .unwrap_or(usize::MAX)
        .max(1);
    let cancel = ctx.cancellation().clone();
    let (found, more, end) = tokio::task::spawn_blocking(move || {
        let mut found: Vec<String> = Vec::new();
        let (mut bytes, mut more) = (0usize, false);
        let end = walk_sorted(&root, &cancel, spare_cores(), Some(&glob), |entry| {
            if found.len() == limit {
                more = true;
                return ControlFlow::Break(());
            }
            let mut line = entry.rel.to_owned();
            if entry.is_dir {
                line.push('/');
            }
            bytes += line.len() + 1;
            found.push(line);
            // Past the output limits nothing more would be shown.
            if bytes > DEFAULT_MAX_BYTES || found.len() > DEFAULT_MAX_LINES {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        (found, more, end)
    })
    .await
    .map_err(|e| ToolError::new(format!("The search failed unexpectedly: {e}.")))?;
    if end == WalkEnd::Cancelled {
        return Err(ToolError::new("The search was aborted."));
    }
    if found.is_empty() {
        return Ok(ToolOutput::text("No files found matching pattern")
            .with_details(FindDetails::default()));
    }

    let truncation = truncate_head(&found.join("\n"), TruncationLimits::default());
    let mut out = truncation.content.clone();
    let mut details = FindDetails {
        results: truncation.output_lines,
        ..FindDetails::default()
    };
    if truncation.truncated {
        let by = truncation.truncated_by.unwrap_or(TruncatedBy::Bytes);
        let what = by.default_limit();
        out.push_str(&format!(
            "\n\n[Output limit of {what} reached. Use a more specific pattern or path to see the rest]"
        ));
        details.truncated_by = Some(by);
    } else if more {
        out.push_str(&format!(
            "\n\n[{limit} results limit reached. Use limit={} for more, or refine the pattern]",
            limit.saturating_mul(2)
        ));
        details.result_limit_reached = Some(limit);
    }
    Ok(ToolOutput::text(out).with_details(details))
}

/// How a find call looks to a person: `find pattern in path`.
pub fn render_call(args: &Value) -> Styled {
    let mut out = Styled::new().push("find ", Style::fg(Color::Cyan).bold());
    out.add(
        arg_str(args, "pattern").unwrap_or("").to_string(),
        Style::fg(Color::Magenta),
    );
    out.add(
        format!(" in {}", arg_str(args, "path").unwrap_or(".")),
        Style::fg(Color::Gray),
    );
    out
}

/// How a find result looks to a person: the number of paths, then the first of them.
pub fn render_result(result: &ToolResult, is_error: bool) -> Styled {
    let summary = detail_u64(result, "results")
        .filter(|&n| n > 0)
        .map(|n| format!("{n} path{}", if n == 1 { "" } else { "s" }));
    preview(result, is_error, summary)
}

/// Draws find calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct FindRenderer;

impl crate::ToolRenderer for FindRenderer {
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
