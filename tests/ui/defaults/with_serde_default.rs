use pi_tools::{ToolError, tool};

/// List entries.
#[tool]
async fn list(
    /// At most this many entries.
    #[default = 500]
    #[serde(default)]
    limit: u64,
) -> Result<String, ToolError> {
    Ok(limit.to_string())
}

fn main() {}
