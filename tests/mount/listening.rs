//! A 2026-07-28 client hears of a changed tool list through `subscriptions/listen`, as a
//! 2025-11-25 session does on its stream: the gateway (`pi-tools mcp`, mounting
//! `changing_server.py`, whose `grow` changes its tool list) acknowledges what it will send
//! (tool list changes only: its resources and prompts never change), sends
//! `notifications/tools/list_changed` on the listen at each change, over stdio, Streamable
//! HTTP and `--stateless` HTTP, and ends the listen when the client cancels it or leaves.
//! Without mounted servers or a configuration file (whose declared tools are followed, see
//! `mcp_reload`) nothing can change, and a listen ends at once after its acknowledgment. Past the bound on open listens one is refused with a sentence.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::changing::{Gateway, PATIENCE, config, names, text};
use super::mount_support::Setup;
use crate::mcp_http_support::{Events, HttpServer, messages, request_2026};

/// Every category a client can ask for.
fn every_category() -> Value {
    json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": ["file:///tmp/x"],
    })
}

fn listen(id: i64) -> Value {
    request_2026(
        id,
        "subscriptions/listen",
        json!({"notifications": every_category()}),
        &json!({}),
    )
}

/// The acknowledgment of the listen `id`, agreeing to send `notifications`.
fn acknowledged(id: i64, notifications: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": id},
            "notifications": notifications,
        },
    })
}

/// The tool list change sent on the listen `id`.
fn changed(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}},
    })
}

/// Checks that `answer` is the completion result of the listen `id` (the specification's
/// graceful end), with the server's name in its `_meta`.
fn assert_completed(answer: &Value, id: i64) {
    let mut answer = answer.clone();
    let info = answer["result"]["_meta"]
        .as_object_mut()
        .and_then(|meta| meta.remove("io.modelcontextprotocol/serverInfo"));
    assert!(
        info.as_ref().is_some_and(|info| info["name"].is_string()),
        "serverInfo: {info:?}"
    );
    assert_eq!(
        answer,
        json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/subscriptionId": id},
            },
        })
    );
}

fn grow(id: i64) -> Value {
    request_2026(
        id,
        "tools/call",
        json!({"name": "changing__grow", "arguments": {}}),
        &json!({}),
    )
}

#[test]
fn a_2026_listen_over_stdio_hears_of_the_change_and_ends_when_cancelled_or_left() {
    let setup = Setup::new(&config());
    let mut gateway = Gateway::start(&setup);
    gateway.send(&listen(1));
    let ack = gateway.wait(
        |line| line["method"] == "notifications/subscriptions/acknowledged",
        "the acknowledgment",
    );
    assert_eq!(ack, acknowledged(1, json!({"toolsListChanged": true})));
    assert_eq!(text(&gateway.request(grow(2))), "grown");
    let told = gateway.wait(
        |line| line["method"] == "notifications/tools/list_changed",
        "notifications/tools/list_changed",
    );
    assert_eq!(told, changed(1));
    let listed = gateway.request(request_2026(3, "tools/list", json!({}), &json!({})));
    assert_eq!(names(&listed), ["changing__grow", "changing__fresh"]);

    // Cancelled: no answer. Another listen (ids are never reused within a session, as the
    // specification asks) is acknowledged.
    gateway.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}}),
    );
    gateway.send(&listen(4));
    let again = gateway.wait(
        |line| line["method"] == "notifications/subscriptions/acknowledged" || line["id"] == 1,
        "the second acknowledgment",
    );
    assert_eq!(again, acknowledged(4, json!({"toolsListChanged": true})));

    // The client leaves: the listen ends with its completion result, and so does the
    // gateway, at once.
    let left = Instant::now();
    gateway.close_input();
    let ended = gateway.wait(|line| line["id"] == 4, "the listen's result");
    assert_completed(&ended, 4);
    let status = loop {
        if let Some(status) = gateway.child.try_wait().expect("the gateway's status") {
            break status;
        }
        assert!(
            left.elapsed() < PATIENCE,
            "the gateway still runs after its input ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(
        left.elapsed() < Duration::from_secs(4),
        "the gateway took {:?} to end",
        left.elapsed()
    );
    assert!(
        gateway.out.seen.iter().all(|line| line["id"] != 1),
        "the cancelled listen was answered: {:?}",
        gateway.out.seen
    );
}

/// A listen over HTTP (with `args` for the server), told of the change on its stream.
async fn a_listen_over_http_hears_of_the_change(args: &[&str]) {
    let server = HttpServer::spawn_with(None, args, Some(&config())).await;
    let response = listen_over_http(&server, 1).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "{:?}",
        response.headers()
    );
    let mut events = Events::new(response);
    assert_eq!(
        events.next().await,
        Some(acknowledged(1, json!({"toolsListChanged": true})))
    );
    let (grown, _, _) = server.post_2026(&grow(2)).await;
    assert_eq!(text(&grown), "grown");
    assert_eq!(events.next().await, Some(changed(1)));
    let (listed, _, _) = server
        .post_2026(&request_2026(3, "tools/list", json!({}), &json!({})))
        .await;
    assert_eq!(names(&listed), ["changing__grow", "changing__fresh"]);
}

async fn listen_over_http(server: &HttpServer, id: i64) -> reqwest::Response {
    server
        .post_raw(None, &listen(id).to_string())
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "subscriptions/listen")
        .send()
        .await
        .expect("sent")
}

#[tokio::test]
async fn a_2026_listen_over_http_hears_of_the_change() {
    a_listen_over_http_hears_of_the_change(&[]).await;
}

#[tokio::test]
async fn a_2026_listen_over_stateless_http_hears_of_the_change() {
    a_listen_over_http_hears_of_the_change(&["--stateless"]).await;
}

/// A listen open when the HTTP server is stopped (SIGTERM) gets its completion result, the
/// specification's graceful end, before its stream closes.
#[tokio::test]
async fn a_2026_listen_over_http_is_completed_when_the_server_stops() {
    let server = HttpServer::spawn_with(None, &[], Some(&config())).await;
    let response = listen_over_http(&server, 1).await;
    let mut events = Events::new(response);
    assert_eq!(
        events.next().await,
        Some(acknowledged(1, json!({"toolsListChanged": true})))
    );
    let pid = server.child.id().expect("the server runs") as i32;
    // SAFETY: kill(2) of the server this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let mut last = None;
    while let Some(event) = events.next().await {
        last = Some(event);
    }
    assert_completed(&last.expect("the listen's completion result"), 1);
}

#[tokio::test]
async fn past_the_bound_a_listen_is_refused_and_a_closed_one_frees_its_place() {
    let config = config().replace(
        "[mcp.servers.changing]",
        "[mcp]\nmax_sessions = 1\n\n[mcp.servers.changing]",
    );
    let server = HttpServer::spawn_with(None, &[], Some(&config)).await;
    let first = listen_over_http(&server, 1).await;
    let mut first = Events::new(first);
    assert_eq!(
        first.next().await,
        Some(acknowledged(1, json!({"toolsListChanged": true})))
    );
    let refused = listen_over_http(&server, 2).await;
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "5");
    assert_eq!(
        messages(refused).await,
        [
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message":
            "Too many subscriptions/listen requests are open: the server keeps at most 1 open at once (as many as the sessions it keeps, `[mcp] max_sessions` lowered to what the limit on open files holds). Cancel a listen you no longer need (close its stream, or send notifications/cancelled for it), or retry later."}})
        ]
    );
    // The client closes the first: its place is free once the server sees it go.
    drop(first);
    let deadline = Instant::now() + PATIENCE;
    let third = loop {
        let third = listen_over_http(&server, 3).await;
        if third.status() == 200 || Instant::now() > deadline {
            break third;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(third.status(), 200);
    assert_eq!(
        Events::new(third).next().await,
        Some(acknowledged(3, json!({"toolsListChanged": true})))
    );
}

#[tokio::test]
async fn without_mounted_servers_or_a_file_a_listen_over_http_ends_after_its_acknowledgment() {
    let server = HttpServer::spawn(None).await;
    let all = messages(listen_over_http(&server, 1).await).await;
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0], acknowledged(1, json!({})));
    assert_completed(&all[1], 1);
}

#[test]
fn without_mounted_servers_or_a_file_a_listen_over_stdio_ends_after_its_acknowledgment() {
    // The embedded default: no file named, none in the working directory.
    let work = tempfile::TempDir::new().expect("a working directory");
    let mut command = std::process::Command::new(support::cli_under_test());
    command
        .arg("mcp")
        .current_dir(work.path())
        .env_remove("PI_TOOLS_CONFIG");
    let mut gateway = Gateway::spawn(command);
    gateway.send(&listen(1));
    let ack = gateway.wait(
        |line| line["method"] == "notifications/subscriptions/acknowledged",
        "the acknowledgment",
    );
    assert_eq!(ack, acknowledged(1, json!({})));
    let ended = gateway.wait(|line| line["id"] == 1, "the listen's result");
    assert_completed(&ended, 1);
}

/// The TypeScript SDK v2 client's `listen` (tests/node/listen_client.mjs) against `target`
/// (a URL, or `stdio:BINARY:CWD:CONFIG`): it hears of the change and closes its listen.
async fn the_ts_sdk_v2_client_listens(target: &str) {
    let report = crate::mcp_http_sdk_v2::node_report("listen_client.mjs", &[target.as_ref()]).await;
    assert_eq!(
        report,
        json!({
            "version": "2026-07-28",
            "honored": {"toolsListChanged": true},
            "grown": "grown",
            "waited": "told",
            "told": 1,
            "toolsAfter": ["changing__grow", "changing__fresh"],
            "closed": "local",
        })
    );
}

#[tokio::test]
async fn the_ts_sdk_v2_client_listens_over_http() {
    let server = HttpServer::spawn_with(None, &[], Some(&config())).await;
    the_ts_sdk_v2_client_listens(&server.url).await;
}

#[tokio::test]
async fn the_ts_sdk_v2_client_listens_over_stdio() {
    let setup = Setup::new(&config());
    let target = format!(
        "stdio:{}:{}:{}",
        support::cli_under_test().display(),
        setup.work.path().display(),
        setup.config().display()
    );
    the_ts_sdk_v2_client_listens(&target).await;
}
