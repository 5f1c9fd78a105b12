//! `pi-tools schema --dialect D`: the tools' wire descriptions for one provider.

use std::process::ExitCode;

use serde_json::Value;

use crate::config::ConfigSource;
use crate::dialect;

use super::mounted::Need;
use super::{Failure, SchemaArgs, emit, setup};

pub(super) async fn schema(args: SchemaArgs, config: &ConfigSource) -> Result<ExitCode, Failure> {
    let (toolbox, mounts) = setup::describing_toolbox(config, Need::ActiveOrAll(args.all)).await?;
    mounts.end().await;
    let tools = if args.all {
        toolbox.registered()
    } else {
        toolbox.active()
    };
    let schemas = tools
        .iter()
        .map(|tool| dialect::tool_schema(tool.as_ref(), args.dialect))
        .collect::<Result<Vec<Value>, _>>()
        .map_err(|e| Failure::general(e.to_string()))?;
    emit::print(&emit::json(&Value::Array(schemas)))?;
    Ok(ExitCode::SUCCESS)
}
