use pi_tools::{ToolError, tool};

/// Echo the value.
#[tool]
async fn echo<T: ToString>(value: T) -> Result<String, ToolError> {
    Ok(value.to_string())
}

fn main() {}
