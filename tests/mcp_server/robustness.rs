//! Bad input and endings in process: garbage, unknown methods, end of input with calls in
//! flight, a client that leaves early, a schema that cannot be served.

use super::*;

#[tokio::test]
async fn garbage_before_the_handshake_gets_parse_errors_and_does_not_stop_the_server() {
    let mut pipe = RawPipe::start(tools([McpTool::new(echo("echo"))]), RunnerConfig::default());
    let mut garbage = vec![0u8, 0xff, 0xfe, b'\n'];
    garbage.extend_from_slice(b"{this is not json\n\n   \n");
    garbage.extend_from_slice(&[0x80, 0x81, b'x', b'\n']);
    pipe.send_bytes(&garbage).await;
    // Three unusable lines, three parse errors without an id; blank lines are skipped.
    for _ in 0..3 {
        let answer = pipe.recv().await;
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, json!(-32700)),
            "{answer}"
        );
    }
    pipe.initialize().await;
    pipe.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"i": 5}}
    }))
    .await;
    assert_eq!(pipe.recv().await["result"]["content"][0]["text"], "ok 5");
}

#[tokio::test]
async fn bad_lines_and_unknown_methods_are_answered_or_ignored_and_serving_goes_on() {
    let mut pipe = RawPipe::start(tools([McpTool::new(echo("echo"))]), RunnerConfig::default());
    let init = pipe.initialize().await;
    assert_eq!(init["id"], 0);
    assert_eq!(init["result"]["serverInfo"]["name"], "pi-tools");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");

    // Not JSON: a parse error, with the null id JSON-RPC asks for.
    pipe.send_bytes(b"\x00\xff garbage {{{\n").await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message":
            "Parse error: the line is not valid UTF-8 (invalid byte at offset 1). Send UTF-8 JSON, one message per line."}})
    );
    // JSON but not JSON-RPC: "Invalid request" naming the reason.
    pipe.send(json!({"hello": "world"})).await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message":
            "Invalid request: `jsonrpc` must be \"2.0\". Send JSON-RPC 2.0 messages."}})
    );
    // An unknown method: "Method not found" for its id.
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}))
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message":
            "Method not found: no/such/method. This server offers initialize, ping, logging/setLevel, tools/list, tools/call, resources/list, resources/templates/list and resources/read (and prompts/list and prompts/get when it serves a prompt)."}})
    );
    // A known method with unusable params: "Invalid params", saying what is wrong.
    for (id, params) in [
        (11, json!({"arguments": {"i": 1}})),
        (12, json!({"name": "echo", "arguments": [1]})),
    ] {
        pipe.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
        let answer = pipe.recv().await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().expect("a message");
        assert!(
            message.starts_with("Invalid params for tools/call: "),
            "{message}"
        );
        assert!(
            message.ends_with("with the arguments as an object."),
            "{message}"
        );
    }
    pipe.send(json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call"}))
        .await;
    assert_eq!(
        pipe.recv().await["error"]["message"],
        "Invalid params for tools/call: there are none. Send {\"name\": \"<tool>\", \"arguments\": {...}}, with the arguments as an object."
    );
    // tools/list has one page: a cursor cannot come from this server.
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": {"cursor": "bogus"}}),
    )
    .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // An unknown notification: ignored.
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/no_such_thing"}))
        .await;

    pipe.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    pipe.send(json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"i": 9}}
    }))
    .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "ok 9"}],
            "isError": false
        }})
    );
}

#[tokio::test]
async fn end_of_input_lets_calls_in_flight_finish_and_answers_them_then_ends_cleanly() {
    let entered = Arc::new(Notify::new());
    let signal = entered.clone();
    let release = Arc::new(Notify::new());
    let released = release.clone();
    let waiter = Scripted::new("wait", move |_args, ctx| {
        let signal = signal.clone();
        let released = released.clone();
        async move {
            signal.notify_one();
            tokio::select! {
                () = released.notified() => Ok(ToolResult::text("finished after end of input")),
                () = ctx.cancellation().cancelled() => Ok(ToolResult::text("cancelled")),
            }
        }
    })
    .arc();
    let mut pipe = RawPipe::start(tools([McpTool::new(waiter)]), RunnerConfig::default());
    pipe.initialize().await;
    pipe.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "wait", "arguments": {"i": 1}}
    }))
    .await;
    tokio::time::timeout(PATIENCE, entered.notified())
        .await
        .expect("the tool starts");

    pipe.close_input();
    // The call is not cancelled by the end of input: the session waits for it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !pipe.server.is_finished(),
        "the session ended under a running call"
    );
    release.notify_one();
    let answer = pipe.recv().await;
    assert_eq!(answer["id"], 1);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "finished after end of input"
    );
    assert_eq!(pipe.recv_or_end().await, None, "the output closes after it");
    let ended = tokio::time::timeout(PATIENCE, &mut pipe.server)
        .await
        .expect("the server ends in time")
        .expect("the server task does not panic");
    assert!(ended.is_ok(), "{ended:?}");
}

#[tokio::test]
async fn a_client_that_leaves_before_initialize_ends_the_session_cleanly() {
    let mut pipe = RawPipe::start(tools([McpTool::new(echo("echo"))]), RunnerConfig::default());
    pipe.send_bytes(b"not json\n").await;
    pipe.close_input();
    let ended = tokio::time::timeout(PATIENCE, &mut pipe.server)
        .await
        .expect("the server ends in time")
        .expect("the server task does not panic");
    assert!(ended.is_ok(), "{ended:?}");
}

#[tokio::test]
async fn a_tool_whose_schema_is_not_an_object_is_refused_before_serving() {
    let mut odd = Scripted::new("odd", |_a, _c| async { Ok(ToolResult::text("")) });
    odd.schema = json!(true);
    let pipe = RawPipe::start(tools([McpTool::new(odd.arc())]), RunnerConfig::default());
    let ended = tokio::time::timeout(PATIENCE, pipe.server)
        .await
        .expect("the server ends at once")
        .expect("the server task does not panic");
    let err = ended.expect_err("the schema is refused");
    assert_eq!(
        err.to_string(),
        "Tool `odd` cannot be served over MCP because its parameters() is not a JSON object \
         schema; make it return an object schema such as {\"type\":\"object\",\"properties\":{}}."
    );
}
