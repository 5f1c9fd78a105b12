use pi_tools::{ToolError, tool};

#[tool(snippet = "Echo text")]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {}
