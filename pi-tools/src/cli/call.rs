//! `pi-tools call NAME --args JSON`: runs one registered tool (active or not) in a directory
//! and prints its result message as one JSON line.
//!
//! This is how the SSH environment runs grep and find next to the files: it starts the
//! remote machine's `pi-tools call grep …` and reads the result back, so a remote search
//! gives exactly what a local one would.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::core::{Extensions, NoopSink, RunnerConfig, ToolCall, ToolSet, execute_tool_calls};
use crate::env::{ExecutionEnv, LocalEnv};
use crate::tool::wrap;

use super::{CallArgs, Failure, emit, setup};

pub(super) async fn call(args: CallArgs) -> Result<ExitCode, Failure> {
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let registered = setup::registered()?;
    let Some(definition) = registered.iter().find(|d| d.name() == args.name) else {
        let names: Vec<&str> = registered.iter().map(|d| d.name()).collect();
        return Err(Failure::usage(format!(
            "no tool called `{}` is registered; the registered tools are: {}",
            args.name,
            names.join(", ")
        )));
    };
    let arguments: Value = serde_json::from_str(&args.args).map_err(|e| {
        Failure::usage(format!(
            "--args is not JSON ({e}); give the tool's arguments as one JSON object"
        ))
    })?;
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(&cwd));
    let tools = ToolSet::new([wrap(Arc::clone(definition), None)]);
    let config = RunnerConfig {
        extensions: Extensions::new().with(env),
        ..RunnerConfig::default()
    };
    let call = ToolCall {
        id: "call".into(),
        name: args.name.clone(),
        arguments,
    };
    let outcome = execute_tool_calls(
        &tools,
        &[call],
        &config,
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    for message in &outcome.messages {
        let line = serde_json::to_string(message).map_err(|e| {
            Failure::general(format!("the result could not be written as JSON: {e}"))
        })?;
        emit::print(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}
