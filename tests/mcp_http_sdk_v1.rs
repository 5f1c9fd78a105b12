//! The TypeScript SDK v1 of today (`@modelcontextprotocol/sdk` 1.32, the newest 1.x)
//! against the binary over Streamable HTTP and over stdio (tests/node/v1_client.mjs). It
//! speaks 2025-11-25 sessions only: it initializes, lists the tools, reads a file, and its
//! elicitation handler answers the policy's questions, accepting one call (the command
//! runs) and declining another (it never runs, and the result says why).
#![cfg(all(feature = "cli", feature = "mount"))]

use serde_json::json;

use crate::mcp_http_sdk_v2::node_report;
use crate::mcp_http_support::HttpServer;

const ASKING: &str = "[[policy.rule]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\nreason = \"Files appear only with a person's yes.\"\n";

#[tokio::test]
async fn the_ts_sdk_v1_client_lists_calls_and_is_asked_over_http() {
    let server = HttpServer::spawn_with(None, &[], Some(ASKING)).await;
    run_client(&server.url, server.work.path()).await;
}

#[tokio::test]
async fn the_ts_sdk_v1_client_lists_calls_and_is_asked_over_stdio() {
    let work = tempfile::TempDir::new().expect("a working directory");
    let etc = tempfile::TempDir::new().expect("a configuration directory");
    let config = etc.path().join("pi-tools.toml");
    std::fs::write(&config, ASKING).expect("the configuration is written");
    let target = format!(
        "stdio:{}:{}:{}",
        env!("CARGO_BIN_EXE_cli-under-test"),
        work.path().display(),
        config.display()
    );
    run_client(&target, work.path()).await;
}

/// Runs the client against `target` (a URL, or `stdio:BINARY:CWD:CONFIG`) whose working
/// directory is `work`, and checks everything it reports.
async fn run_client(target: &str, work: &std::path::Path) {
    std::fs::write(work.join("a.txt"), "hello\n").expect("a file to read");
    let report = node_report("v1_client.mjs", &[target.as_ref()]).await;
    assert_eq!(report["version"], "2025-11-25", "{report}");
    assert_eq!(report["server"], "pi-tools", "{report}");
    assert_eq!(
        report["tools"],
        json!(["read", "bash", "edit", "write"]),
        "{report}"
    );
    assert_eq!(
        report["read"],
        json!({"isError": false, "text": "hello\n", "totalLines": 1})
    );
    let asked = report["asked"].as_array().expect("the questions asked");
    assert_eq!(asked.len(), 2, "{report}");
    for (question, file) in asked.iter().zip(["accepted.txt", "declined.txt"]) {
        let message = question["message"].as_str().expect("a question's message");
        assert!(
            message.starts_with("The model wants to call the tool `bash` with "),
            "{message}"
        );
        assert!(
            message.contains(&format!("\"command\":\"touch {file}\"")),
            "{message}"
        );
        assert!(
            message.contains("Its reason: Files appear only with a person's yes."),
            "{message}"
        );
        assert_eq!(
            question["choices"],
            json!(["allow_once", "allow_session", "deny"])
        );
    }
    assert_eq!(report["accepted"]["isError"], false, "{report}");
    assert!(work.join("accepted.txt").exists(), "the accepted call ran");
    let declined = &report["declined"];
    assert_eq!(declined["isError"], true, "{report}");
    let text = declined["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("(tool = bash, command = touch)")
            && text.contains("The person asked declined, so nothing ran."),
        "{text}"
    );
    assert!(
        !work.join("declined.txt").exists(),
        "the declined call never ran"
    );
}
