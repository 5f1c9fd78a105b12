//! The bash tool with real processes: results, exit codes, signals, timeouts, cancellation,
//! process-group cleanup, background jobs, update throttling, UTF-8, truncation and spilling.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::builtins::bash::{BashArgs, BashConfig, BashDetails, BashTool, bash};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{
    CollectingSink, Extensions, RunnerConfig, ToolCall, ToolContext, ToolError, ToolEvent, ToolSet,
    execute_tool_calls, wrap,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn extensions(dir: &Path) -> Extensions {
    Extensions::new().with_env(Arc::new(LocalEnv::new(dir)))
}

fn ctx_with(dir: &Path, cancel: CancellationToken) -> ToolContext {
    ToolContext::new("call", cancel).with_extensions(extensions(dir))
}

fn args(command: &str, timeout: Option<f64>) -> BashArgs {
    BashArgs {
        timeout,
        ..BashArgs::new(command)
    }
}

async fn ok(command: &str) -> (String, BashDetails) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = bash(
        &ctx_with(tmp.path(), CancellationToken::new()),
        &BashConfig::default(),
        args(command, None),
    )
    .await
    .expect("command succeeds");
    (
        out.content[0].as_text().expect("text").to_string(),
        out.details.expect("details"),
    )
}

async fn failed(command: &str, timeout: Option<f64>) -> ToolError {
    let tmp = tempfile::tempdir().expect("tempdir");
    bash(
        &ctx_with(tmp.path(), CancellationToken::new()),
        &BashConfig::default(),
        args(command, timeout),
    )
    .await
    .expect_err("command fails")
}

/// Processes (not yet reaped zombies excluded) whose process group is `pgid`.
fn group_members(pgid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command name: state, ppid, pgrp, …
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            found.push(pid);
        }
    }
    found
}

async fn assert_group_gone(pgid: i32) {
    let start = Instant::now();
    while !group_members(pgid).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "processes of group {pgid} survived: {:?}",
            group_members(pgid)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_simple_command_returns_its_output() {
    let (text, details) = ok("echo hello; echo err >&2").await;
    assert_eq!(text, "hello\nerr");
    assert_eq!(details.exit_code, Some(0));
    assert_eq!((details.total_lines, details.total_bytes), (2, 10));
}

#[tokio::test]
async fn empty_output_reads_as_no_output() {
    assert_eq!(ok("true").await.0, "(no output)");
}

#[tokio::test]
async fn the_command_runs_in_the_working_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("marker.txt"), "").expect("write");
    let out = bash(
        &ctx_with(tmp.path(), CancellationToken::new()),
        &BashConfig::default(),
        args("ls; cat", None),
    )
    .await
    .expect("ok");
    // stdin is /dev/null, so `cat` ends at once.
    assert_eq!(out.content[0].as_text(), Some("marker.txt"));
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_with_the_output() {
    let err = failed("echo out; exit 3", None).await;
    assert_eq!(err.message(), "out\n\nCommand exited with code 3");
    assert_eq!(err.details()["exitCode"], json!(3));
}

#[tokio::test]
async fn death_by_a_signal_is_an_error() {
    let err = failed("echo before; kill -9 $$", None).await;
    assert_eq!(
        err.message(),
        "before\n\nCommand was killed by signal 9 (SIGKILL)"
    );
    assert_eq!(err.details()["signal"], json!(9));
}

#[tokio::test]
async fn a_timeout_kills_the_whole_group_and_keeps_the_output() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let err = bash(
        &ctx_with(tmp.path(), CancellationToken::new()),
        &BashConfig::default(),
        args("echo $$; sleep 30 & sleep 30", Some(0.5)),
    )
    .await
    .expect_err("timeout");
    assert!(started.elapsed() < Duration::from_secs(5));
    let (pid, rest) = err.message().split_once('\n').expect("pid line");
    assert_eq!(rest, "\nCommand timed out after 0.5 seconds");
    assert_eq!(err.details()["timedOut"], json!(true));
    assert_group_gone(pid.parse().expect("pid")).await;
}

#[tokio::test]
async fn the_configured_timeout_applies_when_the_call_gives_none() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = BashConfig {
        timeout_secs: 1,
        ..BashConfig::default()
    };
    let ctx = ctx_with(tmp.path(), CancellationToken::new());
    let err = bash(&ctx, &config, args("sleep 30", None))
        .await
        .expect_err("timeout");
    assert_eq!(
        err.message(),
        "(no output)\n\nCommand timed out after 1 second"
    );
}

#[tokio::test]
async fn cancelling_kills_the_whole_group() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        trigger.cancel();
    });
    let err = bash(
        &ctx_with(tmp.path(), cancel),
        &BashConfig::default(),
        args("echo $$; (sleep 30; echo never) & sleep 30", None),
    )
    .await
    .expect_err("aborted");
    let (pid, rest) = err.message().split_once('\n').expect("pid line");
    assert_eq!(rest, "\nCommand aborted");
    assert_group_gone(pid.parse().expect("pid")).await;
}

#[tokio::test]
async fn a_background_job_does_not_hold_the_call() {
    let started = Instant::now();
    let (text, _) = ok("echo $$; sleep 30 & echo started").await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let (pid, rest) = text.split_once('\n').expect("two lines");
    assert_eq!(rest, "started");
    // Clean up the background sleep.
    if let Ok(pgid) = pid.parse::<i32>() {
        // SAFETY: sends a signal to the group this test started.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

#[tokio::test]
async fn utf8_split_across_writes_stays_intact() {
    // "é" is C3 A9 and "✓" is E2 9C 93; each half is written separately.
    let (text, _) =
        ok(r"printf 'caf\303'; sleep 0.05; printf '\251 \342\234'; sleep 0.05; printf '\223\n'")
            .await;
    assert_eq!(text, "café ✓");
}

#[tokio::test]
async fn a_trailing_newline_is_not_a_line() {
    let (_, details) = ok("printf 'a\\nb\\n'").await;
    assert_eq!(details.total_lines, 2);
    let (_, details) = ok("printf 'a\\nb'").await;
    assert_eq!(details.total_lines, 2);
}

/// Runs `command` in an environment that stays open (its spill files with it) until the
/// returned environment is dropped.
async fn ok_in_session(command: &str) -> (String, BashDetails, Arc<dyn ExecutionEnv>) {
    // The commands write nothing: the system's temporary directory will do as the cwd.
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(std::env::temp_dir()));
    let ctx = ToolContext::new("call", CancellationToken::new()).with_env(Arc::clone(&env));
    let out = bash(&ctx, &BashConfig::default(), args(command, None))
        .await
        .expect("command succeeds");
    (
        out.content[0].as_text().expect("text").to_string(),
        out.details.expect("details"),
        env,
    )
}

#[tokio::test]
async fn long_output_keeps_the_tail_and_spills_every_byte() {
    let (text, details, _session) = ok_in_session("seq 1 3000").await;
    let expected_tail: Vec<String> = (1001..=3000).map(|i| i.to_string()).collect();
    let path = details.full_output_path.clone().expect("spill file");
    assert_eq!(
        text,
        format!(
            "{}\n\n[Showing lines 1001-3000 of 3000. Full output: {path}]",
            expected_tail.join("\n")
        )
    );
    let full: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).expect("spill"), full);
}

/// A session's spill files are deleted when it ends, and when its environment is dropped.
#[tokio::test]
async fn spill_files_are_deleted_when_the_session_ends() {
    let (_, first, session) = ok_in_session("seq 1 3000").await;
    let first = first.full_output_path.expect("spill file");
    let ctx = ToolContext::new("call", CancellationToken::new()).with_env(Arc::clone(&session));
    let second = bash(&ctx, &BashConfig::default(), args("seq 1 4000", None))
        .await
        .expect("command succeeds")
        .details
        .expect("details")
        .full_output_path
        .expect("spill file");
    assert!(Path::new(&first).is_file() && Path::new(&second).is_file());
    session.end_session();
    assert!(!Path::new(&first).exists(), "{first} is left");
    assert!(!Path::new(&second).exists(), "{second} is left");

    let (_, details, session) = ok_in_session("seq 1 3000").await;
    let path = details.full_output_path.expect("spill file");
    assert!(Path::new(&path).is_file());
    drop(ctx);
    drop(session);
    assert!(!Path::new(&path).exists(), "{path} is left");
}

#[tokio::test]
async fn a_huge_last_line_shows_its_end() {
    let (text, details, _session) = ok_in_session("head -c 60000 /dev/zero | tr '\\0' x").await;
    let path = details.full_output_path.clone().expect("spill file");
    assert_eq!(
        text,
        format!(
            "{}\n\n[Showing the last 50.0KB of line 1 (the line is 58.6KB). Full output: {path}]",
            "x".repeat(51200)
        )
    );
    assert_eq!(std::fs::read(&path).expect("spill").len(), 60000);
}

#[tokio::test]
async fn a_missing_cwd_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let gone = tmp.path().join("gone");
    let err = bash(
        &ctx_with(&gone, CancellationToken::new()),
        &BashConfig::default(),
        args("echo hi", None),
    )
    .await
    .expect_err("missing cwd");
    assert!(
        err.message().starts_with(&format!(
            "The command could not be run: the working directory {} does not exist",
            gone.display()
        )),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn many_lines_produce_few_throttled_updates() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The tool as the macro generates it and the registry wraps it.
    let tools = ToolSet::new([wrap(Arc::new(BashTool), None)]);
    let config = RunnerConfig {
        extensions: extensions(tmp.path()),
        ..RunnerConfig::default()
    };
    let calls = [ToolCall::new(
        "1",
        "bash",
        json!({"command": "for i in $(seq 1 5000); do echo line $i; done"}),
    )];
    let sink = CollectingSink::new();
    let outcome =
        execute_tool_calls(&tools, &calls, &config, &CancellationToken::new(), &sink).await;
    assert!(!outcome.messages[0].is_error);
    let updates = sink
        .events()
        .into_iter()
        .filter(|e| matches!(e, ToolEvent::ToolExecutionUpdate { .. }))
        .count();
    assert!((1..25).contains(&updates), "{updates} updates");
}

/// A flood of output is capped on disk: the spill file keeps the output's end, at most
/// `max_spill_bytes`, and the result says how much was dropped.
#[tokio::test]
async fn the_spill_file_is_capped_and_keeps_the_end() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = BashConfig {
        max_spill_bytes: 100_000,
        ..BashConfig::default()
    };
    // The context holds the session, and the session its spill file.
    let ctx = ctx_with(tmp.path(), CancellationToken::new());
    let out = bash(&ctx, &config, args("seq 1 100000", None))
        .await
        .expect("command succeeds");
    let details = out.details.expect("details");
    let path = details.full_output_path.clone().expect("spill file");
    let kept = std::fs::read_to_string(&path).expect("spill");
    let _ = std::fs::remove_file(&path);
    let whole: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert!(
        (50_000..=100_000).contains(&kept.len()),
        "{} bytes kept",
        kept.len()
    );
    assert!(whole.ends_with(&kept));
    assert_eq!(details.total_bytes, whole.len() as u64);
    assert_eq!(
        details.spill_dropped_bytes,
        (whole.len() - kept.len()) as u64
    );
    let text = out.content[0].as_text().expect("text");
    let notice = text.rsplit_once("\n\n").expect("a notice").1;
    assert_eq!(
        notice,
        format!(
            "[Showing lines 98001-100000 of 100000. Output's last {} (the first {} were dropped at the 97.7KB spill limit): {path}]",
            pi_tools::truncate::format_size(kept.len() as u64),
            pi_tools::truncate::format_size(details.spill_dropped_bytes),
        )
    );
}

/// A sink that wants log lines and keeps them.
#[derive(Default)]
struct LogLines(std::sync::Mutex<Vec<(pi_tools::LogLevel, String, String)>>);

impl pi_tools::EventSink for LogLines {
    async fn emit(&self, event: ToolEvent) {
        if let ToolEvent::ToolExecutionLog {
            level,
            logger,
            message,
            ..
        } = event
        {
            self.0
                .lock()
                .expect("not poisoned")
                .push((level, logger, message));
        }
    }

    fn wants_logs(&self) -> bool {
        true
    }
}

async fn logged(command: &str, sink: &impl pi_tools::EventSink) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tools = ToolSet::new([wrap(Arc::new(BashTool), None)]);
    let config = RunnerConfig {
        extensions: extensions(tmp.path()),
        ..RunnerConfig::default()
    };
    let calls = [ToolCall::new("1", "bash", json!({"command": command}))];
    let outcome =
        execute_tool_calls(&tools, &calls, &config, &CancellationToken::new(), sink).await;
    assert!(!outcome.messages[0].is_error);
    outcome.messages[0].content[0]
        .as_text()
        .expect("text")
        .to_owned()
}

/// For a sink that wants logs, each stderr line is a `warning` from `bash` (stdout is not);
/// a line over 4 KB comes in pieces cut between characters. A sink that does not want them
/// gets none, and the output keeps the order of writing.
#[tokio::test]
async fn stderr_lines_are_logged_only_for_sinks_that_want_them() {
    let sink = LogLines::default();
    // 1,500 three-byte characters: 4,500 bytes, cut at 4,095 (a character boundary).
    let command = "echo out; echo 'bad thing' >&2; printf '€%.0s' $(seq 1500) >&2";
    let text = logged(command, &sink).await;
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    let long = "€".repeat(1500);
    assert_eq!(lines, ["bad thing", "out", &long]);
    let logs = sink.0.into_inner().expect("not poisoned");
    let warning = |m: &str| (pi_tools::LogLevel::Warning, "bash".to_owned(), m.to_owned());
    assert_eq!(
        logs,
        [
            warning("bad thing"),
            warning(&"€".repeat(1365)),
            warning(&"€".repeat(135))
        ]
    );

    let quiet = CollectingSink::new();
    let text = logged("echo a; echo b >&2; echo c", &quiet).await;
    assert_eq!(text, "a\nb\nc");
    assert!(
        !quiet
            .events()
            .iter()
            .any(|e| matches!(e, ToolEvent::ToolExecutionLog { .. }))
    );
}
