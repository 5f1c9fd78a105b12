//! The `find` tool: list the files and directories whose path matches a glob.
//!
//! The walk runs in-process (ripgrep's `ignore` and `globset` crates): no `fd` binary, and
//! the pattern is never read as a command-line flag.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builtins::common_args;
use crate::builtins::preview::{arg_str, detail_u64, preview};
use crate::builtins::results::{FindResult, PathEntry};
use crate::builtins::run_in_env;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationLimits, truncate_head,
};

use crate::builtins::SearchedVia;
use crate::env::ToolContextExt;
use crate::search::{PathQuery, PathsFound, Route, SearchStart};
use crate::text::sentence;
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
    #[serde(default = "common_args::current_dir")]
    pub path: Option<String>,
    /// The maximum number of results (default: 1000).
    #[serde(default = "default_limit")]
    pub limit: Option<u64>,
}

impl FindArgs {
    /// Finds the paths below the working directory that match the glob `pattern`, up to
    /// the default limit (set `path` or `limit` on the result for others).
    pub fn new(pattern: impl Into<String>) -> Self {
        FindArgs {
            pattern: pattern.into(),
            path: None,
            limit: None,
        }
    }

    /// The same search, in the directory `path` instead of the working directory:
    /// `FindArgs::new("*.rs").within("src")`.
    pub fn within(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

// The defaults the fields get when the model leaves them out; the schema shows them.
fn default_limit() -> Option<u64> {
    Some(DEFAULT_LIMIT as u64)
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
    /// How an environment whose files are elsewhere searched (absent: on this machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<SearchedVia>,
}

/// Finds paths by glob. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "find",
    examples = [r#"{"pattern": "**/*.toml"}"#],
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
    output = FindResult,
    role = explore,
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
    let limit = common_args::limit(args.limit, DEFAULT_LIMIT);
    let start = SearchStart::resolve(ctx.env(), raw_path).await?;
    if !start.is_dir() {
        return Err(not_a_directory(raw_path));
    }
    let query = PathQuery {
        glob: args.pattern.clone(),
        limit,
        max_lines: DEFAULT_MAX_LINES,
        max_bytes: DEFAULT_MAX_BYTES,
    };
    let (found, route) = start.paths(query, ctx.cancellation()).await?;
    if let Some(e) = &found.failed {
        return Err(ToolError::new(format!(
            "Cannot search `{raw_path}`: {} Check the path and its permissions.",
            sentence(e)
        )));
    }
    let mut output = found_result(found, limit)?;
    if route == Route::ThroughEnv
        && let Some(details) = &mut output.details
    {
        details.via = Some(SearchedVia::Walk);
    }
    Ok(output)
}

fn not_a_directory(raw_path: &str) -> ToolError {
    ToolError::new(format!(
        "`{raw_path}` is a file, not a directory. Give the directory to search in as path."
    ))
}

/// The result the model reads for what a walk `found`: the paths, one per line, then in
/// brackets what limit was reached and what could not be read.
fn found_result(found: PathsFound, limit: usize) -> Result<ToolOutput<FindDetails>, ToolError> {
    let unreadable = found.skipped.notice("directory", "directories");
    if found.cancelled {
        return Err(ToolError::new("The search was aborted."));
    }
    if found.paths.is_empty() {
        let text = match unreadable {
            Some(notice) => format!(
                "No files found matching pattern\n\n[{notice}. Search inside them by a path you can read, or check their permissions]"
            ),
            None => "No files found matching pattern".to_string(),
        };
        return ToolOutput::text(text)
            .with_details(FindDetails::default())
            .with_structured(&FindResult {
                paths: Vec::new(),
                truncated: false,
                limit_reached: false,
            });
    }

    let truncation = truncate_head(&found.paths.join("\n"), TruncationLimits::default());
    let result = FindResult {
        paths: found.paths[..truncation.output_lines.min(found.paths.len())]
            .iter()
            .map(|p| PathEntry::of_line(p))
            .collect(),
        truncated: truncation.truncated_by.is_some(),
        limit_reached: truncation.truncated_by.is_none() && found.more,
    };
    let mut out = truncation.content.clone();
    let mut details = FindDetails {
        results: truncation.output_lines,
        ..FindDetails::default()
    };
    if let Some(by) = truncation.truncated_by {
        let what = by.default_limit();
        out.push_str(&format!(
            "\n\n[Output limit of {what} reached. Use a more specific pattern or path to see the rest]"
        ));
        details.truncated_by = Some(by);
    } else if found.more {
        out.push_str(&format!(
            "\n\n[{limit} results limit reached. Use limit={} for more, or refine the pattern]",
            limit.saturating_mul(2)
        ));
        details.result_limit_reached = Some(limit);
    }
    if let Some(notice) = unreadable {
        out.push_str(&format!("\n\n[{notice}]"));
    }
    ToolOutput::text(out)
        .with_details(details)
        .with_structured(&result)
}

/// Draws find calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct FindRenderer;

impl crate::tool::ToolRenderer for FindRenderer {
    /// How a find call looks to a person: `find pattern in path`.
    fn render_call(&self, args: &Value) -> Styled {
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
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        let summary = detail_u64(result, "results")
            .filter(|&n| n > 0)
            .map(|n| format!("{n} path{}", if n == 1 { "" } else { "s" }));
        preview(result, is_error, summary)
    }
}
