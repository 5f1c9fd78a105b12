use pi_tools::{ToolError, tool};

/// Search the code.
#[tool(role = search)]
async fn search(pattern: String) -> Result<String, ToolError> {
    Ok(pattern)
}

fn main() {}
