use pi_tools::{ToolContext, ToolError, tool};

/// Echo the text.
#[tool]
async fn echo(ctx: &ToolContext, text: String, again: &pi_tools::ToolContext) -> Result<String, ToolError> {
    let _ = (ctx, again);
    Ok(text)
}

fn main() {}
