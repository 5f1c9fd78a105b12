use pi_tools::{ToolError, tool};

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
enum Color {
    Red,
    Green,
}

/// Paint with a colour.
#[tool]
async fn paint(
    /// The colour.
    #[default = "red"]
    color: Color,
) -> Result<String, ToolError> {
    Ok(match color {
        Color::Red => "red".to_owned(),
        Color::Green => "green".to_owned(),
    })
}

fn main() {}
