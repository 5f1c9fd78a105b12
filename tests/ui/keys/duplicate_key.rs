use pi_tools::{ToolError, tool};

/// Echo the text.
#[tool(label = "Echo", label = "Echo again")]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {}
