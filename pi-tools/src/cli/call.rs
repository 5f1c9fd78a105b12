//! `pi-tools call NAME --args JSON`: runs one registered tool (active or not) in a directory
//! under the configuration's `[policy]` (a call it says `ask` for is put to the person at the
//! terminal, as `pi-tools run` does, and denied without one) and prints its result message
//! as one JSON line; and `pi-tools env-server`, which serves this machine's commands and
//! tool calls to an SSH environment on another machine over its stdin and stdout (see
//! `env::link`), running tool calls the same way (the policy was applied where the call was
//! made).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::core::{
    NoopSink, RunnerConfig, ToolCall, ToolResultMessage, ToolSet, execute_tool_calls,
};
use crate::env::WithEnv;
use crate::env::local::LocalEnv;
use crate::policy::PolicyHook;
use crate::tool::wrap;

use super::{CallArgs, EnvGuardArgs, EnvServerArgs, Failure, emit, setup};
use crate::config::ConfigSource;

pub(super) async fn call(args: CallArgs, source: &ConfigSource) -> Result<ExitCode, Failure> {
    let cwd = setup::working_directory(args.cwd.as_deref())?;
    let arguments: Value = serde_json::from_str(&args.args).map_err(|e| {
        Failure::usage(format!(
            "--args is not JSON ({e}); give the tool's arguments as one JSON object"
        ))
    })?;
    let message = run_one(
        args.name,
        cwd,
        arguments,
        Some(source),
        CancellationToken::new(),
    )
    .await
    .map_err(Failure::usage)?;
    let line = serde_json::to_string(&message)
        .map_err(|e| Failure::general(format!("the result could not be written as JSON: {e}")))?;
    emit::print(&line)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs the registered tool `name` once in `cwd`, on this machine, or the tool the
/// configuration `source` names declares; an unknown name is an error that lists the tools.
///
/// With a configuration (`pi-tools call`) the tool works in the environment it describes
/// ([`Config::local_env`](crate::config::Config::local_env): `[paths]` and `[sandbox]`), as
/// under `run`, `mcp` and a program's own toolbox, so the configuration means the same in
/// every front. Without one (the `env-server` of an SSH environment, serving this machine
/// to a process elsewhere) it works in `cwd` unconfined, as the SSH environment does.
async fn run_one(
    name: String,
    cwd: PathBuf,
    arguments: Value,
    source: Option<&ConfigSource>,
    cancel: CancellationToken,
) -> Result<ToolResultMessage, String> {
    let mut registered = setup::registered().map_err(|f| f.to_string())?;
    let config = match source {
        Some(source) => Some(setup::config(source, &registered).map_err(|f| f.to_string())?),
        None => None,
    };
    if let Some(config) = &config
        && !registered.iter().any(|d| d.spec().name == name)
    {
        registered.extend(crate::declared::definitions(config));
    }
    let env = match &config {
        Some(config) => config.local_env(&cwd).map_err(|e| e.to_string())?,
        None => LocalEnv::new(&cwd),
    };
    let Some(definition) = registered.iter().find(|d| d.spec().name == name) else {
        let names: Vec<&str> = registered.iter().map(|d| d.spec().name.as_str()).collect();
        return Err(format!(
            "no tool called `{name}` is registered; the registered tools are: {}",
            names.join(", ")
        ));
    };
    let tools = ToolSet::new([wrap(Arc::clone(definition), None)]);
    let mut runner = RunnerConfig::default().with_env(Arc::new(env));
    if let Some(config) = config.filter(|c| c.policy.is_active()) {
        let hook = PolicyHook::new(Arc::new(config.policy), runner.extensions.clone());
        let hook = match super::approve::TerminalApprover::open() {
            Some(approver) => hook.with_approver(Arc::new(approver)),
            None => hook,
        };
        runner.before_tool_call = Some(Arc::new(hook));
    }
    let call = ToolCall::new("call", name, arguments);
    let mut outcome = execute_tool_calls(&tools, &[call], &runner, &cancel, &NoopSink).await;
    outcome
        .messages
        .pop()
        .ok_or_else(|| "the tool call gave no result".to_owned())
}

/// `pi-tools env-server`: serves until standard input ends, then ends every process its
/// commands left. With `--check`, says which version and protocol it serves.
pub(super) async fn env_server(args: EnvServerArgs) -> Result<ExitCode, Failure> {
    if args.check {
        emit::print(crate::env::remote::link::SERVES)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runner: crate::env::remote::link::server::CallRunner =
        Arc::new(|name, cwd, arguments, cancel| {
            Box::pin(run_one(name, cwd, arguments, None, cancel))
        });
    let make_session: crate::env::remote::link::server::SessionMaker =
        Arc::new(|cwd| Arc::new(crate::env::local::LocalEnv::new(cwd)));
    crate::env::remote::link::server::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
        runner,
        make_session,
    )
    .await
    .map_err(|e| Failure::general(format!("the environment link failed: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// `pi-tools env-guard <mark>`: started by `env-server`; once its input ends (the server is
/// gone, however it went), kills every process the server's commands left.
pub(super) async fn env_guard(args: EnvGuardArgs) -> Result<ExitCode, Failure> {
    let _ = tokio::task::spawn_blocking(move || crate::env::guard::watch(&args.mark)).await;
    Ok(ExitCode::SUCCESS)
}
