use std::rc::Rc;

use pi_tools::{ToolError, tool};

async fn pause() {}

/// Echo the text.
#[tool]
async fn echo(text: String) -> Result<String, ToolError> {
    let shared = Rc::new(text);
    pause().await;
    Ok(shared.to_string())
}

fn main() {}
