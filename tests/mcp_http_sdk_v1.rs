//! The TypeScript SDK v1 of today (`@modelcontextprotocol/sdk` 1.32, the newest 1.x)
//! against the binary over Streamable HTTP and over stdio (tests/node/v1_client.mjs). It
//! speaks 2025-11-25 sessions only: it initializes, lists the tools, reads a file, and its
//! elicitation handler answers the policy's questions, accepting one call (the command
//! runs) and declining another (it never runs, and the result says why). Then it drives
//! the tasks of 2025-11-25 with `client.experimental.tasks`: a call streamed as a task to
//! its result, and a task cancelled while its `sleep` runs, whose processes end (looked
//! for in /proc by the client while its session is open).
#![cfg(all(feature = "cli", feature = "mount"))]

use serde_json::{Value, json};
use support::procfs::tag;

use crate::mcp_http_sdk_v2::{node_report_with, stdio_target};
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
    let target = stdio_target(work.path(), Some(&config));
    run_client(&target, work.path()).await;
}

/// Runs the client against `target` (a URL, or `stdio:BINARY:CWD:CONFIG`) whose working
/// directory is `work`, and checks everything it reports.
async fn run_client(target: &str, work: &std::path::Path) {
    std::fs::write(work.join("a.txt"), "hello\n").expect("a file to read");
    let tag = tag();
    // In the environment, not the arguments: the client's own command line must not hold it.
    let report =
        node_report_with("v1_client.mjs", &[target.as_ref()], &[("SLEEP_TAG", &tag)]).await;
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
    check_tasks(&report["tasks"]);
}

/// The tasks the client drove: offered in the capabilities and on every tool, one streamed
/// to its result through tasks/get and tasks/result, one cancelled and its processes gone.
fn check_tasks(tasks: &Value) {
    assert_eq!(
        tasks["offered"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    assert_eq!(
        tasks["taskSupport"],
        json!(["optional", "optional", "optional", "optional"])
    );
    let streamed = tasks["streamed"].as_array().expect("the streamed messages");
    let task = &streamed[0]["taskId"];
    assert_eq!(
        streamed[0],
        json!({"type": "taskCreated", "taskId": task, "status": "working"}),
        "{tasks}"
    );
    let (polled, result) = (&streamed[streamed.len() - 2], &streamed[streamed.len() - 1]);
    assert_eq!(
        *polled,
        json!({"type": "taskStatus", "taskId": task, "status": "completed"}),
        "{tasks}"
    );
    assert_eq!(
        *result,
        json!({"type": "result", "isError": false, "text": "streamed", "related": task}),
        "{tasks}"
    );
    assert_eq!(
        tasks["cancel"],
        json!({
            "created": "taskCreated",
            "ran": true,
            "cancelled": "cancelled",
            "ended": true,
            "got": "cancelled"
        }),
        "the cancelled task's `sleep` ran, then ended: {tasks}"
    );
}
