//! File tools, declared away from the test's main file.

use pi_tools::{ToolError, tool};

/// List the files of a directory.
#[tool(read_only)]
pub async fn list_files(
    /// The directory.
    dir: String,
) -> Result<Vec<String>, ToolError> {
    Ok(vec![dir])
}

/// Remove a file.
#[tool(destructive, mode = sequential)]
pub async fn remove_file(path: String) -> Result<String, ToolError> {
    Ok(format!("removed {path}"))
}
