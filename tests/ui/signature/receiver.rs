use pi_tools::{ToolError, tool};

struct Echo;

impl Echo {
    /// Echo the text.
    #[tool]
    async fn echo(&self, text: String) -> Result<String, ToolError> {
        Ok(text)
    }
}

fn main() {
    let _ = Echo;
}
