//! Per-call latency of the tools over SSH against the same calls locally.
//!
//! ```sh
//! scripts/bench-ssh.sh            # starts a throwaway sshd on 127.0.0.1 and runs this
//! ```
//!
//! Or by hand: `PI_TOOLS_SSH=alias PI_TOOLS_SSH_CONFIG=ssh_config cargo run --release
//! --example bench_ssh`. With `PI_TOOLS_HELPER` (the pi-tools binary to upload) the calls run
//! over SSH twice, side by side: through the one long-lived remote pi-tools process, and
//! without it (an SSH session per command, as when the remote has no pi-tools). With
//! `PI_TOOLS_CORPUS` set (a directory), grep and find run over it too: locally, through the
//! remote pi-tools, and walking the tree over SFTP. One SFTP stat is printed as the round
//! trip of the link.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::env::local::LocalEnv;
use pi_tools::env::remote::{SshEnv, SshTarget};
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{NoopSink, Registry, RunnerConfig, ToolCall, ToolSet, execute_tool_calls, wrap};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn call(tools: &ToolSet, env: &Arc<dyn ExecutionEnv>, name: &str, args: Value) -> Duration {
    call_via(tools, env, name, args, None).await
}

/// [`call`], checking that the search ran the way `via` says (`"helper"` or `"walk"`), as
/// the result's details record it.
async fn call_via(
    tools: &ToolSet,
    env: &Arc<dyn ExecutionEnv>,
    name: &str,
    args: Value,
    via: Option<&str>,
) -> Duration {
    let config = RunnerConfig::default().with_env(Arc::clone(env));
    let call = ToolCall::new("b", name, args);
    let started = Instant::now();
    let outcome = execute_tool_calls(
        tools,
        &[call],
        &config,
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    let took = started.elapsed();
    let message = &outcome.messages[0];
    assert!(!message.is_error, "{name} failed: {:?}", message.content);
    if let Some(via) = via {
        assert_eq!(message.details["via"], json!(via), "{name} ran another way");
    }
    took
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

async fn measure(
    tools: &ToolSet,
    env: &Arc<dyn ExecutionEnv>,
    dir: &Path,
    runs: usize,
) -> [(String, f64); 3] {
    // 300 distinct lines (about 2.7 KB); each edit toggles the case of one line.
    let text: String = (0..300).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("file.txt"), text).expect("write");
    let mut reads = Vec::new();
    let mut edits = Vec::new();
    let mut bashes = Vec::new();
    for i in 0..runs {
        reads.push(call(tools, env, "read", json!({"path": "file.txt", "limit": 20})).await);
        let (from, to) = if i % 2 == 0 {
            ("line 150\nline 151", "LINE 150\nline 151")
        } else {
            ("LINE 150\nline 151", "line 150\nline 151")
        };
        edits.push(
            call(
                tools,
                env,
                "edit",
                json!({"path": "file.txt", "edits": [{"oldText": from, "newText": to}]}),
            )
            .await,
        );
        bashes.push(call(tools, env, "bash", json!({"command": "echo hi"})).await);
    }
    [
        ("read (20 lines)".into(), median(reads)),
        ("edit (one replacement)".into(), median(edits)),
        ("bash `echo hi`".into(), median(bashes)),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let destination =
        std::env::var("PI_TOOLS_SSH").map_err(|_| "set PI_TOOLS_SSH (see the docs)")?;
    let mut target = SshTarget::parse(&destination)?;
    target.config_file = std::env::var_os("PI_TOOLS_SSH_CONFIG").map(PathBuf::from);
    if let Some(helper) = std::env::var_os("PI_TOOLS_HELPER") {
        target = target.with_upload_helper(Some(PathBuf::from(helper)));
    }
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(31);

    let registry = Registry::from_inventory()?;
    let tools: ToolSet = ["read", "edit", "bash", "grep", "find"]
        .iter()
        .map(|name| wrap(Arc::clone(registry.get(name).expect("built-in")), None))
        .collect();

    let local_dir = tempfile::tempdir()?;
    let remote_dir = tempfile::tempdir()?;
    let plain_dir = tempfile::tempdir()?;
    let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(local_dir.path()));
    let ssh = SshEnv::connect(target.clone(), remote_dir.path()).await?;
    let served = ssh.uses_remote_server().await;
    let remote: Arc<dyn ExecutionEnv> = Arc::new(ssh);
    let mut no_server = target.clone();
    no_server.upload_helper = false;
    let plain = SshEnv::connect(no_server, plain_dir.path()).await?;
    let plain_served = plain.uses_remote_server().await;
    let plain: Arc<dyn ExecutionEnv> = Arc::new(plain);
    let here = measure(&tools, &local, local_dir.path(), runs).await;
    let there = measure(&tools, &remote, remote_dir.path(), runs).await;
    let before = measure(&tools, &plain, plain_dir.path(), runs).await;
    let mut trips = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        remote.metadata(remote_dir.path()).await?;
        trips.push(started.elapsed());
    }
    println!("one round trip (an SFTP stat): {:.2} ms", median(trips));
    println!();
    let way = |served: bool| {
        if served {
            "one remote pi-tools process"
        } else {
            "an SSH session per command"
        }
    };
    println!(
        "| call | local ms | SSH, {} ms | SSH, {} ms |",
        way(served),
        way(plain_served)
    );
    println!("|---|---|---|---|");
    for (((name, l), (_, r)), (_, b)) in here.iter().zip(there.iter()).zip(before.iter()) {
        println!("| {name} | {l:.2} | {r:.2} | {b:.2} |");
    }

    if let Some(corpus) = std::env::var_os("PI_TOOLS_CORPUS") {
        let corpus = PathBuf::from(corpus);
        let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(&corpus));
        // Through the remote pi-tools (started by the first call, which is not measured), and
        // without it: the tree walked and read over SFTP.
        let helper: Arc<dyn ExecutionEnv> =
            Arc::new(SshEnv::connect(target.clone(), &corpus).await?);
        let mut plain = target;
        plain.upload_helper = false;
        let sftp: Arc<dyn ExecutionEnv> = Arc::new(SshEnv::connect(plain, &corpus).await?);
        let _ = call_via(
            &tools,
            &helper,
            "find",
            json!({"pattern": "*.none"}),
            Some("helper"),
        )
        .await;
        let queries = [
            (
                "grep `unsafe`, limit 100",
                "grep",
                json!({"pattern": "unsafe"}),
                5,
            ),
            (
                "find `*.rs` (limit 1000)",
                "find",
                json!({"pattern": "*.rs"}),
                5,
            ),
            (
                "grep `zzqqxx_no_such_thing_[0-9]+` (full scan)",
                "grep",
                json!({"pattern": "zzqqxx_no_such_thing_[0-9]+"}),
                1,
            ),
        ];
        println!();
        println!(
            "| query over the corpus | local ms | SSH, remote pi-tools ms | SSH, SFTP walk ms |"
        );
        println!("|---|---|---|---|");
        for (label, tool, query, sftp_runs) in queries {
            let (mut l, mut h, mut w) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..5 {
                l.push(call(&tools, &local, tool, query.clone()).await);
                h.push(call_via(&tools, &helper, tool, query.clone(), Some("helper")).await);
            }
            for _ in 0..sftp_runs {
                w.push(call_via(&tools, &sftp, tool, query.clone(), Some("walk")).await);
            }
            println!(
                "| {label} | {:.1} | {:.1} | {:.1} |",
                median(l),
                median(h),
                median(w)
            );
        }
    }
    Ok(())
}
