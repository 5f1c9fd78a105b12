//! What the binary refuses over MCP, and how it says so: invalid arguments, unknown tools,
//! a timeout past the per-call limit, a line past the message size.

use super::*;

#[tokio::test]
async fn invalid_arguments_are_an_error_result_listing_every_violation() {
    let session = Session::start(None).await;
    let (text, is_error) = text_of(
        &session
            .call("read", json!({"offset": "x", "limit": -1, "extra": true}))
            .await,
    );
    assert!(is_error);
    assert_eq!(
        text,
        "Validation failed for tool \"read\":\n  \
         - extra: unknown property `extra`; did you mean `path`? Remove `extra` or rename it.\n  \
         - path: \"path\" is a required property\n  \
         - offset: \"x\" is not of type \"integer\"\n  \
         - limit: -1 is less than the minimum of 0\n\n\
         Received arguments:\n{\n  \"offset\": \"x\",\n  \"limit\": -1,\n  \"extra\": true\n}"
    );
    // A number where a string belongs is coerced (a common model slip); the rest is still
    // refused.
    let (text, is_error) = text_of(
        &session
            .call("read", json!({"path": 5, "offset": "x"}))
            .await,
    );
    assert!(is_error);
    assert_eq!(
        text,
        "Validation failed for tool \"read\":\n  \
         - offset: \"x\" is not of type \"integer\"\n\n\
         Received arguments:\n{\n  \"path\": 5,\n  \"offset\": \"x\"\n}"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_naming_the_tools() {
    let session = Session::start(None).await;
    let refused = tokio::time::timeout(
        PATIENCE,
        session
            .client
            .call_tool(params("nope", json!({"path": "a"}))),
    )
    .await
    .expect("the server answers in time")
    .expect_err("an unknown tool is no result");
    let rmcp::ServiceError::McpError(error) = refused else {
        panic!("a JSON-RPC error, got {refused:?}");
    };
    assert_eq!(error.code.0, -32602);
    assert_eq!(
        error.message,
        "Unknown tool `nope`. The tools are: read, bash, edit, write. Call one of them by its exact name."
    );
    assert_eq!(
        error.data,
        Some(json!({"tools": ["read", "bash", "edit", "write"]}))
    );
    // The session goes on, and invalid arguments of a known tool stay a tool result.
    session.server.put("a.txt", "still here\n");
    let result = session.call("read", json!({"path": "a.txt"})).await;
    assert_eq!(ok_text(&result), "still here\n");
    let (_, is_error) = text_of(&session.call("read", json!({"path": 5})).await);
    assert!(is_error);
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_timeout_past_the_per_call_limit_is_refused_at_once_naming_the_setting() {
    let session = Session::start(None).await;
    let started = Instant::now();
    let (text, is_error) = text_of(
        &session
            .call("bash", json!({"command": "echo never", "timeout": 400}))
            .await,
    );
    assert!(is_error);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        text,
        "The timeout 400 is longer than the 180 seconds every call is given (`[tools] timeout_secs` in the configuration), so the command would be cancelled first. Give a timeout of at most 180, or split the work into smaller steps."
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_line_past_the_configured_message_size_is_refused_naming_the_setting() {
    let config = "[mcp]\nmax_message_bytes = 4096\n";
    let mut raw = RawSession::start(Some(config));
    raw.initialize().await;
    let content = "x".repeat(5000);
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "write", "arguments": {"path": "big.txt", "content": content}}
        }))
        .await;
    let refused = raw.raw.recv().await;
    assert_eq!(refused["error"]["code"], -32700, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "Parse error: the line is longer than 4096 bytes (`[mcp] max_message_bytes`) and was skipped. Send smaller messages (put large data in files), or raise the setting."
    );
    assert!(!raw.server.path("big.txt").exists());
    raw.raw.close_input();
    assert!(raw.server.exit_status().await.success());
}

/// A client's mistakes (an unknown tool, a task that never was) are answered to the client
/// in full and are not the server's warnings: its stderr stays empty by default, and a
/// `RUST_LOG` the operator sets shows them.
#[test]
fn errors_answered_to_a_client_are_not_logged_as_the_servers_warnings() {
    let work = TempDir::new().expect("a temporary working directory");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "quiet", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "nope", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "x"}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    for rust_log in [None, Some("warn")] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
        command.arg("mcp").arg("--cwd").arg(work.path());
        match rust_log {
            Some(level) => command.env("RUST_LOG", level),
            None => command.env_remove("RUST_LOG"),
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pi-tools mcp starts");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(input.as_bytes()).expect("written");
        }
        let output = child.wait_with_output().expect("it ends with its input");
        let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        // Requests are served concurrently: the answers come in either order.
        let mut codes: Vec<(i64, i64)> = answers
            .iter()
            .filter_map(|a| Some((a["id"].as_i64()?, a["error"]["code"].as_i64()?)))
            .collect();
        codes.sort_unstable();
        assert_eq!(codes, [(2, -32602), (3, -32602)], "{answers:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let warned = stderr
            .lines()
            .filter(|l| l.contains("response error"))
            .count();
        assert_eq!(
            warned,
            if rust_log.is_some() { 2 } else { 0 },
            "RUST_LOG={rust_log:?}: {stderr}"
        );
        if rust_log.is_none() {
            assert_eq!(stderr, "");
        }
    }
}
