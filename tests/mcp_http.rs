//! `pi-tools mcp --http`, spawned and spoken to with a real HTTP client: the bearer token,
//! the Host/Origin allow-list, sessions that do not disturb each other, and the signals
//! that end it.
#![cfg(feature = "cli")]

use std::time::Duration;

use crate::mcp_http_support::{
    HttpServer, PATIENCE, call, initialize, messages, text_of, wait_gone,
};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn requests_without_the_token_or_with_a_wrong_one_are_refused() {
    let server = HttpServer::spawn(Some("correct horse battery staple")).await;
    let missing = server
        .post_as(None, &initialize().to_string())
        .send()
        .await
        .expect("sent");
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    assert_eq!(
        missing.text().await.expect("a body"),
        "Unauthorized: send the server's token as `Authorization: Bearer <token>`.\n"
    );
    let wrong = server
        .post_as(
            Some("Bearer correct horse battery"),
            &initialize().to_string(),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    // With it, the session opens and serves.
    let session = server.open_session().await;
    std::fs::write(server.path("a.txt"), "served\n").expect("written");
    let answer = server
        .call(&session, 1, "read", json!({"path": "a.txt"}))
        .await;
    assert_eq!(text_of(&answer), "served\n");
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused() {
    let server = HttpServer::spawn(None).await;
    for (header, value, status) in [
        ("Host", "rebound.example.com", StatusCode::FORBIDDEN),
        (
            "Origin",
            "http://rebound.example.com",
            StatusCode::FORBIDDEN,
        ),
        ("Origin", "http://localhost:3000", StatusCode::OK),
        // Every loopback origin passes, over https too.
        ("Origin", "https://localhost:8443", StatusCode::OK),
        ("Origin", "https://127.0.0.1:8443", StatusCode::OK),
        ("Origin", "https://[::1]:8443", StatusCode::OK),
        (
            "Origin",
            "https://rebound.example.com",
            StatusCode::FORBIDDEN,
        ),
    ] {
        let answer = server
            .post(None, &initialize())
            .header(header, value)
            .send()
            .await
            .expect("sent");
        assert_eq!(answer.status(), status, "{header}: {value}");
    }
}

#[tokio::test]
async fn a_cancelled_call_in_one_session_leaves_the_other_session_unaffected() {
    let server = HttpServer::spawn(None).await;
    let first = server.open_session().await;
    let second = server.open_session().await;
    assert_ne!(first, second);

    let (first_pid, long) = server.running_call(&first, 1, "first.pid").await;

    let other = {
        let request = server.post(
            Some(&second),
            &call(1, "bash", json!({"command": "sleep 1; echo second"})),
        );
        tokio::spawn(async move { messages(request.send().await.expect("sent")).await })
    };
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "test"}});
    let response = server
        .post(Some(&first), &cancel)
        .send()
        .await
        .expect("the cancellation is sent");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    wait_gone(&[first_pid], Duration::from_secs(5)).await;

    let answers = tokio::time::timeout(PATIENCE, other)
        .await
        .expect("the other session answers in time")
        .expect("joined");
    let answer = answers.iter().find(|m| m["id"] == 1).expect("answered");
    assert_eq!(text_of(answer), "second");
    assert_eq!(answer["result"]["isError"], false);
    long.abort();
}

/// SIGTERM, SIGHUP and SIGINT each cancel the calls, kill the background jobs and end the
/// server cleanly.
#[tokio::test]
async fn sigterm_sighup_and_sigint_cancel_calls_kill_background_jobs_and_exit_cleanly() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let mut server = HttpServer::spawn(None).await;
        let session = server.open_session().await;
        let (job, call_pid, long) = server.job_and_running_call(&session).await;

        let pid = server.child.id().expect("the server runs");
        let pid = i32::try_from(pid).expect("a pid fits");
        // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = tokio::time::timeout(PATIENCE, server.child.wait())
            .await
            .expect("the server ends in time after the signal")
            .expect("its status can be read");
        assert!(status.success(), "signal {signal}: {status}");
        wait_gone(&[job, call_pid], Duration::from_secs(5)).await;
        long.abort();
    }
}

/// Over HTTP the file tools stay in the working directory by default, and the server says
/// so at its start (issue 22, finding 5).
#[tokio::test]
async fn over_http_the_file_tools_are_confined_to_the_working_directory() {
    let server = HttpServer::spawn(None).await;
    assert_eq!(
        server.said,
        [
            "pi-tools: over HTTP the file tools are confined to the working directory, or to the roots a client lists; set [paths] allowed_roots to choose other directories"
        ]
    );
    let session = server.open_session().await;
    std::fs::write(server.path("a.txt"), "inside\n").expect("written");
    let answer = server
        .call(&session, 1, "read", json!({"path": "a.txt"}))
        .await;
    assert_eq!(text_of(&answer), "inside\n");
    let answer = server
        .call(&session, 2, "read", json!({"path": "/etc/passwd"}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let work = std::fs::canonicalize(server.path(".")).expect("canonical");
    assert_eq!(
        text_of(&answer),
        format!(
            "Could not read /etc/passwd: /etc/passwd is outside the allowed directories ({}). Use a path inside them.",
            work.display()
        )
    );
}
