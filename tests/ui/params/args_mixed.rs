use pi_tools::{ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// Echo the text.
#[tool]
async fn echo(#[args] args: EchoArgs, times: u32) -> Result<String, ToolError> {
    Ok(args.text.repeat(times as usize))
}

fn main() {}
