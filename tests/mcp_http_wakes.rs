//! `pi-tools mcp --http`, spawned, with sessions past the 128 kept awake, which sleep as soon
//! as they are idle: a request that arrives as its session falls asleep is served, and many
//! requests at once into a sleeping session wake it once, each answered, the session alive.
#![cfg(feature = "cli")]

use std::time::Duration;

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::mcp_http_support::{HttpServer, PATIENCE, call, messages, text_of};

/// A server whose next idle session sleeps at once: 128 idle sessions are kept awake.
async fn crowded_server() -> HttpServer {
    let server = HttpServer::spawn_logging(
        None,
        &[],
        None,
        Some("warn,pi_tools::mcp::hibernation=debug"),
    )
    .await;
    for _ in 0..128 {
        server.open_session().await;
    }
    server
}

/// Waits until the server's log says `session` fell asleep.
async fn asleep(server: &HttpServer, session: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let slept = server
            .log
            .lock()
            .expect("the log is not poisoned")
            .iter()
            .any(|line| line.contains("an idle session sleeps") && line.contains(session));
        if slept {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session never fell asleep"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Request `id` of `session`, and the status and messages it got.
async fn ask(server: &HttpServer, session: &str, message: Value) -> (StatusCode, Vec<Value>) {
    let response = server
        .post(Some(session), &message)
        .send()
        .await
        .expect("sent");
    let status = response.status();
    if status != StatusCode::OK {
        let body = response.text().await.unwrap_or_default();
        return (status, vec![Value::String(body)]);
    }
    (status, messages(response).await)
}

/// Issue 50, finding 4: about one session in twenty answered its first request after
/// `initialize` with `500 … Session not found`. The session fell asleep as the client's
/// `initialized` came after a wake, and the next wake, moments later, was taken by the
/// protocol library for the one it had just finished. A woken session now stays awake a
/// second; and the level the client chose holds.
#[tokio::test]
async fn a_request_as_its_session_falls_asleep_is_served() {
    let server = crowded_server().await;
    // Each new session falls asleep right after `initialized`; its first request races that.
    for round in 0..20 {
        let session = server.open_session().await;
        let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                           "params": {"level": "error"}});
        let (status, answer) = ask(&server, &session, level).await;
        assert_eq!(status, StatusCode::OK, "round {round}: {answer:?}");
        // The level held: bash's stderr (a warning) is below it.
        let (status, answers) = ask(
            &server,
            &session,
            call(2, "bash", json!({"command": "echo quiet >&2; echo kept"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "round {round}: {answers:?}");
        assert_eq!(answers.len(), 1, "round {round}: {answers:?}");
    }
}

#[tokio::test]
async fn many_requests_at_once_wake_a_sleeping_session_once() {
    let server = crowded_server().await;
    for round in 0..6 {
        let session = server.open_session().await;
        asleep(&server, &session).await;
        let requests = (0..8).map(|id| {
            let message = match id % 2 {
                0 => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
                _ => call(id, "bash", json!({"command": format!("echo {id}")})),
            };
            ask(&server, &session, message)
        });
        let answered = join_all(requests).await;
        for (id, (status, answers)) in answered.iter().enumerate() {
            assert_eq!(
                status,
                &StatusCode::OK,
                "round {round}, request {id}: {answers:?}"
            );
            let answer = answers
                .iter()
                .find(|m| m["id"] == id)
                .unwrap_or_else(|| panic!("round {round}: request {id} unanswered: {answers:?}"));
            if id % 2 == 1 {
                assert_eq!(text_of(answer).trim(), id.to_string());
            } else {
                assert!(answer.get("result").is_some(), "{answer}");
            }
        }
        // Still alive afterwards.
        let (status, _) = ask(
            &server,
            &session,
            json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "round {round}: the session ended");
    }
}
