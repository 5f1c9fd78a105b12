use pi_tools::{ToolError, tool};

// A typed result gives the tool its output schema, so its type must have one: one error, at
// the return type, with the fix.
#[derive(serde::Serialize)]
struct Report {
    lines: u32,
}

/// Count the lines.
#[tool]
async fn count_lines(text: String) -> Result<Report, ToolError> {
    Ok(Report {
        lines: text.lines().count() as u32,
    })
}

fn main() {}
