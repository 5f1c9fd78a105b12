//! The seven built-in coding tools (read, bash, edit, write, grep, find, ls) and the helpers
//! they share (truncation, argument previews). grep and find search with [`crate::search`].
//!
//! Each tool is an ordinary `async fn(&ToolContext, Args) -> Result<ToolOutput<Details>, ToolError>`
//! written against the public API (the execution environment from [`crate::env`], the
//! truncation helpers in [`truncate`]), so it doubles as an example of writing a tool.

pub mod bash;
pub mod edit;
pub mod find;
pub mod grep;
pub mod ls;
pub mod preview;
pub mod read;
pub mod truncate;
pub mod write;

/// An error's text as the end of a sentence: exactly one final period.
fn sentence(err: &impl std::fmt::Display) -> String {
    let text = err.to_string();
    format!("{}.", text.trim_end().trim_end_matches('.'))
}

/// Lets the environment run `tool` itself when it can (see
/// [`ExecutionEnv::run_tool`](crate::env::ExecutionEnv::run_tool)): the tool's output when
/// it did, `None` when the tool should go on as usual.
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
    let run = env.run_tool(tool, arguments, ctx.cancellation().clone())?;
    Some(match run.await {
        Err(err) => Err(crate::core::ToolError::new(sentence(&err))),
        Ok(message) if message.is_error => {
            let text: Vec<&str> = message.content.iter().filter_map(|b| b.as_text()).collect();
            Err(crate::core::ToolError::new(text.join("\n")).with_details(message.details))
        }
        Ok(message) => {
            let mut output = crate::tool::ToolOutput::blocks(message.content);
            output.details = serde_json::from_value(message.details).ok();
            Ok(output)
        }
    })
}
