//! Jobs over `pi-tools mcp --http`: each session has its own jobs, which end when the
//! session is deleted or expires, and which another session can neither read nor stop.
#![cfg(feature = "cli")]

use std::time::Duration;

use crate::mcp_http_support::{HttpServer, text_of, wait_gone, wait_pid};
use reqwest::StatusCode;
use serde_json::json;

/// bash with the job tools.
const JOBS_TOML: &str = r#"[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]
"#;

/// Starts `sleep 300` as job 1 of `session`; its pid.
async fn sleeping_job(server: &HttpServer, session: &str, pid_file: &str) -> u32 {
    let command = format!("echo $$ > {pid_file}; exec sleep 300");
    let answer = server
        .call(
            session,
            1,
            "bash",
            json!({"command": command, "background": true}),
        )
        .await;
    assert!(
        text_of(&answer).contains("[Job 1 is still running"),
        "{answer}"
    );
    wait_pid(&server.path(pid_file)).await
}

#[tokio::test]
async fn a_deleted_session_ends_its_jobs_and_no_other_session_reaches_them() {
    let server = HttpServer::spawn_with(None, &[], Some(JOBS_TOML)).await;
    let one = server.open_session().await;
    let other = server.open_session().await;
    let job = sleeping_job(&server, &one, "one.pid").await;
    let answer = server
        .call(&other, 2, "job_kill", json!({"job": 1, "signal": "KILL"}))
        .await;
    assert_eq!(answer["result"]["isError"], true);
    assert!(
        text_of(&answer).starts_with("There is no job 1 in this session."),
        "{answer}"
    );
    let listed = server.call(&other, 3, "job_list", json!({})).await;
    assert_eq!(text_of(&listed), "No jobs in this session.");
    assert!(crate::mcp_http_support::running(job));

    let deleted = server.delete(&one).send().await.expect("sent");
    assert_eq!(deleted.status(), StatusCode::OK);
    wait_gone(&[job], Duration::from_secs(5)).await;
}

#[tokio::test]
async fn an_expired_session_ends_its_jobs() {
    let server = HttpServer::spawn_with(None, &["--session-idle-secs", "1"], Some(JOBS_TOML)).await;
    let session = server.open_session().await;
    let job = sleeping_job(&server, &session, "job.pid").await;
    wait_gone(&[job], Duration::from_secs(10)).await;
}
