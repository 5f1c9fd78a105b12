//! The policy's questions over Streamable HTTP: put to the session's client through
//! elicitation, and answered only by an answer that carries the question's own id.
#![cfg(feature = "cli")]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::mcp_http_support::{Events, HttpServer, PATIENCE, call};

/// `touch` is asked about; everything else bash runs is allowed.
const ASKING: &str = "[tools]\nactive = [\"bash\"]\n[[policy.rule]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\nreason = \"Files appear.\"\n";

/// Opens a session whose client declares elicitation.
async fn open_asking_session(server: &HttpServer) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "http-test", "version": "0"}}
    });
    let response = server.post(None, &initialize).send().await.expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let _ = response.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = server
        .post(Some(&session), &initialized)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    session
}

/// Sends request `id`, `touch <file>`, and reads its stream up to the policy's question.
async fn touch_until_asked(
    server: &HttpServer,
    session: &str,
    id: i64,
    file: &str,
) -> (Events, Value) {
    let command = format!("touch {file}");
    let response = server
        .post(
            Some(session),
            &call(id, "bash", json!({ "command": command })),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let mut events = Events::new(response);
    loop {
        let message = events
            .next()
            .await
            .expect("the question comes before the answer");
        if message["method"] == "elicitation/create" {
            return (events, message);
        }
        assert!(
            message.get("id") != Some(&json!(id)),
            "answered unasked: {message}"
        );
    }
}

/// Posts `answer` to the question `id`, as the client's response.
async fn answer(server: &HttpServer, session: &str, id: Value, answer: Value) {
    let response = json!({"jsonrpc": "2.0", "id": id, "result": answer});
    let posted = server
        .post(Some(session), &response)
        .send()
        .await
        .expect("sent");
    assert_eq!(posted.status(), StatusCode::ACCEPTED);
}

/// The call's answer, read from the rest of its stream.
async fn answer_of(events: &mut Events, id: i64) -> Value {
    while let Some(message) = events.next().await {
        if message["id"] == id {
            return message;
        }
    }
    panic!("the call {id} was not answered");
}

#[tokio::test]
async fn an_answer_whose_id_is_the_questions_number_as_a_string_is_not_the_answer() {
    let server = HttpServer::spawn_with(None, &[], Some(ASKING)).await;
    let session = open_asking_session(&server).await;
    let (mut events, question) = touch_until_asked(&server, &session, 1, "asked.txt").await;
    let number = question["id"]
        .as_i64()
        .expect("the server numbers its questions");
    // "Allow" under the string form of the question's number: not this question's answer.
    let allow = json!({"action": "accept", "content": {"answer": "allow_once"}});
    answer(&server, &session, json!(number.to_string()), allow).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !server.path("asked.txt").exists(),
        "the call ran on an answer to another id"
    );
    // The question's own answer decides.
    answer(
        &server,
        &session,
        json!(number),
        json!({"action": "decline"}),
    )
    .await;
    let answered = answer_of(&mut events, 1).await;
    let text = answered["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("declined"), "{answered}");
    assert!(!server.path("asked.txt").exists());
}

#[tokio::test]
async fn a_woken_sessions_question_still_reaches_its_client() {
    let server = HttpServer::spawn_logging(
        None,
        &[],
        Some(ASKING),
        Some("warn,pi_tools::mcp::hibernation=debug"),
    )
    .await;
    // 128 idle sessions are kept awake; the next one to go idle sleeps.
    for _ in 0..128 {
        server.open_session().await;
    }
    let session = open_asking_session(&server).await;
    let allow = json!({"action": "accept", "content": {"answer": "allow_once"}});
    let (mut events, question) = touch_until_asked(&server, &session, 1, "first.txt").await;
    answer(&server, &session, question["id"].clone(), allow.clone()).await;
    let answered = answer_of(&mut events, 1).await;
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    assert!(server.path("first.txt").exists());
    // It sleeps once idle.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let slept = server
            .log
            .lock()
            .expect("the log is not poisoned")
            .iter()
            .any(|line| line.contains("an idle session sleeps") && line.contains(&session));
        if slept {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session never fell asleep"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Woken by the next call, whose question is asked too.
    let (mut events, question) = touch_until_asked(&server, &session, 2, "second.txt").await;
    answer(&server, &session, question["id"].clone(), allow).await;
    let answered = answer_of(&mut events, 2).await;
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    assert!(server.path("second.txt").exists());
}
