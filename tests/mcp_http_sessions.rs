//! `pi-tools mcp --http`, spawned and spoken to with reqwest: a session's life (a running
//! call keeps it, idle expiry and DELETE end it at once, 404 after), the answers to bodies
//! that are not one message, the health probe, the bearer scheme in any case, the refused
//! start, and the one message-size limit.
#![cfg(feature = "cli")]

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::mcp_http_support::{
    HttpServer, PATIENCE, call, initialize, messages, text_of, wait_gone,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// The JSON body of an answer the server gave itself.
async fn json_body(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test]
async fn a_running_call_keeps_its_session_past_the_idle_time_which_then_ends_it_with_404() {
    let server = HttpServer::spawn_with(None, &["--session-idle-secs", "1"], None).await;
    let session = server.open_session().await;
    // The call runs three times the idle time; its session must not expire under it.
    let started = Instant::now();
    let answer = server
        .call(
            &session,
            1,
            "bash",
            json!({"command": "sleep 3; echo survived"}),
        )
        .await;
    assert_eq!(text_of(&answer), "survived");
    assert!(started.elapsed() >= Duration::from_secs(3));
    // Idle from the end of that answer: alive just after it, gone once the idle time passed.
    let alive = server
        .post(Some(&session), &ping(2))
        .send()
        .await
        .expect("sent");
    assert_eq!(alive.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gone = server
        .post(Some(&session), &ping(3))
        .send()
        .await
        .expect("sent");
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    // And DELETE of it says the same.
    let deleted = server.delete(&session).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn delete_ends_the_sessions_call_and_processes_at_once_and_answers_200_then_404() {
    let server = HttpServer::spawn(None).await;
    let session = server.open_session().await;
    let (job, call_pid, long) = server.job_and_running_call(&session).await;

    let asked = Instant::now();
    let deleted = server.delete(&session).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::OK);
    // The call's process and the session's background job end with the session.
    wait_gone(&[call_pid, job], Duration::from_secs(5)).await;
    // Within the half second the issue promises: a DELETE does not wait for the call.
    let took = asked.elapsed();
    assert!(took < Duration::from_millis(500), "took {took:?}");

    let again = server.delete(&session).send().await.expect("sent");
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    let unknown = server.delete("no-such-session").send().await.expect("sent");
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let after = server
        .post(Some(&session), &ping(3))
        .send()
        .await
        .expect("sent");
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
    long.abort();
}

#[tokio::test]
async fn bodies_that_are_not_one_message_get_400_with_the_json_rpc_error() {
    let server = HttpServer::spawn(None).await;
    let session = server.open_session().await;
    for (body, code) in [
        ("{not json", -32700),
        ("", -32700),
        (
            "[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
            -32600,
        ),
        ("{\"jsonrpc\": \"2.0\", \"id\": 7}", -32600),
        ("42", -32600),
    ] {
        let response = server
            .post_raw(Some(&session), body)
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body:?}");
        let answer = json_body(response).await;
        assert_eq!(answer["jsonrpc"], "2.0", "{body:?}");
        assert_eq!(answer["error"]["code"], code, "{body:?}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.ends_with('.'))
        );
    }
    let batch = server
        .post_raw(
            Some(&session),
            "[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
        )
        .send()
        .await
        .expect("sent");
    let answer = json_body(batch).await;
    assert_eq!(answer["id"], Value::Null);
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("batch")),
        "{answer}"
    );
    // The session goes on.
    let alive = server
        .post(Some(&session), &ping(9))
        .send()
        .await
        .expect("sent");
    assert_eq!(alive.status(), StatusCode::OK);
    assert_eq!(messages(alive).await[0]["id"], 9);
}

#[tokio::test]
async fn the_health_probe_needs_no_token_and_tells_nothing_about_the_tools() {
    let server = HttpServer::spawn(Some("s3cret token")).await;
    let health_url = server.url.replace("/mcp", "/healthz");
    let response = server.http.get(&health_url).send().await.expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        response.text().await.expect("a body"),
        "{\"status\":\"ok\"}\n"
    );
    // The MCP endpoint still wants the token.
    let refused = server
        .post_as(None, &ping(1).to_string())
        .send()
        .await
        .expect("sent");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_bearer_scheme_is_accepted_in_any_case() {
    let server = HttpServer::spawn(Some("s3cret")).await;
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let response = server
            .post_as(Some(&format!("{scheme} s3cret")), &initialize().to_string())
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::OK, "{scheme}");
    }
    let wrong = server
        .post_as(Some("bearer s3cre"), &initialize().to_string())
        .send()
        .await
        .expect("sent");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_refused_start_prints_only_the_refusal_and_why() {
    let work = tempfile::TempDir::new().expect("a temporary directory");
    let output = tokio::time::timeout(
        PATIENCE * 3,
        tokio::process::Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
            .args(["mcp", "--http", "0.0.0.0:0", "--cwd"])
            .arg(work.path())
            .env_remove("PI_TOOLS_MCP_TOKEN")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("the refusal comes in time")
    .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("serving MCP"), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("Refusing to serve MCP over HTTP on 0.0.0.0:")
            && lines[0].contains("without a token")
            && lines[0].contains("--token-file"),
        "{stderr}"
    );
}

#[tokio::test]
async fn one_message_size_limit_holds_for_http_bodies() {
    let config = "[mcp]\nmax_message_bytes = 4096\n";
    let server = HttpServer::spawn_with(None, &[], Some(config)).await;
    let session = server.open_session().await;
    let small = server
        .call(
            &session,
            1,
            "write",
            json!({"path": "small.txt", "content": "x".repeat(3000)}),
        )
        .await;
    assert_eq!(small["result"]["isError"], false, "{small}");
    let large = server
        .post(
            Some(&session),
            &call(
                2,
                "write",
                json!({"path": "large.txt", "content": "x".repeat(5000)}),
            ),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(large.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let answer = json_body(large).await;
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("4096 bytes") && m.contains("`[mcp] max_message_bytes`")),
        "{answer}"
    );
    assert!(!server.path("large.txt").exists());
}
