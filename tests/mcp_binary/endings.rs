//! Bad input and the end of a session: garbage before and during the session, end of input,
//! signals, and background jobs that must not outlive the server.

use super::*;
use tokio::io::AsyncReadExt;

/// SIGTERM, SIGHUP and SIGINT each end the stdio server: the running call is cancelled,
/// the background job killed, and the server exits cleanly.
#[tokio::test]
async fn sigterm_sighup_and_sigint_end_the_stdio_server_like_the_end_of_its_input() {
    for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let session = Session::start(None).await;
        let job = session.background_job().await;
        let _long = session
            .start_call(
                "bash",
                json!({"command": "echo $$ > long.pid; exec sleep 30"}),
            )
            .await;
        let call = wait_pid(&session.server.path("long.pid")).await;
        assert!(running(job) && running(call));
        let Session {
            mut server, client, ..
        } = session;
        let pid = i32::try_from(server.child.id().expect("the server runs")).expect("a pid fits");
        // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = server.exit_status().await;
        assert!(status.success(), "signal {signal}: {status}");
        wait_gone(&[job, call], Duration::from_secs(5)).await;
        drop(client);
    }
}

#[tokio::test]
async fn garbage_before_the_handshake_gets_parse_errors_and_does_not_stop_the_server() {
    let mut raw = RawSession::start(None);
    let mut garbage = vec![0u8, 0xff, 0xfe, b'\n'];
    garbage.extend_from_slice(b"{this is not json\n\n   \n");
    garbage.extend_from_slice(&[0x80, 0x81, b'x', b'\n']);
    raw.raw.send_bytes(&garbage).await;
    for _ in 0..3 {
        let answer = raw
            .raw
            .recv_within(STARTUP)
            .await
            .expect("the server answers");
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::Null, json!(-32700)),
            "{answer}"
        );
    }
    raw.initialize().await;
    raw.server.put("a.txt", "served\n");
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read", "arguments": {"path": "a.txt"}}
        }))
        .await;
    assert_eq!(
        raw.raw.recv().await["result"]["content"][0]["text"],
        "served\n"
    );
    raw.raw.close_input();
    assert!(raw.server.exit_status().await.success());
}

#[tokio::test]
async fn garbage_and_bad_messages_mid_session_do_not_stop_the_server() {
    let mut raw = RawSession::start(None);
    let init = raw.initialize().await;
    assert_eq!(init["id"], 0);
    assert_eq!(init["result"]["serverInfo"]["name"], "pi-tools");
    raw.server.put("a.txt", "served\n");

    // Not JSON: a parse error with the null id JSON-RPC asks for, naming the reason.
    raw.raw.send_bytes(b"\x00\xff garbage {{{\n").await;
    let not_utf8 = raw.raw.recv().await;
    assert_eq!(not_utf8["id"], Value::Null);
    assert_eq!(not_utf8["error"]["code"], -32700);
    assert_eq!(
        not_utf8["error"]["message"],
        "Parse error: the line is not valid UTF-8 (invalid byte at offset 1). Send UTF-8 JSON, one message per line."
    );
    raw.raw.send_bytes(b"this is not json either\n").await;
    let not_json = raw.raw.recv().await;
    assert_eq!(
        (not_json["id"].clone(), not_json["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    // JSON but not JSON-RPC: "Invalid request" naming the reason, with the id when it
    // could be read.
    raw.raw.send(json!({"hello": "world"})).await;
    let invalid = raw.raw.recv().await;
    assert_eq!(invalid["id"], Value::Null);
    assert_eq!(invalid["error"]["code"], -32600);
    assert_eq!(
        invalid["error"]["message"],
        "Invalid request: `jsonrpc` must be \"2.0\". Send JSON-RPC 2.0 messages."
    );
    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 7, "params": {}}))
        .await;
    let no_method = raw.raw.recv().await;
    assert_eq!(no_method["id"], 7);
    assert_eq!(no_method["error"]["code"], -32600);
    assert!(
        no_method["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Invalid request: the message is neither a request")),
        "{no_method}"
    );
    // An unknown method: "Method not found" for its id.
    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}))
        .await;
    let unknown = raw.raw.recv().await;
    assert_eq!(unknown["id"], 1);
    assert_eq!(unknown["error"]["code"], -32601);

    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(
        raw.raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "read", "arguments": {"path": "a.txt"}}
        }))
        .await;
    let mut answer = raw.raw.recv().await;
    // The typed result beside the text: where the file is depends on the scratch directory.
    let structured = answer["result"]
        .as_object_mut()
        .and_then(|result| result.remove("structuredContent"))
        .unwrap_or_default();
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "served\n"}],
            "isError": false
        }})
    );
    assert_eq!(
        (structured["kind"].clone(), structured["totalLines"].clone()),
        (json!("text"), json!(1))
    );

    raw.raw.close_input();
    assert_eq!(raw.raw.recv_or_end().await, None);
    assert!(raw.server.exit_status().await.success());
}

#[tokio::test]
async fn end_of_input_answers_every_request_read_then_ends_the_process_cleanly() {
    let mut raw = RawSession::start(None);
    raw.initialize().await;
    for request in [
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": {
                "command": "sleep 1 & echo $! > sleep.pid; echo $$ > shell.pid; wait; echo slept"
            }}
        }),
        json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "write", "arguments": {"path": "piped.txt", "content": "piped\n"}}
        }),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ] {
        raw.raw.send(request).await;
    }
    let shell = wait_pid(&raw.server.path("shell.pid")).await;
    let sleep = wait_pid(&raw.server.path("sleep.pid")).await;
    raw.raw.close_input();
    // Every request read is answered, the running call after it ran to its end; then
    // stdout closes.
    let mut answers = std::collections::BTreeMap::new();
    while let Some(answer) = raw.raw.recv_or_end().await {
        answers.insert(answer["id"].as_i64().expect("an answer has an id"), answer);
    }
    assert_eq!(answers.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(answers[&1]["result"]["content"][0]["text"], "slept");
    assert_eq!(answers[&2]["result"]["isError"], false);
    assert!(answers[&3]["result"]["tools"].is_array());
    assert_eq!(raw.server.contents("piped.txt"), "piped\n");
    let status = raw.server.exit_status().await;
    assert!(status.success(), "{status}");
    wait_gone(&[shell, sleep], Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_pipe_of_initialize_calls_and_end_of_input_gets_every_answer() {
    // As `printf '%s\n' ... | pi-tools mcp` does: everything written and closed before the
    // server reads a byte.
    let (mut server, mut stdin, mut stdout) = Server::spawn(None);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "write", "arguments": {"path": "out.txt", "content": "from a pipe\n"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": "sleep 0.5; cat out.txt"}}}),
    ];
    let mut input = String::new();
    for line in &lines {
        input.push_str(&line.to_string());
        input.push('\n');
    }
    stdin
        .write_all(input.as_bytes())
        .await
        .expect("the pipe is written");
    drop(stdin);
    let mut output = String::new();
    tokio::time::timeout(PATIENCE, stdout.read_to_string(&mut output))
        .await
        .expect("stdout closes in time")
        .expect("stdout is readable");
    let answers: Vec<Value> = output
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let mut ids: Vec<i64> = answers.iter().filter_map(|a| a["id"].as_i64()).collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2], "{output}");
    assert_eq!(server.contents("out.txt"), "from a pipe\n");
    let status = server.exit_status().await;
    assert!(status.success(), "{status}");

    // Only `initialize`, then the end: still answered.
    let (_server, mut stdin, mut stdout) = Server::spawn(None);
    stdin
        .write_all(format!("{}\n", lines[0]).as_bytes())
        .await
        .expect("the pipe is written");
    drop(stdin);
    let mut output = String::new();
    tokio::time::timeout(PATIENCE, stdout.read_to_string(&mut output))
        .await
        .expect("stdout closes in time")
        .expect("stdout is readable");
    let answer: Value = serde_json::from_str(output.trim()).expect("one JSON answer");
    assert_eq!(answer["result"]["serverInfo"]["name"], "pi-tools");
}

#[tokio::test]
async fn background_jobs_of_finished_calls_do_not_outlive_the_server() {
    let session = Session::start(None).await;
    let sleep = session.background_job().await;
    // The call is over, and its background job still runs.
    assert!(running(sleep));
    let result = session.call("bash", json!({"command": "echo later"})).await;
    assert_eq!(ok_text(&result), "later");
    assert!(running(sleep));

    let status = session.finish().await;
    assert!(status.success(), "{status}");
    wait_gone(&[sleep], Duration::from_secs(5)).await;
}
