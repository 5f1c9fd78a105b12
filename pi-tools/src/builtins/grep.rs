//! The `grep` tool: search file contents for a regular expression or a literal string.
//!
//! The search runs in-process on ripgrep's own crates, so no user text is ever parsed as a
//! command-line flag (a pattern such as `--pre=x` is just text to look for).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builtins::common_args;
use crate::builtins::preview::{arg_str, detail_u64, preview};
use crate::builtins::results::{GrepMatch, GrepResult};
use crate::builtins::run_in_env;
use crate::core::{ToolContext, ToolError, ToolResult};
use crate::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_CHARS, TruncatedBy, TruncationLimits,
    truncate_head,
};

use crate::builtins::SearchedVia;
use crate::env::ToolContextExt;
use crate::search::{ContentQuery, FileHits, Route, SearchOutcome, SearchStart};
use crate::text::sentence;
use crate::tool;
use crate::tool::ToolOutput;
use crate::tool::render::{Color, Style, Styled};

pub use crate::search::IndexStats as SearchIndexStats;

/// The search index grep keeps of the directory `dir` (the working directory of a
/// [`LocalEnv`](crate::env::local::LocalEnv) with its search index on): started now if grep has
/// not started it, then waited for up to `timeout`. `None` when it is not built by then.
/// For benchmarks and tests; grep itself never waits for the index.
pub fn search_index_stats(
    dir: &std::path::Path,
    timeout: std::time::Duration,
) -> Option<SearchIndexStats> {
    crate::search::index_stats(dir, timeout)
}

/// Matches returned when the caller gives no limit.
pub const DEFAULT_LIMIT: usize = 100;

/// The most lines of context around a match: the searcher holds them in memory, and the
/// output limit would cut more anyway. The schema says so; a caller of [`grep`] that
/// skips validation gets this many.
pub const MAX_CONTEXT: u64 = 100;

/// grep's arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GrepArgs {
    /// The regular expression to search for (Rust regex syntax), or the exact text when
    /// `literal` is true.
    pub pattern: String,
    /// The directory or file to search (default: the current directory).
    #[serde(default = "common_args::current_dir")]
    pub path: Option<String>,
    /// Only search files whose path matches this glob, e.g. `*.rs` or `**/*.spec.ts`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Match regardless of case (default: false).
    #[serde(default = "no", rename = "ignoreCase")]
    pub ignore_case: Option<bool>,
    /// Treat the pattern as literal text instead of a regular expression (default: false).
    #[serde(default = "no")]
    pub literal: Option<bool>,
    /// Lines of context to show before and after each match (default: 0, at most 100).
    #[serde(default = "no_context")]
    #[schemars(range(max = MAX_CONTEXT))]
    pub context: Option<u64>,
    /// The maximum number of matches to return (default: 100).
    #[serde(default = "default_limit")]
    pub limit: Option<u64>,
}

impl GrepArgs {
    /// Searches the working directory for the regular expression `pattern`, with every
    /// option at its default (set the others on the result).
    pub fn new(pattern: impl Into<String>) -> Self {
        GrepArgs {
            pattern: pattern.into(),
            path: None,
            glob: None,
            ignore_case: None,
            literal: None,
            context: None,
            limit: None,
        }
    }

    /// The same search, in the directory or file `path` instead of the working directory:
    /// `GrepArgs::new("TODO").within("src")`.
    pub fn within(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

// The defaults the fields get when the model leaves them out; the schema shows them.
fn no() -> Option<bool> {
    Some(false)
}
fn no_context() -> Option<u64> {
    Some(0)
}
fn default_limit() -> Option<u64> {
    Some(DEFAULT_LIMIT as u64)
}

/// What a grep result tells a user interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GrepDetails {
    /// Matches shown.
    pub matches: usize,
    /// Files with a shown match.
    pub files: usize,
    /// The limit, when more matches exist beyond it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_limit_reached: Option<usize>,
    /// Which output limit cut the text, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<TruncatedBy>,
    /// Some lines were clipped to 500 characters.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lines_truncated: bool,
    /// How an environment whose files are elsewhere searched (absent: on this machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<SearchedVia>,
}

/// Searches file contents. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "grep",
    examples = [r#"{"pattern": "fn main", "path": "src", "glob": "*.rs", "context": 2}"#],
    label = "Grep",
    description = "Search the contents of files for a regular expression (or, with \
literal: true, a plain string). Prints each matching line as `path:line: text`, with optional \
context lines as `path-line- text`, paths relative to the searched directory. Hidden files are \
searched; files ignored by .gitignore or .ignore, and the .git directory, are skipped. Stops \
after `limit` matches (default 100) or 50KB of output; lines longer than 500 characters are \
clipped.",
    snippet = "Search file contents by regex or literal text (respects .gitignore)",
    guidelines = ["Use grep to search file contents instead of running grep or rg through bash."],
    renderer = GrepRenderer,
    output = GrepResult,
    role = explore,
    read_only
)]
pub async fn grep(
    ctx: &ToolContext,
    #[args] args: GrepArgs,
) -> Result<ToolOutput<GrepDetails>, ToolError> {
    if let Some(output) = run_in_env(ctx, "grep", &args).await {
        return output;
    }
    let shown = args.path.as_deref().unwrap_or(".");
    let start = SearchStart::resolve(ctx.env(), shown).await?;
    let query = ContentQuery {
        pattern: args.pattern.clone(),
        literal: args.literal.unwrap_or(false),
        ignore_case: args.ignore_case.unwrap_or(false),
        glob: args.glob.clone(),
        context: to_usize(args.context.unwrap_or(0).min(MAX_CONTEXT)),
        limit: common_args::limit(args.limit, DEFAULT_LIMIT),
        max_lines: DEFAULT_MAX_LINES,
        max_bytes: DEFAULT_MAX_BYTES,
    };
    let (outcome, route) = start.contents(&query, ctx.cancellation()).await?;
    if outcome.cancelled {
        return Err(ToolError::new("The search was aborted."));
    }
    if let Some(err) = &outcome.failed {
        return Err(ToolError::new(format!(
            "Cannot search `{shown}`: {} Check the path and its permissions.",
            sentence(err)
        )));
    }
    let via = (route == Route::ThroughEnv).then_some(SearchedVia::Walk);
    report(&outcome, query.limit, via)
}

/// The result the model reads: the matching lines (`path:line: text`, context lines as
/// `path-line- text`), then in brackets what limit was reached and what could not be read.
fn report(
    outcome: &SearchOutcome,
    limit: usize,
    via: Option<SearchedVia>,
) -> Result<ToolOutput<GrepDetails>, ToolError> {
    let unreadable = outcome
        .skipped
        .notice("file or directory", "files or directories");
    if outcome.matches == 0 {
        return ToolOutput::text(no_matches_text(unreadable))
            .with_details(GrepDetails {
                via,
                ..GrepDetails::default()
            })
            .with_structured(&GrepResult {
                matches: Vec::new(),
                truncated: false,
                limit_reached: false,
            });
    }
    let lines = match_lines(&outcome.files);
    let truncation = truncate_head(&lines.text, TruncationLimits::default());
    let cut = truncation.truncated || outcome.output_full;
    let result = GrepResult {
        matches: match_records(&outcome.files, truncation.output_lines),
        truncated: cut,
        limit_reached: outcome.more_matches && !truncation.truncated,
    };
    let mut out = truncation.content.trim_end_matches('\n').to_string();
    let mut notices = Vec::new();
    let mut details = GrepDetails {
        matches: outcome.matches,
        files: outcome.files.len(),
        lines_truncated: lines.clipped,
        via,
        ..GrepDetails::default()
    };
    if outcome.more_matches && !truncation.truncated {
        notices.push(format!(
            "{limit} matches limit reached. Use limit={} for more, or refine the pattern",
            limit.saturating_mul(2)
        ));
        details.match_limit_reached = Some(limit);
    }
    if truncation.truncated || outcome.output_full {
        let by = truncation.truncated_by.unwrap_or(TruncatedBy::Bytes);
        let what = by.default_limit();
        notices.push(format!(
            "Output limit of {what} reached. Narrow the search with a more specific pattern, path or glob, or a lower context"
        ));
        details.truncated_by = Some(by);
        let shown = count_shown(&outcome.files, truncation.output_lines);
        details.matches = shown.matches;
        details.files = shown.files;
    }
    if lines.clipped {
        notices.push(format!(
            "Some lines were clipped to {GREP_MAX_LINE_CHARS} characters. Use the read tool to see them in full"
        ));
    }
    notices.extend(unreadable);
    if !notices.is_empty() {
        out.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    ToolOutput::text(out)
        .with_details(details)
        .with_structured(&result)
}

/// The matching lines among the first `shown` lines of the text, as records.
fn match_records(files: &[FileHits], shown: usize) -> Vec<GrepMatch> {
    files
        .iter()
        .flat_map(|file| file.lines.iter().map(move |line| (file, line)))
        .take(shown)
        .filter(|(_, line)| line.is_match)
        .map(|(file, line)| GrepMatch {
            path: file.rel.clone(),
            line: line.number,
            text: line.text.clone(),
        })
        .collect()
}

/// The result when nothing matched, saying what could not be read (`unreadable`) if anything.
fn no_matches_text(unreadable: Option<String>) -> String {
    match unreadable {
        Some(notice) => format!(
            "No matches found in what could be read\n\n[{notice}. Check their permissions, or search them with bash]"
        ),
        None => "No matches found".to_string(),
    }
}

/// Every hit line of the search, one per output line.
struct MatchLines {
    /// `path:line: text` for a match, `path-line- text` for context, each ending in `\n`.
    text: String,
    /// Some line was clipped to [`GREP_MAX_LINE_CHARS`] characters.
    clipped: bool,
}

fn match_lines(files: &[FileHits]) -> MatchLines {
    let mut lines = MatchLines {
        text: String::new(),
        clipped: false,
    };
    for file in files {
        for line in &file.lines {
            let sep = if line.is_match { ':' } else { '-' };
            lines.text.push_str(&format!(
                "{}{sep}{}{sep} {}\n",
                file.rel, line.number, line.text
            ));
            lines.clipped |= line.clipped;
        }
    }
    lines
}

/// How many matches and files a cut result still shows.
#[derive(Debug, PartialEq, Eq)]
struct Shown {
    matches: usize,
    files: usize,
}

/// Matches and files among the first `lines` output lines (each hit line is one output line).
fn count_shown(files: &[FileHits], lines: usize) -> Shown {
    let mut shown = Shown {
        matches: 0,
        files: 0,
    };
    let mut seen = 0;
    for file in files {
        if seen >= lines {
            break;
        }
        shown.files += 1;
        for line in file.lines.iter().take(lines - seen) {
            shown.matches += usize::from(line.is_match);
        }
        seen += file.lines.len();
    }
    shown
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Draws grep calls and results for a person.
#[derive(Debug, Default, Clone, Copy)]
pub struct GrepRenderer;

impl crate::tool::ToolRenderer for GrepRenderer {
    /// How a grep call looks to a person: `grep /pattern/ in path (glob)`.
    fn render_call(&self, args: &Value) -> Styled {
        let mut out = Styled::new().push("grep ", Style::fg(Color::Cyan).bold());
        out.add(
            format!("/{}/", arg_str(args, "pattern").unwrap_or("")),
            Style::fg(Color::Magenta),
        );
        if args.get("ignoreCase").and_then(Value::as_bool) == Some(true) {
            out.add("i", Style::fg(Color::Magenta));
        }
        out.add(
            format!(" in {}", arg_str(args, "path").unwrap_or(".")),
            Style::fg(Color::Gray),
        );
        if let Some(glob) = arg_str(args, "glob") {
            out.add(format!(" ({glob})"), Style::fg(Color::Gray));
        }
        out
    }

    /// How a grep result looks to a person: match and file counts, then the first lines.
    fn render_result(&self, result: &ToolResult, is_error: bool) -> Styled {
        let summary = detail_u64(result, "matches").filter(|&m| m > 0).map(|m| {
            let files = detail_u64(result, "files").unwrap_or(0);
            format!(
                "{m} match{} in {files} file{}",
                if m == 1 { "" } else { "es" },
                if files == 1 { "" } else { "s" }
            )
        });
        preview(result, is_error, summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::HitLine;

    #[test]
    fn shown_counts_follow_the_cut() {
        let line = |n, m| HitLine {
            number: n,
            text: String::new(),
            is_match: m,
            clipped: false,
        };
        let files = vec![
            FileHits {
                rel: "a".into(),
                lines: vec![line(1, true), line(2, false), line(3, true)],
            },
            FileHits {
                rel: "b".into(),
                lines: vec![line(1, true)],
            },
        ];
        let shown = |matches, files| Shown { matches, files };
        assert_eq!(count_shown(&files, 2), shown(1, 1));
        assert_eq!(count_shown(&files, 3), shown(2, 1));
        assert_eq!(count_shown(&files, 4), shown(3, 2));
    }
}
