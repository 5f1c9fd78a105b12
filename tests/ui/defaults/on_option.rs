use pi_tools::{ToolError, tool};

/// List entries.
#[tool]
async fn list(
    /// At most this many entries.
    #[default = 500]
    limit: Option<u64>,
) -> Result<String, ToolError> {
    Ok(format!("{limit:?}"))
}

fn main() {}
