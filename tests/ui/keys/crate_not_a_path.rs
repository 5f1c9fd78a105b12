use pi_tools::{ToolError, tool};

/// Echo the text.
#[tool(crate = "pi-tools")]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

fn main() {}
