use pi_tools::{ToolError, tool};

/// Echo the text.
#[tool(mode = concurrent)]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {}
