//! Bad input and the end of a session: garbage before and during the session, end of input,
//! signals, and background jobs that must not outlive the server.

use super::*;

/// SIGTERM, SIGHUP and SIGINT each end the stdio server as the end of its input does: the
/// running call is cancelled, the background job killed, and the server exits cleanly.
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
    assert_eq!(
        raw.raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "served\n"}],
            "isError": false
        }})
    );

    raw.raw.close_input();
    assert_eq!(raw.raw.recv_or_end().await, None);
    assert!(raw.server.exit_status().await.success());
}

#[tokio::test]
async fn end_of_input_ends_the_process_cleanly_and_leaves_no_processes_behind() {
    let mut raw = RawSession::start(None);
    raw.initialize().await;
    raw.raw
        .send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": {
                "command": "sleep 30 & echo $! > sleep.pid; echo $$ > shell.pid; wait"
            }}
        }))
        .await;
    let shell = wait_pid(&raw.server.path("shell.pid")).await;
    let sleep = wait_pid(&raw.server.path("sleep.pid")).await;
    assert!(running(shell) && running(sleep));

    let closed = Instant::now();
    raw.raw.close_input();
    // The call in flight is cancelled; its answer has no reader left and is not written
    // (some clients fail on a message after they closed the session), and stdout closes.
    assert_eq!(raw.raw.recv_or_end().await, None);
    let status = raw.server.exit_status().await;
    assert!(status.success(), "{status}");
    // Well before the 30 s sleep would have ended.
    assert!(closed.elapsed() < Duration::from_secs(15));
    wait_gone(&[shell, sleep], Duration::from_secs(5)).await;
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
