use pi_tools::{ToolError, tool};

/// Echo the text.
#[tool(name = "echo text!")]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {}
