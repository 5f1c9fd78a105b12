//! `pi-tools mcp --http`, spawned: sessions live while their clients use them. An open
//! stream for server messages keeps a session past the idle time, past `[mcp] max_sessions`
//! the least recently used idle session makes room (never a busy one), and a DELETE during
//! a running call says nothing on stderr.
#![cfg(feature = "cli")]

use std::time::Duration;

use crate::mcp_http_support::{HttpServer, PATIENCE, running, wait_gone};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// The status a ping in `session` gets.
async fn ping_status(server: &HttpServer, session: &str) -> StatusCode {
    server
        .post(Some(session), &ping(9))
        .send()
        .await
        .expect("sent")
        .status()
}

#[tokio::test]
async fn a_session_whose_client_holds_its_stream_open_outlives_the_idle_time() {
    let server = HttpServer::spawn_with(None, &["--session-idle-secs", "1"], None).await;
    let session = server.open_session().await;
    // The official SDKs open this stream for server messages right after `initialize`.
    let stream = server
        .http
        .get(&server.url)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-06-18")
        .send()
        .await
        .expect("the stream opens");
    assert_eq!(stream.status(), StatusCode::OK);
    // A person pausing with the client open: twice the idle time, and the session is there.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(ping_status(&server, &session).await, StatusCode::OK);
    // With the stream gone too, the opt-in idle time ends it.
    drop(stream);
    tokio::time::sleep(Duration::from_millis(1600)).await;
    assert_eq!(ping_status(&server, &session).await, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn past_max_sessions_the_least_recently_used_idle_session_makes_room() {
    let server = HttpServer::spawn_with(None, &[], Some("[mcp]\nmax_sessions = 2\n")).await;
    let first = server.open_session().await;
    let second = server.open_session().await;
    // The first is used after the second: the second is the least recently used.
    assert_eq!(ping_status(&server, &first).await, StatusCode::OK);
    let third = server.open_session().await;
    assert_eq!(ping_status(&server, &second).await, StatusCode::NOT_FOUND);
    assert_eq!(ping_status(&server, &first).await, StatusCode::OK);

    // A running call keeps the least recently used session: the idle one goes instead.
    let (pid, long) = server.running_call(&first, 1, "first.pid").await;
    assert_eq!(ping_status(&server, &third).await, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let fourth = server.open_session().await;
    assert_eq!(ping_status(&server, &third).await, StatusCode::NOT_FOUND);
    assert!(running(pid), "the busy session's call was ended");

    // Every session busy: a new one is refused, and none is ended for it.
    let (other, other_long) = server.running_call(&fourth, 1, "fourth.pid").await;
    let refused = server
        .post(None, &crate::mcp_http_support::initialize())
        .send()
        .await
        .expect("sent");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let why = refused.text().await.expect("a body");
    assert!(why.contains("max_sessions"), "{why}");
    assert!(running(pid) && running(other));

    // Ending the sessions ends their calls.
    for session in [&first, &fourth] {
        let deleted = server.delete(session).send().await.expect("sent");
        assert_eq!(deleted.status(), StatusCode::OK);
    }
    wait_gone(&[pid, other], PATIENCE).await;
    long.abort();
    other_long.abort();
}

#[tokio::test]
async fn delete_during_a_running_call_logs_nothing_above_debug() {
    let server = HttpServer::spawn(None).await;
    let session = server.open_session().await;
    let (pid, long) = server.running_call(&session, 1, "long.pid").await;
    let deleted = server.delete(&session).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::OK);
    wait_gone(&[pid], PATIENCE).await;
    // The call's stream ends with the session.
    let _ = tokio::time::timeout(PATIENCE, long).await;
    // The library's worker winds down after the call's answer; give it time to say
    // anything it would say.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let log = server.log.lock().expect("the log is readable").clone();
    assert!(log.is_empty(), "the server logged:\n{}", log.join("\n"));
}
