//! A search tool with a hyphenated name, declared in its own file.

use pi_tools::{ToolError, tool};

/// Search for text.
#[tool(name = "search-text", read_only)]
pub async fn search(pattern: String) -> Result<&'static str, ToolError> {
    let _ = pattern;
    Ok("no matches")
}
