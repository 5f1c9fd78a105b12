use pi_tools::{ToolError, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct ListArgs {
    limit: Option<u64>,
}

/// List entries.
#[tool]
async fn list(#[default = 500] #[args] args: ListArgs) -> Result<String, ToolError> {
    Ok(format!("{:?}", args.limit))
}

fn main() {}
