//! `pi-tools schema --dialect D`: the tools' wire descriptions for one provider.

use std::process::ExitCode;

use serde_json::Value;

use crate::config::ConfigSource;
use crate::dialect;

use super::mounted::Need;
use super::{Failure, SchemaArgs, emit, setup};

/// Prints the schemas the dialect can express; each tool it cannot is left out and named on
/// standard error, so one mounted tool cannot hide the others (`--strict-catalog`: print
/// nothing and fail instead).
pub(super) async fn schema(args: SchemaArgs, config: &ConfigSource) -> Result<ExitCode, Failure> {
    let (toolbox, mounts) = setup::describing_toolbox(config, Need::ActiveOrAll(args.all)).await?;
    mounts.end().await;
    // The active tools as the dialect's model is offered them (its native tools with
    // `[tools] shapes = "native"`); `--all` lists every registered tool in its own shape.
    let rendered = if args.all {
        let tools = toolbox.registered();
        dialect::tool_schemas(tools.iter().map(|t| t.as_ref()), args.dialect)
    } else {
        toolbox.dialect_schemas(args.dialect)
    };
    let report = rendered.report();
    if args.strict_catalog && !report.is_empty() {
        return Err(Failure::general(format!(
            "{} of the tools cannot be expressed in the {} dialect (--strict-catalog prints nothing then; without it they are left out):\n{}",
            report.len(),
            args.dialect,
            report.join("\n")
        )));
    }
    for line in &report {
        eprintln!("pi-tools: {line}");
    }
    emit::print(&emit::json(&Value::Array(rendered.schemas)))?;
    Ok(ExitCode::SUCCESS)
}
