use pi_tools::{ToolError, tool};

#[derive(Default, serde::Deserialize, schemars::JsonSchema)]
struct EchoConfig {
    prefix: String,
}

/// Echo the text.
#[tool]
async fn echo(#[config] config: &EchoConfig, text: String) -> Result<String, ToolError> {
    Ok(format!("{}{text}", config.prefix))
}

fn main() {}
