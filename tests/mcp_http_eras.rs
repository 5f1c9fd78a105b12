//! MCP 2026-07-28 beside 2025-11-25 on one Streamable HTTP endpoint, against the binary
//! with a real HTTP client: a request naming the new version in its `_meta` is served with
//! no session, its removed methods are not found, its roots arrive as an input request and
//! confine its writes, a policy question comes back as a result (also with `--stateless`),
//! and log lines reach it only at the level it asks for.
#![cfg(feature = "cli")]

use serde_json::{Value, json};

use crate::mcp_http_support::{HttpServer, messages, request_2026};

/// A 2026-07-28 request: `_meta` carries the version and the client's capabilities.
fn request(id: i64, method: &str, params: Value, capabilities: Value) -> Value {
    request_2026(id, method, params, &capabilities)
}

/// Posts `body` outside any session; the JSON-RPC answer with its id, and every message.
async fn post(
    server: &HttpServer,
    body: &Value,
) -> (Value, Vec<Value>, reqwest::header::HeaderMap) {
    server.post_2026(body).await
}

fn with(mut params: Value, state: &str, responses: Value) -> Value {
    params["requestState"] = json!(state);
    params["inputResponses"] = responses;
    params
}

#[tokio::test]
async fn a_2026_request_over_http_needs_no_session_and_removed_methods_are_not_found() {
    let server = HttpServer::spawn(None).await;
    let (listed, _, headers) = post(&server, &request(1, "tools/list", json!({}), json!({}))).await;
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    assert!(headers.get("mcp-session-id").is_none(), "{headers:?}");

    let (discovered, _, _) = post(
        &server,
        &request(2, "server/discover", json!({}), json!({})),
    )
    .await;
    assert!(
        discovered["result"]["supportedVersions"]
            .to_string()
            .contains("2025-11-25"),
        "{discovered}"
    );

    let (level, _, _) = post(
        &server,
        &request(3, "logging/setLevel", json!({"level": "debug"}), json!({})),
    )
    .await;
    assert_eq!(level["error"]["code"], -32601, "{level}");

    // Removed in 2026-07-28: 404 with -32601, as the specification asks.
    for (id, method) in [(10, "initialize"), (11, "ping"), (12, "logging/setLevel")] {
        let body = request(id, method, json!({}), json!({}));
        let response = server
            .post_raw(None, &body.to_string())
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method)
            .send()
            .await
            .expect("sent");
        assert_eq!(
            response.status(),
            reqwest::StatusCode::NOT_FOUND,
            "{method}"
        );
        let answer = &messages(response).await[0];
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
    }

    // A session of 2025-11-25 on the same endpoint works as before.
    let session = server.open_session().await;
    let called = server
        .call(
            &session,
            4,
            "write",
            json!({"path": "s.txt", "content": "x"}),
        )
        .await;
    assert_eq!(called["result"]["isError"], false, "{called}");
}

#[tokio::test]
async fn a_2026_clients_roots_confine_its_writes() {
    let server = HttpServer::spawn(None).await;
    std::fs::create_dir(server.path("inside")).expect("a directory");
    let inside = format!("file://{}", server.path("inside").display());
    let roots = json!({"roots": {}});
    let write = |path: &str| json!({"name": "write", "arguments": {"path": path, "content": "x"}});
    let outside = server.path("outside.txt");

    // The roots are asked for first.
    let params = write(outside.to_str().expect("utf-8"));
    let (asked, _, _) = post(
        &server,
        &request(1, "tools/call", params.clone(), roots.clone()),
    )
    .await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert_eq!(
        asked["result"]["inputRequests"]["roots"]["method"], "roots/list",
        "{asked}"
    );
    assert!(!outside.exists(), "nothing ran before the roots were known");
    let state = asked["result"]["requestState"].as_str().expect("a state");
    let answer = json!({"roots": {"roots": [{"uri": inside}]}});
    let (refused, _, _) = post(
        &server,
        &request(
            2,
            "tools/call",
            with(params, state, answer.clone()),
            roots.clone(),
        ),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(!outside.exists(), "a write outside the roots failed");

    // Within them, it is written.
    let params = write(server.path("inside/a.txt").to_str().expect("utf-8"));
    let (asked, _, _) = post(
        &server,
        &request(3, "tools/call", params.clone(), roots.clone()),
    )
    .await;
    let state = asked["result"]["requestState"].as_str().expect("a state");
    let (written, _, _) = post(
        &server,
        &request(4, "tools/call", with(params, state, answer), roots),
    )
    .await;
    assert_eq!(written["result"]["isError"], false, "{written}");
    assert!(server.path("inside/a.txt").exists());
}

#[tokio::test]
async fn a_stateless_server_asks_a_2026_client_in_the_result() {
    let config = "[[policy.rule]]\ntool = \"write\"\ndecision = \"ask\"\nreason = \"A person decides what is written.\"\n";
    let server = HttpServer::spawn_with(None, &["--stateless"], Some(config)).await;
    let params = json!({"name": "write", "arguments": {"path": "asked.txt", "content": "x"}});
    let capabilities = json!({"elicitation": {"form": {}}});
    let (asked, _, _) = post(
        &server,
        &request(1, "tools/call", params.clone(), capabilities.clone()),
    )
    .await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let requests = asked["result"]["inputRequests"]
        .as_object()
        .expect("requests");
    let (key, question) = requests.iter().next().expect("one question");
    assert_eq!(question["method"], "elicitation/create");
    assert!(!server.path("asked.txt").exists());
    let state = asked["result"]["requestState"].as_str().expect("a state");
    let answer = json!({key: {"action": "accept", "content": {"answer": "allow_once"}}});
    let retried = request(2, "tools/call", with(params, state, answer), capabilities);
    let (ran, _, _) = post(&server, &retried).await;
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert!(server.path("asked.txt").exists());
    // Once only.
    let mut again = retried.clone();
    again["id"] = json!(3);
    let (replayed, _, _) = post(&server, &again).await;
    assert!(
        replayed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already used")),
        "{replayed}"
    );
}

#[tokio::test]
async fn a_2026_request_gets_log_lines_only_at_the_level_it_asks_for() {
    let server = HttpServer::spawn(None).await;
    let params = json!({"name": "bash", "arguments": {"command": "echo warned >&2; echo out"}});
    let (_, quiet, _) = post(
        &server,
        &request(1, "tools/call", params.clone(), json!({})),
    )
    .await;
    assert!(
        !quiet.iter().any(|m| m["method"] == "notifications/message"),
        "no level asked, no log lines: {quiet:?}"
    );
    let mut loud = request(2, "tools/call", params, json!({}));
    loud["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let (answer, all, _) = post(&server, &loud).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        all.iter().any(|m| m["method"] == "notifications/message"
            && m["params"]["data"].to_string().contains("warned")),
        "the warning reached the request: {all:?}"
    );
}

#[tokio::test]
async fn a_2026_request_stays_within_the_configured_roots() {
    let allowed = tempfile::TempDir::new().expect("a directory");
    let config = format!(
        "[paths]\nallowed_roots = [\"{}\"]\n",
        allowed.path().display()
    );
    let server = HttpServer::spawn_with(None, &[], Some(&config)).await;
    // Roots declared, but the configuration names the roots: no question, and its roots hold.
    let roots = json!({"roots": {}});
    let write = |path: &std::path::Path| json!({"name": "write", "arguments": {"path": path, "content": "x"}});
    let outside = server.path("outside.txt");
    let (refused, _, _) = post(
        &server,
        &request(1, "tools/call", write(&outside), roots.clone()),
    )
    .await;
    assert_eq!(refused["result"]["resultType"], "complete", "{refused}");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        !outside.exists(),
        "a write outside the configured roots failed"
    );
    let inside = allowed.path().join("a.txt");
    let (written, _, _) = post(&server, &request(2, "tools/call", write(&inside), roots)).await;
    assert_eq!(written["result"]["isError"], false, "{written}");
    assert!(inside.exists());
}

#[tokio::test]
async fn a_long_2026_call_becomes_a_task_to_poll_and_cancel() {
    use crate::mcp_http_support::{running, wait_gone, wait_pid};
    let config = "[mcp]\ntask_after_ms = 300\n";
    let server = HttpServer::spawn_with(None, &[], Some(config)).await;
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let bash = |command: &str| json!({"name": "bash", "arguments": {"command": command}});

    // Without the extension, a long call is simply answered.
    let (plain, _, _) = post(
        &server,
        &request(1, "tools/call", bash("sleep 1; echo plain"), json!({})),
    )
    .await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");

    // With it: a task, working until cancelled, and its processes end.
    let long = bash("echo $$ > pid.txt; sleep 60");
    let (created, _, _) = post(&server, &request(2, "tools/call", long, tasks.clone())).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["status"], "working", "{created}");
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let pid = wait_pid(&server.path("pid.txt")).await;
    assert!(running(pid));
    let (got, _, _) = post(
        &server,
        &request(3, "tasks/get", json!({"taskId": id}), tasks.clone()),
    )
    .await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let (acked, _, _) = post(
        &server,
        &request(4, "tasks/cancel", json!({"taskId": id}), tasks.clone()),
    )
    .await;
    assert!(acked.get("error").is_none(), "{acked}");
    wait_gone(&[pid], std::time::Duration::from_secs(10)).await;
    let (got, _, _) = post(
        &server,
        &request(5, "tasks/get", json!({"taskId": id}), tasks.clone()),
    )
    .await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");

    // A task that ends keeps its result for tasks/get.
    let (created, _, _) = post(
        &server,
        &request(6, "tools/call", bash("sleep 1; echo done"), tasks.clone()),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let result = loop {
        let (got, _, _) = post(
            &server,
            &request(7, "tasks/get", json!({"taskId": id}), tasks.clone()),
        )
        .await;
        if got["result"]["status"] != "working" {
            break got;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task ends: {got}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(result["result"]["status"], "completed", "{result}");
    assert!(
        result["result"]["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("done")),
        "{result}"
    );
    // An unknown task is named.
    let (unknown, _, _) = post(
        &server,
        &request(8, "tasks/get", json!({"taskId": "task-0"}), tasks),
    )
    .await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("No task `task-0`")),
        "{unknown}"
    );
}
