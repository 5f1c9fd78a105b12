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
