//! Nothing a bash call starts is left behind: processes that leave the call's process group
//! (`setsid`, `setsid -f`, `set -m`) die with the call, whether it exits, times out or is
//! cancelled; background jobs (`cmd &`, double forks) outlive the call but not the session.
//! Survivors are counted in /proc, for both ways of tracking processes.
#![cfg(feature = "builtins")]

use support::procfs;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::builtins::bash::{BashArgs, BashConfig, BashTool, bash};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecRequest, ExecutionEnv, ProcessTracking, WithEnv};
use pi_tools::{NoopSink, RunnerConfig, ToolCall, ToolContext, ToolSet, execute_tool_calls, wrap};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use procfs::{alive, tag};

/// Waits (up to 3 s) until no process holds `tag`; fails naming the survivors.
async fn assert_none_survive(tag: &str) {
    let start = Instant::now();
    loop {
        let left = alive(tag);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "processes survived: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (up to 3 s) until `n` processes hold `tag`.
async fn wait_for(tag: &str, n: usize) {
    let start = Instant::now();
    while alive(tag).len() < n {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "expected {n} processes, found {:?}",
            alive(tag)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A command whose processes leave its group in every way: `setsid`, `setsid -f`, `set -m`
/// and a `setsid` that forks again, each running `sleep <tag>`.
fn escapes(tag: &str) -> String {
    format!(
        "setsid sleep {tag} >/dev/null 2>&1 & setsid -f sleep {tag} >/dev/null 2>&1; \
         (set -m; sleep {tag} >/dev/null 2>&1 &); \
         setsid -f sh -c 'sleep {tag} & exit' >/dev/null 2>&1; "
    )
}

/// Background jobs that stay in the call's group: `&` and a double fork.
fn background(tag: &str) -> String {
    format!("sleep {tag} >/dev/null 2>&1 & (sleep {tag} >/dev/null 2>&1 &); ")
}

fn env(tracking: ProcessTracking) -> (tempfile::TempDir, Arc<dyn ExecutionEnv>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = LocalEnv::new(tmp.path()).with_process_tracking(tracking);
    (tmp, Arc::new(env))
}

fn ctx(env: &Arc<dyn ExecutionEnv>, cancel: CancellationToken) -> ToolContext {
    ToolContext::new("call", cancel).with_env(Arc::clone(env))
}

fn args(command: String, timeout: Option<f64>) -> BashArgs {
    BashArgs {
        timeout,
        ..BashArgs::new(command)
    }
}

async fn escaped_processes_die_when_the_call_ends(tracking: ProcessTracking) {
    let (_tmp, env) = env(tracking);
    let (out, jobs) = (tag(), tag());
    let command = format!("{}{}echo done", escapes(&out), background(&jobs));
    let result = bash(
        &ctx(&env, CancellationToken::new()),
        &BashConfig::default(),
        args(command, None),
    )
    .await
    .expect("the call succeeds");
    assert_eq!(result.content[0].as_text(), Some("done"));
    assert_none_survive(&out).await;
    // The background jobs are the session's: alive until it ends.
    wait_for(&jobs, 2).await;
    env.end_session();
    assert!(alive(&jobs).is_empty(), "{:?}", alive(&jobs));
}

#[tokio::test]
async fn escaped_processes_die_when_the_call_ends_cgroup() {
    escaped_processes_die_when_the_call_ends(ProcessTracking::Auto).await;
}

#[tokio::test]
async fn escaped_processes_die_when_the_call_ends_proc_scan() {
    escaped_processes_die_when_the_call_ends(ProcessTracking::ProcScan).await;
}

async fn a_timeout_leaves_nothing(tracking: ProcessTracking) {
    let (_tmp, env) = env(tracking);
    let t = tag();
    let command = format!("{}{}sleep {t}", escapes(&t), background(&t));
    let err = bash(
        &ctx(&env, CancellationToken::new()),
        &BashConfig::default(),
        args(command, Some(0.5)),
    )
    .await
    .expect_err("timeout");
    assert!(
        err.message()
            .ends_with("Command timed out after 0.5 seconds"),
        "{}",
        err.message()
    );
    assert_none_survive(&t).await;
}

#[tokio::test]
async fn a_timeout_leaves_nothing_cgroup() {
    a_timeout_leaves_nothing(ProcessTracking::Auto).await;
}

#[tokio::test]
async fn a_timeout_leaves_nothing_proc_scan() {
    a_timeout_leaves_nothing(ProcessTracking::ProcScan).await;
}

async fn cancelling_leaves_nothing(tracking: ProcessTracking) {
    let (_tmp, env) = env(tracking);
    let t = tag();
    let cancel = CancellationToken::new();
    let watcher = {
        let (cancel, t) = (cancel.clone(), t.clone());
        tokio::spawn(async move {
            // Cancel once all seven sleeps run: six started in the background and the last.
            wait_for(&t, 7).await;
            cancel.cancel();
        })
    };
    let command = format!("{}{}sleep {t}", escapes(&t), background(&t));
    let err = bash(
        &ctx(&env, cancel),
        &BashConfig::default(),
        args(command, None),
    )
    .await
    .expect_err("aborted");
    watcher.await.expect("watcher");
    assert!(
        err.message().ends_with("Command aborted"),
        "{}",
        err.message()
    );
    assert_none_survive(&t).await;
}

#[tokio::test]
async fn cancelling_leaves_nothing_cgroup() {
    cancelling_leaves_nothing(ProcessTracking::Auto).await;
}

#[tokio::test]
async fn cancelling_leaves_nothing_proc_scan() {
    cancelling_leaves_nothing(ProcessTracking::ProcScan).await;
}

#[tokio::test]
async fn dropping_the_environment_ends_its_background_jobs() {
    let (_tmp, env) = env(ProcessTracking::Auto);
    let t = tag();
    bash(
        &ctx(&env, CancellationToken::new()),
        &BashConfig::default(),
        args(background(&t), None),
    )
    .await
    .expect("the call succeeds");
    wait_for(&t, 2).await;
    drop(env);
    assert!(alive(&t).is_empty(), "{:?}", alive(&t));
}

#[tokio::test]
async fn ending_a_session_ends_a_running_command() {
    let (_tmp, env) = env(ProcessTracking::Auto);
    let t = tag();
    let call = {
        let env = Arc::clone(&env);
        let command = format!("{}sleep {t}", escapes(&t));
        tokio::spawn(async move {
            bash(
                &ctx(&env, CancellationToken::new()),
                &BashConfig::default(),
                args(command, None),
            )
            .await
        })
    };
    wait_for(&t, 5).await;
    env.end_session();
    let err = call.await.expect("task").expect_err("killed");
    assert!(
        err.message()
            .ends_with("Command was killed by signal 9 (SIGKILL)"),
        "{}",
        err.message()
    );
    assert_none_survive(&t).await;
}

/// The two huge timeouts of the report, through the runner as a model's call would come:
/// refused by validation before anything runs.
#[tokio::test]
async fn a_huge_timeout_is_refused_before_anything_runs() {
    let (_tmp, env) = env(ProcessTracking::Auto);
    let tools = ToolSet::new([wrap(Arc::new(BashTool), None)]);
    let config = RunnerConfig::default().with_env(Arc::clone(&env));
    let t = tag();
    for timeout in [json!(9223372036854775807_u64), json!(1e300), json!(-1)] {
        let calls = [ToolCall::new(
            "1",
            "bash",
            json!({"command": format!("sleep {t}"), "timeout": timeout}),
        )];
        let outcome = execute_tool_calls(
            &tools,
            &calls,
            &config,
            &CancellationToken::new(),
            &NoopSink,
        )
        .await;
        let message = &outcome.messages[0];
        assert!(message.is_error, "{message:?}");
        let text = message.content[0].as_text().expect("text");
        assert!(text.contains("timeout"), "{text}");
        assert!(alive(&t).is_empty(), "{:?}", alive(&t));
    }
}

#[tokio::test]
async fn a_huge_timeout_given_directly_is_a_clear_error() {
    let (_tmp, env) = env(ProcessTracking::Auto);
    let t = tag();
    for timeout in [9223372036854775807.0, 1e300, f64::INFINITY, -1.0] {
        let err = bash(
            &ctx(&env, CancellationToken::new()),
            &BashConfig::default(),
            args(format!("sleep {t}"), Some(timeout)),
        )
        .await
        .expect_err("refused");
        assert_eq!(
            err.message(),
            format!(
                "The timeout {timeout} is not a usable number of seconds. Give a number from 0 to 86400 (a day), such as 60, or leave it out."
            )
        );
        assert!(alive(&t).is_empty(), "{:?}", alive(&t));
    }
}

#[tokio::test]
async fn the_longest_timeouts_the_clock_cannot_hold_mean_none() {
    let (_tmp, env) = env(ProcessTracking::Auto);
    let config = BashConfig {
        timeout_secs: u64::MAX,
        ..BashConfig::default()
    };
    let out = bash(
        &ctx(&env, CancellationToken::new()),
        &config,
        args("echo ok".into(), None),
    )
    .await
    .expect("runs");
    assert_eq!(out.content[0].as_text(), Some("ok"));
    let request = ExecRequest {
        command: "true".into(),
        cwd: std::env::temp_dir(),
        timeout: Some(Duration::MAX),
        env: Vec::new(),
    };
    let outcome = env
        .exec(request, CancellationToken::new(), Box::new(|_| {}))
        .await
        .expect("runs");
    assert_eq!(outcome.exit_code, Some(0));
}

#[tokio::test]
async fn a_nul_byte_in_the_command_is_named() {
    let (_tmp, env) = env(ProcessTracking::Auto);
    let err = bash(
        &ctx(&env, CancellationToken::new()),
        &BashConfig::default(),
        args("echo a\0b".into(), None),
    )
    .await
    .expect_err("refused");
    assert_eq!(
        err.message(),
        "The command contains a NUL byte (\\0), which no command line can carry. Remove it; to print one, write printf '\\0'."
    );
    let request = ExecRequest {
        command: "echo a\0b".into(),
        cwd: std::env::temp_dir(),
        timeout: None,
        env: Vec::new(),
    };
    let err = env
        .exec(request, CancellationToken::new(), Box::new(|_| {}))
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("NUL byte"), "{err}");
}
