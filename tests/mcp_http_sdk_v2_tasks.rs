//! MCP tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28) through the
//! TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4, in its `auto` mode),
//! against the binary over Streamable HTTP and over stdio (tests/node/tasks_client.mjs): a
//! long bash call becomes a task that `tasks/get` polls to the command's result, and another
//! is cancelled with `tasks/cancel`, after which `tasks/get` says `cancelled` and its
//! processes are gone from /proc.
//!
//! The SDK has no task client and refuses a `resultType: "task"` answer in `callTool`
//! (`UNSUPPORTED_RESULT_TYPE`); the client reads the task from the answer itself, and sends
//! `tasks/get` and `tasks/cancel` through the SDK's `client.request()` with a result schema
//! of its own. Should a later SDK take tasks, the refusal asserted here fails, and the client
//! should move to the SDK's own way.
//!
//! The same SDK in its default (legacy) negotiation, without the extension, is offered the
//! 2025-11-25 specification's tasks, and drives them with no observer
//! (tests/node/tasks_2025_client.mjs): `client.request()` sends `tools/call` with
//! `params.task` unchanged and checks no capability for the tasks' methods, and the SDK's
//! exported `specTypeSchemas` (`CreateTaskResult`, `GetTaskResult`, ...) accept the server's
//! answers. A task is polled with `tasks/get` from `working` to `completed`, `tasks/result`
//! gives its result, another is cancelled with `tasks/cancel` and its processes end, and
//! `tasks/list` holds both. Its `callTool` still refuses the task (`INVALID_RESULT`), which is
//! asserted for the same reason.
#![cfg(all(feature = "cli", feature = "mount"))]

use serde_json::{Value, json};
use support::procfs::{processes_with, settle, tag};

use crate::mcp_http_sdk_v2::{node_report_with, stdio_target};
use crate::mcp_http_support::HttpServer;

/// A call past a second of a request that declares the extension becomes a task.
const TASK_AFTER: &str = "[mcp]\ntask_after_ms = 1000\n";

#[tokio::test]
async fn the_ts_sdk_v2_client_polls_and_cancels_a_task_over_http() {
    let server = HttpServer::spawn_with(None, &[], Some(TASK_AFTER)).await;
    run_tasks_client(&server.url).await;
}

#[tokio::test]
async fn the_ts_sdk_v2_client_polls_and_cancels_a_task_over_stdio() {
    let work = tempfile::TempDir::new().expect("a working directory");
    let config = work.path().join("pi-tools.toml");
    std::fs::write(&config, TASK_AFTER).expect("the configuration is written");
    let target = stdio_target(work.path(), Some(&config));
    run_tasks_client(&target).await;
}

/// Runs tests/node/tasks_client.mjs against `target` and checks both of its tasks.
async fn run_tasks_client(target: &str) {
    let marker = format!("pi-tools-task-{}", tag());
    let report = node_report_with(
        "tasks_client.mjs",
        &[target.as_ref()],
        &[("TASK_MARKER", &marker)],
    )
    .await;
    assert_eq!(report["version"], "2026-07-28", "{report}");
    check_finished(&report["finished"]);
    check_cancelled(&report["cancelled"], &marker);
    // Nothing of the cancelled command outlives the client (and the server over stdio).
    let left = settle(0, || processes_with(&marker).len()).await;
    assert_eq!(left, 0, "the cancelled command's processes ended");
}

/// How the SDK refused the call, and the task the server answered with instead.
fn check_task(call: &Value) -> &str {
    assert_eq!(
        call["refused"],
        json!({"code": "UNSUPPORTED_RESULT_TYPE", "resultType": "task"}),
        "{call}"
    );
    let task = &call["task"];
    assert_eq!(task["resultType"], "task", "{call}");
    assert_eq!(task["status"], "working", "{call}");
    assert!(task["pollIntervalMs"].as_u64().is_some(), "{call}");
    task["taskId"].as_str().expect("the task's id")
}

/// A task polled while it works, until it completes with the command's result.
fn check_finished(finished: &Value) {
    check_task(finished);
    check_polled_to_done(finished);
}

/// The statuses polled (`working` at least twice, then `completed`) and the command's
/// result, `done`.
fn check_polled_to_done(finished: &Value) {
    let statuses: Vec<&str> = finished["statuses"]
        .as_array()
        .expect("the statuses polled")
        .iter()
        .map(|s| s.as_str().expect("a status"))
        .collect();
    let (last, before) = statuses.split_last().expect("a status");
    assert_eq!(*last, "completed", "{finished}");
    assert!(
        before.len() >= 2 && before.iter().all(|s| *s == "working"),
        "polled while it worked: {finished}"
    );
    let result = &finished["result"];
    assert_eq!(result["isError"], false, "{finished}");
    assert_eq!(result["content"], json!([{"type": "text", "text": "done"}]));
    assert_eq!(result["structuredContent"]["exitCode"], 0, "{finished}");
}

/// A task cancelled while its command ran: `cancelled` since, and its processes gone.
fn check_cancelled(cancelled: &Value, marker: &str) {
    check_task(cancelled);
    assert_eq!(cancelled["statusBefore"], "working", "{cancelled}");
    let lines: Vec<&str> = cancelled["processes"]
        .as_array()
        .expect("the processes seen")
        .iter()
        .map(|p| p["cmdline"].as_str().expect("a command line"))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains(marker)) && lines.iter().any(|l| l.contains("sleep 300")),
        "the command and its `sleep` ran: {cancelled}"
    );
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["ended"], true, "its processes ended: {cancelled}");
    assert_eq!(cancelled["stays"], "cancelled", "{cancelled}");
}

#[tokio::test]
async fn the_ts_sdk_v2_client_runs_2025_tasks_through_its_request_over_http() {
    let server = HttpServer::spawn(None).await;
    run_tasks_2025_client(&server.url).await;
}

#[tokio::test]
async fn the_ts_sdk_v2_client_runs_2025_tasks_through_its_request_over_stdio() {
    let work = tempfile::TempDir::new().expect("a working directory");
    let target = stdio_target(work.path(), None);
    run_tasks_2025_client(&target).await;
}

/// Runs tests/node/tasks_2025_client.mjs against `target`: the 2025-11-25 tasks, offered to
/// a legacy session that did not declare the extension, driven by `client.request()` alone.
async fn run_tasks_2025_client(target: &str) {
    let marker = format!("pi-tools-task-{}", tag());
    let report = node_report_with(
        "tasks_2025_client.mjs",
        &[target.as_ref()],
        &[("TASK_MARKER", &marker)],
    )
    .await;
    assert_eq!(report["version"], "2025-11-25", "{report}");
    assert_eq!(
        report["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{report}"
    );
    let finished = check_finished_2025(&report["finished"]);
    let cancelled = check_cancelled_2025(&report["cancelled"], &marker);
    assert_eq!(
        report["listed"],
        json!([
            {"taskId": finished, "status": "completed"},
            {"taskId": cancelled, "status": "cancelled"},
        ]),
        "{report}"
    );
    // The SDK's own call refuses the task; should a later SDK take it, move the client there.
    assert_eq!(
        report["refused"],
        json!({"code": "INVALID_RESULT"}),
        "{report}"
    );
    let left = settle(0, || processes_with(&marker).len()).await;
    assert_eq!(left, 0, "the cancelled command's processes ended");
}

/// A task as `tools/call` with `params.task` answers it: working, with the server's times.
fn check_task_2025(task: &Value) -> &str {
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["ttl"], 600_000, "{task}");
    assert_eq!(task["pollInterval"], 500, "{task}");
    assert_eq!(task["createdAt"], task["lastUpdatedAt"], "{task}");
    task["taskId"].as_str().expect("the task's id")
}

/// A task polled while it works, until it completes; `tasks/result` gives the command's
/// result, naming the task. Returns its id.
fn check_finished_2025(finished: &Value) -> &str {
    let id = check_task_2025(&finished["task"]);
    check_polled_to_done(finished);
    let result = &finished["result"];
    assert_eq!(
        result["_meta"],
        json!({"io.modelcontextprotocol/related-task": {"taskId": id}}),
        "{finished}"
    );
    id
}

/// A task cancelled while its command ran: `tasks/cancel` gives it `cancelled`, it stays so,
/// and its processes are gone. Returns its id.
fn check_cancelled_2025<'a>(cancelled: &'a Value, marker: &str) -> &'a str {
    let id = check_task_2025(&cancelled["task"]);
    assert_eq!(cancelled["statusBefore"], "working", "{cancelled}");
    let lines: Vec<&str> = cancelled["processes"]
        .as_array()
        .expect("the processes seen")
        .iter()
        .map(|p| p["cmdline"].as_str().expect("a command line"))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains(marker)) && lines.iter().any(|l| l.contains("sleep 300")),
        "the command and its `sleep` ran: {cancelled}"
    );
    let cancel = &cancelled["cancel"];
    assert_eq!(cancel["taskId"], id, "{cancelled}");
    assert_eq!(cancel["status"], "cancelled", "{cancelled}");
    assert_eq!(
        cancel["statusMessage"], "The task was cancelled (tasks/cancel); its processes were ended.",
        "{cancelled}"
    );
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["ended"], true, "its processes ended: {cancelled}");
    id
}
