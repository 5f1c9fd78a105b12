use pi_tools::{ToolError, tool};

// Issue: a type deriving schemars 0.8's `JsonSchema` was told to "derive JsonSchema", which it
// does. The message names the version the fix needs: schemars 1, as `pi_tools::schemars`.
// (Renamed here beside schemars 1; a user's crate would call it `schemars`.)
#[derive(serde::Deserialize, schemars08::JsonSchema)]
#[schemars(crate = "schemars08")]
struct Shade {
    name: String,
}

/// Paint with a shade.
#[tool]
async fn paint(shade: Shade) -> Result<String, ToolError> {
    Ok(shade.name)
}

fn main() {}
