//! The seven built-in coding tools (read, bash, edit, write, grep, find, ls) and the helpers
//! they share (truncation, argument previews). grep and find search with the crate's `search` module.
//!
//! Each tool is an ordinary `async fn(&ToolContext, Args) -> Result<ToolOutput<Details>, ToolError>`
//! written against the public API (the execution environment from [`crate::env`], the
//! truncation helpers in [`truncate`]), so it doubles as an example of writing a tool.
//!
//! Each can also be called directly, from a tool of your own or a program, with its
//! arguments built by their constructors:
//!
//! ```no_run
//! use pi_tools::builtins::grep::{GrepArgs, grep};
//! use pi_tools::{IntoToolResult, ToolContext, ToolError};
//!
//! async fn todos(ctx: &ToolContext) -> Result<String, ToolError> {
//!     let found = grep(ctx, GrepArgs::new("TODO").within("src")).await?;
//!     Ok(found.into_tool_result()?.text_content())
//! }
//! ```

pub mod bash;
mod common_args;
pub mod edit;
pub mod find;
pub mod grep;
pub mod jobs;
pub mod ls;
pub mod patch;
pub mod preview;
pub mod read;
pub mod results;
pub mod text_editor;
/// Output truncation, where it was before it served the command runner too.
pub use crate::truncate;
pub mod write;

use crate::text::sentence;

/// How grep or find searched an environment whose files are not on this machine, for the
/// event log (in the result's details; never in the text the model reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchedVia {
    /// The environment ran the search next to the files (the remote pi-tools helper).
    Helper,
    /// The tool walked the tree through the environment's file operations (over SFTP, for
    /// an SSH environment).
    Walk,
}

/// Lets the environment run `tool` itself when it can (see
/// [`ExecutionEnv::run_beside_files`](crate::env::ExecutionEnv::run_beside_files)): the tool's output when
/// it did (its details saying `"via": "helper"`), `None` when the tool should go on as
/// usual, which it also does when the environment answers `ErrorKind::Unsupported`.
async fn run_in_env<A, D>(
    ctx: &crate::core::ToolContext,
    tool: &str,
    args: &A,
) -> Option<Result<crate::tool::ToolOutput<D>, crate::core::ToolError>>
where
    A: serde::Serialize,
    D: serde::de::DeserializeOwned,
{
    use crate::env::ToolContextExt;
    let env = ctx.env();
    let mut arguments = serde_json::to_value(args).ok()?;
    if let Some(object) = arguments.as_object_mut() {
        object.retain(|_, v| !v.is_null());
    }
    let run = env.run_beside_files(tool, arguments, ctx.cancellation().clone())?;
    let via = || serde_json::to_value(SearchedVia::Helper).unwrap_or_default();
    Some(match run.await {
        Err(err) if err.kind() == std::io::ErrorKind::Unsupported => return None,
        Err(err) => Err(crate::core::ToolError::new(sentence(&err))),
        Ok(message) if message.is_error => {
            let text: Vec<&str> = message.content.iter().filter_map(|b| b.as_text()).collect();
            Err(crate::core::ToolError::new(text.join("\n")).with_details(message.result.details))
        }
        Ok(mut message) => {
            if let Some(details) = message.details.as_object_mut() {
                details.insert("via".into(), via());
            }
            let mut output = crate::tool::ToolOutput::blocks(message.result.content);
            output.details = serde_json::from_value(message.result.details).ok();
            output.structured_content = message.result.structured_content;
            Ok(output)
        }
    })
}
