use pi_tools::{ToolError, tool};

fn shout(text: &String) -> String {
    text.to_uppercase()
}

// `text` renders a typed result; a fn returning content has none, and `output` is for a
// fn whose return type does not give the schema already.
/// Echo the text.
#[tool(text = shout)]
async fn echo(text: String) -> Result<String, ToolError> {
    Ok(text)
}

/// Count the bytes.
#[tool(output = u64)]
async fn bytes(text: String) -> Result<u64, ToolError> {
    Ok(text.len() as u64)
}

fn main() {}
