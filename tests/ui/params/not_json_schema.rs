use pi_tools::{ToolError, tool};

// Issue: a type that derives `Deserialize` but not schemars 1's `JsonSchema` (say, 0.8's)
// was reported twice, by the parameter's check and by the argument struct's derive. Once,
// with the fix; a default's parameter and an optional one too.
#[derive(serde::Deserialize, serde::Serialize)]
struct Shade {
    name: String,
}

/// Paint with a shade.
#[tool]
async fn paint(shade: Shade) -> Result<String, ToolError> {
    Ok(shade.name)
}

fn default_shade() -> Shade {
    Shade {
        name: "ochre".to_owned(),
    }
}

/// Paint the wall with a shade.
#[tool]
async fn paint_wall(#[default = default_shade()] shade: Shade) -> Result<String, ToolError> {
    Ok(shade.name)
}

/// Paint the door, with a shade or without.
#[tool]
async fn paint_door(shade: Option<Shade>) -> Result<String, ToolError> {
    Ok(shade.map(|s| s.name).unwrap_or_default())
}

fn main() {}
