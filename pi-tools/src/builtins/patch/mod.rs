//! The `apply_patch` tool: a V4A patch (the patch language OpenAI's coding models write,
//! `*** Begin Patch` … `*** End Patch`) applied to several files, all or nothing. It is how
//! pi-tools serves the Responses API's native `apply_patch` tool (each `apply_patch_call`
//! operation becomes a one-file patch) and Codex's freeform patches; it is off by default
//! and turned on with `[tools] shapes = "native"` (or by naming it in `active`).
//!
//! `parse.rs` reads the language; `hunks.rs` applies one file's hunks with edit's engine
//! (the hunk's context lines are the anchor, matched as edit matches `oldText`); `files.rs`
//! holds every file's mutation queue, computes every change, and writes only when all of
//! them apply. A file over `[tool.edit] max_file_bytes` is refused as edit refuses it.

use schemars::JsonSchema;
use serde::Deserialize;

mod files;
mod hunks;

use crate::core::{ToolContext, ToolError};
/// The V4A patch language, read where the provider shapes are (the policy reads it too).
pub use crate::dialect::v4a::{
    FileOp, Hunk, ParseError, Patch, parse_created, parse_hunks, parse_patch,
};
use crate::env::ToolContextExt;
use crate::tool;
use crate::tool::ToolOutput;
pub use files::FileOutcome;
pub use hunks::{HunkRefusal, apply_hunks};

/// Arguments of `apply_patch`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ApplyPatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    #[serde(alias = "input")]
    pub patch: String,
}

/// What a patch did, for user interfaces.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ApplyPatchDetails {
    /// Each file the patch touched, in the patch's order.
    pub files: Vec<FileOutcome>,
}

/// Applies a V4A patch. Registered as a built-in tool by `#[tool]`.
#[tool(
    name = "apply_patch",
    examples = [r#"{"patch": "*** Begin Patch\n*** Update File: src/config.rs\n@@ fn defaults()\n-    let retries = 3;\n+    let retries = 5;\n*** End Patch\n"}"#],
    label = "Apply patch",
    description = "Apply a V4A patch to one or more files, all or nothing: `*** Begin Patch`, then per file `*** Add File: path` (its lines prefixed with +), `*** Delete File: path`, or `*** Update File: path` (optionally followed by `*** Move to: new path`) with hunks, then `*** End Patch`. A hunk starts with `@@` (optionally followed by a line of the file above it, such as a function signature), then its lines: a space for context, - for a removed line, + for an added line. Each hunk's context and - lines must be found exactly once in the file. If any hunk does not apply, no file is changed.",
    snippet = "Apply a V4A patch to several files, all or nothing",
    guidelines = ["Give each hunk about 3 lines of context copied from the file, so it is found exactly once."],
    destructive
)]
pub async fn apply_patch(
    ctx: &ToolContext,
    #[args] args: ApplyPatchArgs,
) -> Result<ToolOutput<ApplyPatchDetails>, ToolError> {
    let patch = parse_patch(&args.patch).map_err(|e| {
        ToolError::new(format!(
            "The patch could not be read: {e}. Nothing was changed; resend the corrected patch."
        ))
    })?;
    let max_bytes = crate::builtins::edit::max_file_bytes(ctx);
    let outcomes =
        files::apply_patch_files(ctx.env(), patch, max_bytes, ctx.cancellation().clone()).await?;
    let text = summary(&outcomes);
    Ok(ToolOutput::text(text).with_details(ApplyPatchDetails { files: outcomes }))
}

/// One sentence per file: what happened to it.
fn summary(outcomes: &[FileOutcome]) -> String {
    let mut lines = vec![format!(
        "Applied the patch to {} file{}:",
        outcomes.len(),
        if outcomes.len() == 1 { "" } else { "s" }
    )];
    for o in outcomes {
        let hunks = match o.hunks {
            0 => String::new(),
            1 => " (1 hunk)".to_owned(),
            n => format!(" ({n} hunks)"),
        };
        lines.push(match (&o.to, o.action) {
            (Some(to), _) => format!("- moved {} to {to}{hunks}", o.path),
            (None, action) => format!("- {action} {}{hunks}", o.path),
        });
    }
    lines.join("\n")
}
