//! `pi-tools mcp --http`, spawned: a call's event stream cut mid-call (as a proxy that
//! drops long streams does) and resumed with `Last-Event-ID` delivers the call's result,
//! whether the call is still running or ended meanwhile; a point no longer kept is said to
//! be lost, with a JSON-RPC error, instead of an empty stream.
#![cfg(feature = "cli")]

use std::time::Duration;

use crate::mcp_http_support::{HttpServer, PATIENCE, call, messages, text_of};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Sends a bash call and cuts its stream after the first event; returns that event's id.
async fn call_and_cut(server: &HttpServer, session: &str, id: i64, command: &str) -> String {
    let mut response = server
        .post(
            Some(session),
            &call(id, "bash", json!({ "command": command })),
        )
        .send()
        .await
        .expect("the call is sent");
    assert_eq!(response.status(), StatusCode::OK);
    let mut seen = String::new();
    let event_id = tokio::time::timeout(PATIENCE, async {
        loop {
            let chunk = response
                .chunk()
                .await
                .expect("the stream is readable")
                .expect("the stream stays open while the call runs");
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(id) = seen.lines().find_map(|l| l.strip_prefix("id:")) {
                return id.trim().to_owned();
            }
        }
    })
    .await
    .expect("the first event comes at once");
    drop(response);
    event_id
}

/// The messages of the stream resumed after `last_event_id`.
async fn resume(server: &HttpServer, session: &str, last_event_id: &str) -> Vec<Value> {
    let response = server
        .stream(session)
        .header("Last-Event-ID", last_event_id)
        .send()
        .await
        .expect("the stream is resumed");
    assert_eq!(response.status(), StatusCode::OK);
    messages(response).await
}

fn answer(messages: &[Value], id: i64) -> &Value {
    messages
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id} in {messages:?}"))
}

#[tokio::test]
async fn a_call_stream_cut_and_resumed_with_last_event_id_delivers_the_result() {
    let server = HttpServer::spawn(None).await;
    let session = server.open_session().await;

    // Resumed while the call still runs: the rest of the stream, the result among it.
    let cut = call_and_cut(&server, &session, 1, "sleep 1; echo resumed").await;
    let rest = resume(&server, &session, &cut).await;
    assert_eq!(text_of(answer(&rest, 1)), "resumed");

    // Resumed after the call ended while nobody listened: the result is replayed.
    let cut = call_and_cut(&server, &session, 2, "sleep 0.3; echo replayed").await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let rest = resume(&server, &session, &cut).await;
    assert_eq!(text_of(answer(&rest, 2)), "replayed");

    // A point no stream of the session has: said, not an empty stream.
    let lost = resume(&server, &session, "0/99").await;
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0]["error"]["code"], -32600);
    let message = lost[0]["error"]["message"].as_str().expect("a message");
    assert!(message.contains("no longer kept"), "{message}");
    // The session goes on.
    let after = server
        .call(&session, 3, "bash", json!({"command": "echo still"}))
        .await;
    assert_eq!(text_of(&after), "still");
}
