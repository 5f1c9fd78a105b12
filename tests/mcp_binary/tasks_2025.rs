//! MCP 2025-11-25's own tasks over `pi-tools mcp` on stdio: a bash command run as a task
//! with `params.task` is cancelled with `tasks/cancel`, and its whole process group ends
//! (looked for in /proc) while the session goes on.

use super::*;
use support::procfs::{alive, settle, tag};

#[tokio::test]
async fn cancelling_a_task_ends_its_commands_process_group() {
    let mut session = RawSession::start(None);
    session
        .raw
        .send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "tasks-2025", "version": "0"}}}),
        )
        .await;
    let init = session.raw.recv_within(STARTUP).await.expect("initialized");
    assert!(
        init["result"]["capabilities"]["tasks"].is_object(),
        "{init}"
    );
    session
        .raw
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    // Two processes of the command's group: one in the background, one in the foreground.
    let tag = tag();
    let command = format!("sleep {tag} & sleep {tag}; wait");
    session
        .raw
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": command}, "task": {}}}),
        )
        .await;
    let created = session.raw.recv().await;
    let id = created["result"]["task"]["taskId"].clone();
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    assert_eq!(settle(2, || alive(&tag).len()).await, 2, "the command runs");

    session
        .raw
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel",
            "params": {"taskId": id}}))
        .await;
    let cancelled = session.raw.recv().await;
    assert_eq!(cancelled["result"]["taskId"], id, "{cancelled}");
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(
        settle(0, || alive(&tag).len()).await,
        0,
        "the cancelled task's processes end"
    );

    // The session goes on.
    session
        .raw
        .send(json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
            "params": {"taskId": id}}))
        .await;
    let got = session.raw.recv().await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
}
