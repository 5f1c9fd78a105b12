//! One agent, several machines: each batch of tool calls runs in the execution environment
//! it is given, so the same tools work on this machine and on remote ones over SSH.
//!
//! ```sh
//! cargo run --example remote -- build-box:/srv/project other@10.0.0.7:2222/home/other/app
//! ```
//!
//! Each argument is `[user@]host[:port]/absolute/path` (host may be an alias of
//! `~/.ssh/config`); the local machine's current directory is always the first workspace.
//! The example reads `Cargo.toml` (or lists the directory when there is none) and runs
//! `uname -n` in every workspace, one batch per machine, all batches at once.

use std::sync::Arc;

use pi_tools::env::local::LocalEnv;
use pi_tools::env::remote::{SshEnv, SshTarget};
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{NoopSink, Registry, RunnerConfig, ToolCall, ToolSet, execute_tool_calls, wrap};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Splits `[user@]host[:port]/abs/path` into the target and the remote directory.
fn parse(spec: &str) -> Result<(SshTarget, String), String> {
    let slash = spec
        .find('/')
        .ok_or_else(|| format!("`{spec}` has no /absolute/path after the host"))?;
    let target = SshTarget::parse(&spec[..slash])?;
    Ok((target, spec[slash..].to_string()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::from_inventory()?;
    let tools: ToolSet = ["read", "bash", "ls"]
        .iter()
        .map(|name| wrap(Arc::clone(registry.get(name).expect("built-in tool")), None))
        .collect();

    let mut envs: Vec<(String, Arc<dyn ExecutionEnv>)> = vec![(
        "local".into(),
        Arc::new(LocalEnv::new(std::env::current_dir()?)),
    )];
    for spec in std::env::args().skip(1) {
        let (target, dir) = parse(&spec)?;
        let env = SshEnv::connect(target, dir).await?;
        envs.push((spec, Arc::new(env)));
    }

    let calls = [
        ToolCall::new("1", "read", json!({"path": "Cargo.toml", "limit": 5})),
        ToolCall::new("2", "bash", json!({"command": "uname -n"})),
    ];
    let batches = envs.iter().map(|(name, env)| {
        let config = RunnerConfig::default().with_env(Arc::clone(env));
        let tools = &tools;
        let calls = &calls;
        async move {
            let outcome =
                execute_tool_calls(tools, calls, &config, &CancellationToken::new(), &NoopSink)
                    .await;
            (name, outcome)
        }
    });
    for (name, outcome) in futures::future::join_all(batches).await {
        println!("== {name}");
        for message in outcome.messages {
            let text: Vec<&str> = message.content.iter().filter_map(|b| b.as_text()).collect();
            let mark = if message.is_error { "error" } else { "ok" };
            println!("[{mark}] {}: {}", message.tool_name, text.join("\n"));
        }
    }
    Ok(())
}
