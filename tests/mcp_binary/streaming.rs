//! What a running call streams to the client: progress with every byte of output in order,
//! and the command's stderr as log messages at the client's level.

use super::*;

/// Runs `command` with a progress token; returns each notification's message with when it
/// came (from the call's start), in the server's order (the client hands notifications to
/// its handler in tasks of their own, so they may reach the test out of order), and the
/// result's text.
async fn progress_of(session: &mut Session, command: &str) -> (Vec<(Duration, String)>, String) {
    let started = Instant::now();
    let handle = session
        .start_call("bash", json!({"command": command}))
        .await;
    let token = handle.progress_token.clone();
    let response = handle.await_response();
    tokio::pin!(response);
    let mut notes = Vec::new();
    let result = loop {
        tokio::select! {
            note = session.progress.recv() => {
                notes.push((started.elapsed(), note.expect("the client is open")));
            }
            result = &mut response => break result,
        }
    };
    let result = match result.expect("tools/call answers") {
        ServerResult::CallToolResult(result) => result,
        other => panic!("expected a tool result, got {other:?}"),
    };
    while let Ok(Some(note)) =
        tokio::time::timeout(Duration::from_millis(300), session.progress.recv()).await
    {
        notes.push((started.elapsed(), note));
    }
    notes.sort_by(|a, b| a.1.progress.total_cmp(&b.1.progress));
    let mut messages = Vec::new();
    for (n, (at, note)) in notes.into_iter().enumerate() {
        assert_eq!(note.progress_token, token);
        assert_eq!(note.progress, (n + 1) as f64, "the counter grows by one");
        assert_eq!(note.total, None);
        messages.push((at, note.message.unwrap_or_default()));
    }
    (messages, ok_text(&result))
}

/// The output the notifications carried, heartbeats left out.
fn output_of(notes: &[(Duration, String)]) -> String {
    notes
        .iter()
        .map(|(_, m)| m.as_str())
        .filter(|m| !m.starts_with("running for "))
        .collect()
}

#[tokio::test]
async fn progress_carries_every_byte_in_order_the_last_output_at_once_and_heartbeats_each_second() {
    let mut session = Session::start(None).await;
    // Output 50 ms apart and then silence: B must not wait for more output to be sent.
    let (notes, result) = progress_of(&mut session, "echo A; sleep 0.05; echo B; sleep 2.5").await;
    assert_eq!(result, "A\nB");
    assert_eq!(output_of(&notes), "A\nB\n", "{notes:?}");
    let a = notes
        .iter()
        .position(|(_, m)| m.contains('A'))
        .expect("A is sent");
    let b = notes
        .iter()
        .position(|(_, m)| m.contains('B'))
        .expect("B is sent");
    assert!(
        notes[b].0 - notes[a].0 < Duration::from_millis(600),
        "{notes:?}"
    );
    // Then a heartbeat once a second of silence has passed, never later.
    let beats: Vec<&(Duration, String)> = notes[b + 1..].iter().collect();
    assert!(beats.len() >= 2, "{notes:?}");
    assert!(
        beats.iter().all(|(_, m)| m.starts_with("running for ")),
        "{notes:?}"
    );
    let mut last = notes[b].0;
    for (at, message) in &beats {
        let gap = *at - last;
        assert!(
            gap >= Duration::from_millis(900) && gap <= Duration::from_millis(1400),
            "{message:?} came {gap:?} after the previous message: {notes:?}"
        );
        last = *at;
    }

    // A steady trickle: every line, the last one included.
    let (notes, _) = progress_of(
        &mut session,
        "for i in $(seq 1 12); do echo L$i; sleep 0.03; done",
    )
    .await;
    let lines: String = (1..=12).map(|i| format!("L{i}\n")).collect();
    assert_eq!(output_of(&notes), lines, "{notes:?}");

    // A burst larger than one notification: pieces of at most 4 KB, together the output.
    let (notes, _) = progress_of(&mut session, "seq -f 'line %g of a longer output' 1 1500").await;
    let whole: String = (1..=1500)
        .map(|i| format!("line {i} of a longer output\n"))
        .collect();
    assert!(
        notes.iter().all(|(_, m)| m.len() <= 4096),
        "a notification over 4 KB"
    );
    assert!(notes.len() >= whole.len() / 4096, "{}", notes.len());
    assert_eq!(output_of(&notes), whole);
    assert!(session.finish().await.success());
}

/// The `notifications/message` lines (level, logger, data) that arrive before the answer
/// to `id`, and that answer.
async fn logs_until(raw: &mut RawSession, id: i64) -> (Vec<(String, String, String)>, Value) {
    let mut logs = Vec::new();
    loop {
        let line = raw.raw.recv().await;
        if line["id"] == id {
            return (logs, line);
        }
        if line["method"] == "notifications/message" {
            let field = |name: &str| line["params"][name].as_str().unwrap_or_default().to_owned();
            logs.push((field("level"), field("logger"), field("data")));
        }
    }
}

/// While a bash call runs, each of its stderr lines reaches the client as a `warning` from
/// logger `bash` (a last line without a newline too, a long one in 4 KB pieces), while its
/// stdout does not; the model's output keeps both. A level above warning silences them.
#[tokio::test]
async fn bash_stderr_lines_reach_the_client_as_warnings_filtered_by_its_level() {
    let mut raw = RawSession::start(None);
    raw.initialize().await;
    let command = "echo out; echo 'first problem' >&2; sleep 0.05; echo out2; \
                   head -c 5000 /dev/zero | tr '\\0' x >&2; echo >&2; printf 'last' >&2";
    let bash = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": command}}})
    };
    raw.raw.send(bash(1)).await;
    let (logs, answer) = logs_until(&mut raw, 1).await;
    let warning = |data: &str| ("warning".to_owned(), "bash".to_owned(), data.to_owned());
    // A line longer than 4 KB comes in pieces of 4 KB.
    assert_eq!(
        logs,
        vec![
            warning("first problem"),
            warning(&"x".repeat(4096)),
            warning(&"x".repeat(904)),
            warning("last")
        ]
    );
    assert_eq!(answer["result"]["isError"], false);
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .expect("a text result");
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    let long = "x".repeat(5000);
    assert_eq!(
        lines,
        ["first problem", "last", "out", "out2", &long],
        "{text}"
    );

    raw.raw
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}))
        .await;
    assert_eq!(
        raw.raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    raw.raw.send(bash(3)).await;
    let (logs, answer) = logs_until(&mut raw, 3).await;
    assert_eq!(logs, Vec::new());
    assert_eq!(answer["result"]["isError"], false);
    raw.raw.close_input();
    assert!(raw.server.exit_status().await.success());
}
