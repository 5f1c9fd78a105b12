//! What a session's client is sent as log messages at `debug`: its calls' own events, not
//! the traces of the policy's shell reader, which stay in the server's own log.
#![cfg(feature = "cli")]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::mcp_http_support::{HttpServer, PATIENCE, call, messages, text_of};

/// A rule, so the policy reads each bash command.
const READING: &str = "[tools]\nactive = [\"bash\"]\n[[policy.rule]]\ntool = \"bash\"\ncommand = [\"git\", \"push\"]\ndecision = \"deny\"\nreason = \"A person pushes.\"\n";

#[tokio::test]
async fn the_shell_readers_traces_reach_the_servers_log_and_not_the_client() {
    let server = HttpServer::spawn_logging(
        None,
        &[],
        Some(READING),
        Some("warn,tokenize=debug,parse=debug"),
    )
    .await;
    let session = server.open_session().await;
    let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                       "params": {"level": "debug"}});
    let response = server
        .post(Some(&session), &level)
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let response = server
        .post(
            Some(&session),
            &call(2, "bash", json!({"command": "echo ran"})),
        )
        .send()
        .await
        .expect("sent");
    assert_eq!(response.status(), StatusCode::OK);
    let answers = messages(response).await;
    let answer = answers
        .iter()
        .find(|m| m["id"] == 2)
        .expect("the call is answered");
    assert!(text_of(answer).contains("ran"));
    let logged: Vec<_> = answers
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    for message in &logged {
        let logger = message["params"]["logger"].as_str().unwrap_or_default();
        assert!(
            !["tokenize", "parse"].contains(&logger) && !logger.starts_with("brush_parser"),
            "the shell reader's trace was sent to the client: {message}"
        );
    }
    // The server's own log has them.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let said = server
            .log
            .lock()
            .expect("the log is not poisoned")
            .iter()
            .any(|line| line.contains("tokenize") || line.contains("TOKEN"));
        if said {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server's log has no trace of the shell reader"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
