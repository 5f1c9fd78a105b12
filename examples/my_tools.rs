//! A crate with tools of its own gets the whole `pi-tools` command line, its tools included:
//! declare them with `#[tool]` and return `pi_tools::cli::main()` from a `main` that returns
//! the exit code: `fn main() -> std::process::ExitCode { pi_tools::cli::main() }`.
//!
//! ```text
//! cargo run --example my_tools -- catalog --all
//! echo '[{"id": "1", "name": "sleep_ms", "arguments": {"ms": 300}}]' \
//!     | cargo run --example my_tools -- run
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use pi_tools::{ToolContext, ToolResult, tool};

/// Wait the given number of milliseconds, then say how long it waited.
#[tool(snippet = "Wait a number of milliseconds", read_only)]
async fn sleep_ms(
    ctx: &ToolContext,
    /// How long to wait, in milliseconds.
    ms: u64,
) -> Result<String, String> {
    ctx.update(ToolResult::text(format!("waiting {ms} ms")));
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("slept {ms} ms")),
        () = ctx.cancellation().cancelled() => Err(format!("cancelled before {ms} ms had passed")),
    }
}

/// Repeat a text in capital letters.
#[tool(snippet = "Repeat a text in capital letters", read_only)]
async fn shout(
    /// The text to repeat.
    text: String,
) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err("There is nothing to shout: pass a non-empty `text`.".to_owned());
    }
    Ok(text.to_uppercase())
}

/// Fill `{name}` placeholders in a template with the given values.
#[tool(snippet = "Fill {name} placeholders in a template", read_only)]
async fn fill(
    /// The text with `{name}` placeholders.
    template: String,
    /// The value of each placeholder, by name.
    values: BTreeMap<String, String>,
) -> Result<String, String> {
    let mut text = template;
    for (name, value) in &values {
        text = text.replace(&format!("{{{name}}}"), value);
    }
    Ok(text)
}

fn main() -> ExitCode {
    pi_tools::cli::main()
}
