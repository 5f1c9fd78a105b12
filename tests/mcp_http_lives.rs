//! `pi-tools mcp --http`, spawned: sessions live while their clients use them. An open
//! stream for server messages keeps a session past the idle time, past `[mcp] max_sessions`
//! a new session is refused (or, with `when_full = "end_idle"`, the least recently used
//! idle session makes room, never a busy one), a DELETE during
//! a running call says nothing on stderr, and an idle session past the 128 kept awake
//! sleeps and wakes as itself.
#![cfg(feature = "cli")]

use std::time::Duration;

use crate::mcp_http_support::{HttpServer, PATIENCE, call, messages, running, text_of, wait_gone};
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
        .stream(&session)
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
async fn past_max_sessions_a_new_session_is_refused_and_the_kept_ones_go_on() {
    let server = HttpServer::spawn_with(None, &[], Some("[mcp]\nmax_sessions = 2\n")).await;
    let first = server.open_session().await;
    let second = server.open_session().await;
    let refused = server
        .post(None, &crate::mcp_http_support::initialize())
        .send()
        .await
        .expect("sent");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "5");
    let why = refused.text().await.expect("a body");
    assert!(
        why.starts_with("Service Unavailable: the server already keeps 2 sessions, as many as it can keep running at once")
            && why.contains("and it refuses a new one rather than end one of them. Retry later, end sessions you no longer use (DELETE)")
            && why.contains("`[mcp] when_full = \"end_idle\"`"),
        "{why}"
    );
    assert_eq!(ping_status(&server, &first).await, StatusCode::OK);
    assert_eq!(ping_status(&server, &second).await, StatusCode::OK);
    // One ended by its client makes room.
    let deleted = server.delete(&first).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::OK);
    let third = server.open_session().await;
    assert_eq!(ping_status(&server, &third).await, StatusCode::OK);
    assert_eq!(ping_status(&server, &second).await, StatusCode::OK);
}

#[tokio::test]
async fn set_to_end_idle_sessions_when_full_the_least_recently_used_idle_one_makes_room() {
    let server = HttpServer::spawn_with(
        None,
        &[],
        Some("[mcp]\nmax_sessions = 2\nwhen_full = \"end_idle\"\n"),
    )
    .await;
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

#[tokio::test]
async fn an_idle_session_past_those_kept_awake_sleeps_and_wakes_as_itself() {
    let server = HttpServer::spawn_logging(
        None,
        &[],
        None,
        Some("warn,pi_tools::mcp::hibernation=debug"),
    )
    .await;
    // 128 idle sessions are kept awake; the next one to go idle sleeps.
    for _ in 0..128 {
        server.open_session().await;
    }
    let session = server.open_session().await;
    // What the session holds: its logging level, and a background job in its environment.
    let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                       "params": {"level": "error"}});
    let response = server
        .post(Some(&session), &level)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let answer = server
        .call(
            &session,
            2,
            "bash",
            json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
        )
        .await;
    let job: u32 = text_of(&answer).parse().expect("bash prints the job's pid");
    let slept = || {
        server
            .log
            .lock()
            .expect("the log is not poisoned")
            .iter()
            .filter(|line| line.contains("an idle session sleeps"))
            .count()
    };
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while slept() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no session fell asleep"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(running(job), "sleep ended the session's background job");
    // Woken by its next call: the same environment (the job is still its own) and the
    // same logging level (a warning from bash's stderr is below `error`, so not sent).
    let response = server
        .post(
            Some(&session),
            &call(3, "bash", json!({"command": "echo quiet >&2; echo awake"})),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let answers = messages(response).await;
    assert_eq!(
        answers.len(),
        1,
        "only the answer, no log message: {answers:?}"
    );
    // stdout and stderr keep their order of arrival, which is not fixed between them.
    let mut lines: Vec<&str> = text_of(&answers[0]).lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["awake", "quiet"]);
    assert!(
        server
            .log
            .lock()
            .expect("the log is not poisoned")
            .iter()
            .any(|line| line.contains("a sleeping session wakes")),
        "the session did not wake from sleep"
    );
    assert!(running(job));
    // DELETE ends it, its job too.
    let deleted = server.delete(&session).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::OK);
    wait_gone(&[job], PATIENCE).await;

    // A session deleted while it sleeps ends too, its job with it.
    let other = server.open_session().await;
    let answer = server
        .call(
            &other,
            1,
            "bash",
            json!({"command": "sleep 30 > /dev/null 2>&1 & echo $!"}),
        )
        .await;
    let other_job: u32 = text_of(&answer).parse().expect("bash prints the job's pid");
    let other_slept = || {
        server
            .log
            .lock()
            .expect("the log is not poisoned")
            .iter()
            .any(|line| line.contains("an idle session sleeps") && line.contains(&other))
    };
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !other_slept() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the other session did not sleep"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(running(other_job));
    let deleted = server.delete(&other).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::OK);
    wait_gone(&[other_job], PATIENCE).await;
    let gone = server
        .post(Some(&other), &ping(2))
        .send()
        .await
        .expect("sent");
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    // Sleeping and waking are nothing to warn about.
    let log = server.log.lock().expect("the log is not poisoned").clone();
    assert!(
        !log.iter()
            .any(|line| line.contains("WARN") || line.contains("ERROR")),
        "{log:#?}"
    );
}
