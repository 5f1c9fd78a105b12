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
#![cfg(all(feature = "cli", feature = "mount"))]

use serde_json::{Value, json};
use support::procfs::{processes_with, settle, tag};

use crate::mcp_http_sdk_v2::node_report_with;
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
    let target = format!(
        "stdio:{}:{}:{}",
        env!("CARGO_BIN_EXE_cli-under-test"),
        work.path().display(),
        config.display()
    );
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
