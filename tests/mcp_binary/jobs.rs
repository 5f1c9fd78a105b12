//! Jobs over `pi-tools mcp` on stdio: the end of a job is told in the next result, and
//! every job's processes end with the session: at the end of input, on SIGTERM, and when
//! the server is killed outright (its guard), checked in /proc and on a real port.

use super::*;
use support::procfs::{listening_ports, processes_with};

/// bash with the job tools.
const JOBS_TOML: &str = r#"[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]
"#;

/// The text blocks of a result.
fn blocks(result: &CallToolResult) -> Vec<String> {
    let value = serde_json::to_value(result).expect("a result serialises");
    value["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_owned))
        .collect()
}

/// Starts a web server as job 1 in `session`; its pid and port.
async fn server_job(session: &Session) -> (u32, u16) {
    let dir = session.server.work.path().display().to_string();
    let started = session
        .call(
            "bash",
            json!({"command": format!("exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory {dir}"), "background": true}),
        )
        .await;
    assert!(
        ok_text(&started).contains("[Job 1 is still running after"),
        "{started:?}"
    );
    // Python's start is slow on a loaded machine: three times the usual patience.
    let deadline = Instant::now() + 3 * PATIENCE;
    loop {
        let found = processes_with(&format!("--directory {dir}"));
        if let [pid] = found[..]
            && let Some(&port) = listening_ports(pid).first()
        {
            return (pid, port);
        }
        assert!(Instant::now() < deadline, "the server never listened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn closed(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_err()
}

#[tokio::test]
async fn a_jobs_end_reaches_the_client_in_the_next_result() {
    let session = Session::start(Some(JOBS_TOML)).await;
    let started = session
        .call(
            "bash",
            json!({"command": "echo begun; sleep 1.5; echo over", "yield": 1}),
        )
        .await;
    // A second for `begun` to be printed (the yield), and the job then ends in half a
    // second more: waited for below with room for a loaded machine.
    assert!(
        ok_text(&started).starts_with("begun\n\n[Job 1 is still running"),
        "{started:?}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    let next = session.call("bash", json!({"command": "echo next"})).await;
    let texts = blocks(&next);
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(texts[0], "next");
    assert!(
        texts[1].starts_with("[Job 1 (`echo begun; sleep 1.5; echo over`) exited with code 0"),
        "{}",
        texts[1]
    );
    assert!(
        texts[1].ends_with("its last lines:]\nbegun\nover"),
        "{}",
        texts[1]
    );
    let listed = session.call("job_list", json!({})).await;
    assert_eq!(blocks(&listed).len(), 1, "told once");
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_server_job_answers_between_calls_and_ends_with_the_end_of_input() {
    let session = Session::start(Some(JOBS_TOML)).await;
    let (pid, port) = server_job(&session).await;
    let fetched = session
        .call(
            "bash",
            json!({"command": format!("python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{port}/').status)\"")}),
        )
        .await;
    assert_eq!(ok_text(&fetched), "200");
    assert!(running(pid));
    assert!(session.finish().await.success());
    wait_gone(&[pid], Duration::from_secs(5)).await;
    assert!(closed(port), "port {port} closed");
}

#[tokio::test]
async fn sigterm_and_sigkill_of_the_server_leave_no_job_process() {
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let session = Session::start(Some(JOBS_TOML)).await;
        let (pid, port) = server_job(&session).await;
        let pty = session
            .call(
                "bash",
                json!({"command": "echo $$ > pty.pid; exec sleep 300", "pty": true, "yield": 0.5}),
            )
            .await;
        assert!(ok_text(&pty).contains("[Job 2 is still running"));
        let on_pty = wait_pid(&session.server.path("pty.pid")).await;
        assert!(running(pid) && running(on_pty));
        let Session {
            mut server, client, ..
        } = session;
        let server_pid = i32::try_from(server.child.id().expect("runs")).expect("a pid fits");
        // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
        assert_eq!(unsafe { libc::kill(server_pid, signal) }, 0);
        let _ = server.exit_status().await;
        wait_gone(&[pid, on_pty], Duration::from_secs(5)).await;
        assert!(closed(port), "signal {signal}: port {port} closed");
        drop(client);
    }
}

/// Over 2025-11-25, the client hears of a job's end when it happens, between calls, as a
/// logging notification; the next result carries it too.
#[tokio::test]
async fn a_jobs_end_is_a_logging_notification_when_it_happens() {
    let mut session = RawSession::start(Some(JOBS_TOML));
    session
        .raw
        .send(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}
        }))
        .await;
    let answer = session.raw.recv_within(STARTUP).await.expect("initialized");
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    session
        .raw
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    session.raw.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "echo going; sleep 0.5; exit 4", "background": true}}
    }))
    .await;
    let started = session.raw.recv().await;
    assert_eq!(started["id"], 1, "{started}");
    // No call runs now; the notice comes by itself.
    let notice = session.raw.recv().await;
    assert_eq!(notice["method"], "notifications/message", "{notice}");
    assert_eq!(notice["params"]["level"], "info");
    assert_eq!(notice["params"]["logger"], "notice");
    let text = notice["params"]["data"].as_str().expect("text");
    assert!(
        text.starts_with("[Job 1 (`echo going; sleep 0.5; exit 4`) exited with code 4 after "),
        "{text}"
    );
    session
        .raw
        .send(json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "job_list", "arguments": {}}
        }))
        .await;
    let listed = session.raw.recv().await;
    assert_eq!(listed["result"]["content"][1]["text"], text, "{listed}");
    session.raw.close_input();
    assert!(session.server.exit_status().await.success());
}
