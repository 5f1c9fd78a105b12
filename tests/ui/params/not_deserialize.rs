use pi_tools::{ToolError, tool};

struct Color {
    name: String,
}

/// Paint with a colour.
#[tool]
async fn paint(color: Color) -> Result<String, ToolError> {
    Ok(color.name)
}

fn main() {}
