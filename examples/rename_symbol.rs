//! A tool composed of built-ins: `rename_symbol` asks grep for every file that has a name,
//! then asks edit to replace it in each, both through `ctx.call_tool_as`. The nested calls go
//! through the same pipeline as the model's (validation, the policy and its approver, hooks,
//! the per-file mutation queue), and their typed results are read as the built-ins' own
//! result types. The tool returns a typed result too, so its output schema is in the catalog.
//!
//! Run with `cargo run --example rename_symbol`: it renames a function in a scratch
//! directory, prints the tool's catalog entry, then the call's text and structured result.

use std::sync::Arc;

use pi_tools::builtins::results::{EditResult, GrepResult};
use pi_tools::config::Config;
use pi_tools::env::WithEnv;
use pi_tools::schemars::JsonSchema;
use pi_tools::toolbox::Toolbox;
use pi_tools::{
    CancellationToken, Extensions, NoopSink, Registry, ToolCall, ToolContext, ToolError,
    execute_tool_calls, tool,
};
use serde::Serialize;
use serde_json::json;

/// What a rename changed.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "pi_tools::schemars")]
struct Renamed {
    /// The lines grep found the name on.
    found: usize,
    /// Each file changed, in the order grep found them.
    files: Vec<RenamedFile>,
}

/// One file a rename changed.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(crate = "pi_tools::schemars")]
struct RenamedFile {
    /// The file, as grep named it.
    path: String,
    /// The lines of the file that changed.
    lines: Vec<u64>,
}

/// Rename a name in every file under a directory that has it: each occurrence of the text,
/// as a plain string, is replaced.
#[tool(destructive)]
async fn rename_symbol(
    ctx: &ToolContext,
    /// The name as it is now.
    from: String,
    /// The new name.
    to: String,
    /// The directory to search (default: the working directory).
    path: Option<String>,
) -> Result<Renamed, ToolError> {
    let dir = path.unwrap_or_else(|| ".".to_owned());
    let grep: GrepResult = ctx
        .call_tool_as(
            "grep",
            json!({"pattern": from, "literal": true, "path": dir, "limit": 1000}),
        )
        .await?;
    if grep.truncated || grep.limit_reached {
        return Err(ToolError::new(format!(
            "`{from}` is in more places than one grep shows, so nothing was renamed. Give a narrower `path` and rename part by part."
        )));
    }
    let mut paths: Vec<&str> = Vec::new();
    for hit in &grep.matches {
        if !paths.contains(&hit.path.as_str()) {
            paths.push(&hit.path);
        }
    }
    let mut files = Vec::new();
    for file in paths {
        let edited: EditResult = ctx
            .call_tool_as(
                "edit",
                json!({
                    "path": format!("{dir}/{file}"),
                    "edits": [{"oldText": from, "newText": to, "replaceAll": true}]
                }),
            )
            .await?;
        files.push(RenamedFile {
            path: file.to_owned(),
            lines: edited
                .changed_lines
                .iter()
                .flat_map(|span| span.start..=span.end)
                .collect(),
        });
    }
    Ok(Renamed {
        found: grep.matches.len(),
        files,
    })
}

const CONFIG: &str = r#"
[tools]
active = ["grep", "edit", "rename_symbol"]
"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::create_dir(dir.path().join("src"))?;
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "pub fn old_name() -> u32 {\n    1\n}\n",
    )?;
    std::fs::write(
        dir.path().join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", demo::old_name());\n}\n",
    )?;

    let registry = Registry::from_inventory()?;
    let registered: Vec<_> = registry.iter().cloned().collect();
    let config = Config::parse(CONFIG, "pi-tools.toml", &registered)?;
    let env = config.local_env(dir.path())?;
    let toolbox = Toolbox::new(
        registered,
        &config,
        Extensions::new().with_env(Arc::new(env)),
    );

    let catalog = toolbox.catalog(false);
    let entry = catalog
        .tools
        .iter()
        .find(|t| t.name == "rename_symbol")
        .ok_or("rename_symbol is not in the catalog")?;
    println!(
        "Output schema of rename_symbol:\n{}\n",
        serde_json::to_string_pretty(&entry.output)?
    );

    let call = ToolCall::new(
        "1",
        "rename_symbol",
        json!({"from": "old_name", "to": "new_name", "path": "src"}),
    );
    let outcome = execute_tool_calls(
        toolbox.tool_set(),
        &[call],
        &toolbox.runner_config(),
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    let message = &outcome.messages[0];
    println!("Text for the model: {}", message.text_content());
    println!(
        "Structured result: {}",
        serde_json::to_string_pretty(&message.structured_content)?
    );
    print!(
        "src/main.rs now:\n{}",
        std::fs::read_to_string(dir.path().join("src/main.rs"))?
    );
    Ok(())
}
