use pi_tools::tool;

/// Echo the text.
#[tool]
async fn echo(text: String) {
    let _ = text;
}

fn main() {}
