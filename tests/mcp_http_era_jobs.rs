//! Background jobs for 2026-07-28 clients over Streamable HTTP, against the binary with a
//! real HTTP client: the stateless house keeps one environment for the era's requests, so a
//! job started in one request is read in the next, is a task (`tasks/get` follows it from
//! working to completed, `tasks/cancel` kills it), its end is told in the next result, and
//! it ends with the server. A person's "allow for the session" holds for that call only.
#![cfg(feature = "cli")]

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_http_support::{HttpServer, request_2026, running, text_of, wait_gone, wait_pid};

/// bash with the job tools.
const JOBS_TOML: &str = r#"[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]
"#;

/// Posts `body` outside any session; the JSON-RPC answer with its id.
async fn post(server: &HttpServer, body: &Value) -> Value {
    let (answer, _, headers) = server.post_2026(body).await;
    assert!(
        headers.get("mcp-session-id").is_none(),
        "no session: {headers:?}"
    );
    answer
}

fn tasks() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"name": tool, "arguments": arguments})
}

/// The task a result names in its `_meta` as the one following its job.
fn related_task(answer: &Value) -> String {
    answer["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a related task: {answer}"))
        .to_owned()
}

/// `tasks/get` of `task` until its status is not `working`; that answer.
async fn until_ended(server: &HttpServer, task: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let got = post(
            server,
            &request_2026(90, "tasks/get", json!({"taskId": task}), &tasks()),
        )
        .await;
        if got["result"]["status"] != "working" {
            return got;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task ends: {got}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_2026_clients_job_is_read_later_is_a_task_and_its_end_is_told() {
    let server = HttpServer::spawn_with(None, &[], Some(JOBS_TOML)).await;
    let command = "echo $$ > one.pid; echo started; read line; sleep 1; echo finished; exit 3";
    let started = post(
        &server,
        &request_2026(
            1,
            "tools/call",
            call("bash", json!({"command": command, "background": true})),
            &tasks(),
        ),
    )
    .await;
    assert_eq!(started["result"]["isError"], false, "{started}");
    assert!(
        text_of(&started).contains("[Job 1 is still running"),
        "{started}"
    );
    let task = related_task(&started);
    let pid = wait_pid(&server.path("one.pid")).await;

    // The job and its task, from later requests.
    let got = post(
        &server,
        &request_2026(2, "tasks/get", json!({"taskId": task}), &tasks()),
    )
    .await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let read = post(
            &server,
            &request_2026(
                3,
                "tools/call",
                call("job_output", json!({"job": 1})),
                &json!({}),
            ),
        )
        .await;
        assert_eq!(read["result"]["isError"], false, "{read}");
        if text_of(&read).contains("started") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{read}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let written = post(
        &server,
        &request_2026(
            4,
            "tools/call",
            call("job_input", json!({"job": 1, "input": "go\n", "wait": 0})),
            &json!({}),
        ),
    )
    .await;
    assert_eq!(written["result"]["isError"], false, "{written}");

    // Ended: the task says how, with the last lines.
    let ended = until_ended(&server, &task).await;
    assert_eq!(ended["result"]["status"], "completed", "{ended}");
    let result = &ended["result"]["result"];
    let text = result["content"][0]["text"].as_str().expect("a text");
    assert!(text.contains("exited with code 3"), "{ended}");
    assert!(text.contains("finished"), "{ended}");
    assert_eq!(result["isError"], true, "exit code 3: {ended}");
    assert!(!running(pid));

    // And the next result of the house notes it, as a session's would.
    let next = post(
        &server,
        &request_2026(
            5,
            "tools/call",
            call("bash", json!({"command": "echo next"})),
            &json!({}),
        ),
    )
    .await;
    let all: Vec<&str> = next["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(
        all.iter()
            .any(|t| t.contains("[Job 1 (`echo $$ > one.pid") && t.contains("exited with code 3")),
        "{next}"
    );

    // A second job, cancelled through its task: its process is gone.
    let command = "echo $$ > two.pid; exec sleep 300";
    let started = post(
        &server,
        &request_2026(
            6,
            "tools/call",
            call("bash", json!({"command": command, "background": true})),
            &tasks(),
        ),
    )
    .await;
    assert!(
        text_of(&started).contains("[Job 2 is still running"),
        "{started}"
    );
    let task = related_task(&started);
    let pid = wait_pid(&server.path("two.pid")).await;
    assert!(running(pid));
    let cancelled = post(
        &server,
        &request_2026(7, "tasks/cancel", json!({"taskId": task}), &tasks()),
    )
    .await;
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    wait_gone(&[pid], Duration::from_secs(10)).await;
    let got = post(
        &server,
        &request_2026(8, "tasks/get", json!({"taskId": task}), &tasks()),
    )
    .await;
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let listed = post(
        &server,
        &request_2026(9, "tools/call", call("job_list", json!({})), &json!({})),
    )
    .await;
    assert!(text_of(&listed).contains("sleep 300"), "{listed}");

    // Without the tasks extension a job is a job only.
    let plain = post(
        &server,
        &request_2026(
            10,
            "tools/call",
            call("bash", json!({"command": "sleep 300", "background": true})),
            &json!({}),
        ),
    )
    .await;
    assert!(
        text_of(&plain).contains("[Job 3 is still running"),
        "{plain}"
    );
    assert!(plain["result"].get("_meta").is_none(), "{plain}");
}

/// Every request of a `--stateless` server is served by the house: a job outlives its
/// request, and ends with the server, whether it stops (SIGTERM) or is killed outright
/// (SIGKILL), leaving none of its processes behind.
#[tokio::test]
async fn a_stateless_servers_jobs_outlive_their_request_and_end_with_the_server() {
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let mut server = HttpServer::spawn_with(None, &["--stateless"], Some(JOBS_TOML)).await;
        let command = "echo $$ > job.pid; exec sleep 300";
        let started = post(
            &server,
            &request_2026(
                1,
                "tools/call",
                call("bash", json!({"command": command, "background": true})),
                &json!({}),
            ),
        )
        .await;
        assert!(
            text_of(&started).contains("[Job 1 is still running"),
            "{started}"
        );
        let pid = wait_pid(&server.path("job.pid")).await;
        let listed = post(
            &server,
            &request_2026(2, "tools/call", call("job_list", json!({})), &json!({})),
        )
        .await;
        assert!(text_of(&listed).contains("sleep 300"), "{listed}");
        assert!(running(pid));
        let server_pid = server.child.id().expect("the server runs");
        let server_pid = i32::try_from(server_pid).expect("a pid fits");
        // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
        assert_eq!(unsafe { libc::kill(server_pid, signal) }, 0);
        server.child.wait().await.expect("it ended");
        wait_gone(&[pid], Duration::from_secs(10)).await;
    }
}

/// The house serves every client, so "allow for the session" holds for the call asked
/// about only: the next call the rule asks about is asked again.
#[tokio::test]
async fn an_answer_for_the_session_does_not_reach_the_next_stateless_request_2026() {
    let config = "[[policy.rule]]\ntool = \"write\"\ndecision = \"ask\"\nreason = \"A person decides what is written.\"\n";
    let server = HttpServer::spawn_with(None, &["--stateless"], Some(config)).await;
    let capabilities = json!({"elicitation": {"form": {}}});
    let write = |path: &str| call("write", json!({"path": path, "content": "x"}));
    let asked = post(
        &server,
        &request_2026(1, "tools/call", write("one.txt"), &capabilities),
    )
    .await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let (key, _) = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|r| r.iter().next())
        .expect("one question");
    let state = asked["result"]["requestState"].as_str().expect("a state");
    let mut params = write("one.txt");
    params["requestState"] = json!(state);
    params["inputResponses"] =
        json!({key: {"action": "accept", "content": {"answer": "allow_session"}}});
    let ran = post(
        &server,
        &request_2026(2, "tools/call", params, &capabilities),
    )
    .await;
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert!(server.path("one.txt").exists());

    let next = post(
        &server,
        &request_2026(3, "tools/call", write("two.txt"), &capabilities),
    )
    .await;
    assert_eq!(next["result"]["resultType"], "input_required", "{next}");
    assert!(!server.path("two.txt").exists());
}
