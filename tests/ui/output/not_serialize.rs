use pi_tools::{ToolError, tool};

// A typed result is written as the call's structured result, so its type must serialise:
// one error, at the return type, with the fix.
#[derive(schemars::JsonSchema)]
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
