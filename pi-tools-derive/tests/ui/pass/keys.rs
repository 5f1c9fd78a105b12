//! The keys added beside the originals: `role`, `#[default]`, and `crate` through a renamed
//! dependency.

extern crate pi_tools as renamed;

use renamed::{ToolDefinition, ToolRole};

/// Search the code.
///
/// Later paragraphs reach the model too.
#[renamed::tool(crate = "renamed", role = explore)]
async fn search(
    /// The pattern.
    pattern: String,
    /// Where to search.
    #[default = "."]
    path: String,
    /// At most this many matches.
    #[default = 100]
    limit: u64,
    /// Match case-insensitively.
    #[default = false]
    ignore_case: bool,
) -> Result<String, renamed::ToolError> {
    Ok(format!("{pattern} {path} {limit} {ignore_case}"))
}

fn main() {
    assert_eq!(SearchTool.role(), ToolRole::Explore);
    assert_eq!(SearchTool.parameters()["properties"]["limit"]["default"], 100);
    assert_eq!(SearchTool.parameters()["properties"]["path"]["default"], ".");
    assert_eq!(SearchTool.prompt_snippet(), Some("Search the code."));
    let _ = search;
}
