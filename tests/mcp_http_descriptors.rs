//! `pi-tools mcp --http` under the common soft limit of 1,024 descriptors, opened by more
//! sessions than the descriptors hold, each leaving a background job running (which holds
//! its output pipe while its session sleeps): the session bound follows the limit, so new
//! sessions past it are refused with the reason, and no session kept fails for want of a
//! descriptor, all of them running a command at once (issue 50, finding 1).
#![cfg(feature = "cli")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::json;

use crate::mcp_http_support::{HttpServer, call, messages, text_of};

/// The soft (and hard) limit on open files the server runs under.
const LIMIT: u32 = 1024;
/// The sessions 1,024 descriptors hold beside 512 connections (half the limit), six
/// descriptors each and 64 for the process: `session_bound.rs`.
const HELD: usize = (1024 - 512 - 64) / 6;
/// The sessions opened.
const OPENED: usize = 1200;
/// Background jobs on, and the bound of sessions set above what the descriptors hold.
const CONFIG: &str = r#"[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]

[mcp]
max_sessions = 4096
"#;
/// Requests in flight at once (below the 64 connections one client address may hold).
const AT_ONCE: usize = 8;

/// The server's open descriptors.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// A bash call in `session` that works: its status and, when answered, its text.
async fn bash(server: &HttpServer, session: &str, arguments: serde_json::Value) -> (u16, String) {
    let (status, text, failed) = bash_call(server, session, arguments).await;
    assert!(!failed, "{text}");
    (status, text)
}

/// A bash call in `session`, failed or not: its status and, when answered, its text.
async fn bash_answer(
    server: &HttpServer,
    session: &str,
    arguments: serde_json::Value,
) -> (u16, String) {
    let (status, text, _) = bash_call(server, session, arguments).await;
    (status, text)
}

async fn bash_call(
    server: &HttpServer,
    session: &str,
    arguments: serde_json::Value,
) -> (u16, String, bool) {
    let response = server
        .post(Some(session), &call(2, "bash", arguments))
        .send()
        .await
        .expect("the call is sent");
    let status = response.status();
    if status != StatusCode::OK {
        return (
            status.as_u16(),
            response.text().await.unwrap_or_default(),
            false,
        );
    }
    let answer = messages(response)
        .await
        .into_iter()
        .find(|m| m["id"] == 2)
        .expect("the call is answered");
    let failed = answer["result"]["isError"] == true;
    (200, text_of(&answer).to_owned(), failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_what_the_descriptors_hold_are_refused_and_the_kept_ones_all_work() {
    let server = Arc::new(HttpServer::spawn_limited(Some(CONFIG), LIMIT).await);
    let pid = server.child.id().expect("the server runs");
    let started = Instant::now();
    let most = Arc::new(AtomicUsize::new(0));
    let count = |most: &AtomicUsize| {
        most.fetch_max(descriptors(pid), Ordering::Relaxed);
    };
    // Every session kept starts a background job, left running; past the bound a new
    // session is refused, saying why.
    let opened: Vec<Result<String, String>> = futures::stream::iter(0..OPENED)
        .map(|n| {
            let server = Arc::clone(&server);
            let most = Arc::clone(&most);
            async move {
                let session = server.try_open_session().await?;
                let (status, text) = bash(
                    &server,
                    &session,
                    json!({"command": "exec sleep 300", "background": true}),
                )
                .await;
                assert_eq!(status, 200, "session {n}: {text}");
                if n % 50 == 0 {
                    count(&most);
                }
                Ok(session)
            }
        })
        .buffered(AT_ONCE)
        .collect()
        .await;
    let opening = started.elapsed();
    let kept: Vec<&String> = opened.iter().filter_map(|o| o.as_ref().ok()).collect();
    let refused: Vec<&String> = opened.iter().filter_map(|o| o.as_ref().err()).collect();
    assert_eq!(kept.len(), HELD);
    assert_eq!(refused.len(), OPENED - HELD);
    assert!(
        refused[0].starts_with(&format!(
            "Service Unavailable: the server already keeps {HELD} sessions, as many as it can keep running at once (the soft limit on open files, `ulimit -n`, is {LIMIT}) (`[mcp] max_sessions`), and it refuses a new one rather than end one of them. Retry later"
        )),
        "{}",
        refused[0]
    );
    // The configured bound was lowered, with the reason and the fix in the log.
    let said = server.log.lock().expect("the log").join("\n");
    assert!(
        said.contains(&format!("max_sessions = 4096 is lowered to {HELD}"))
            && said.contains("ulimit -n"),
        "{said}"
    );
    // Every session kept, the first as the last, runs a command while the others run
    // theirs, their jobs running.
    let answers: Vec<(u16, String)> = futures::stream::iter(&kept)
        .map(|session| {
            let server = Arc::clone(&server);
            let most = Arc::clone(&most);
            async move {
                let answer = bash(&server, session, json!({"command": "sleep 0.5; echo ok"})).await;
                count(&most);
                answer
            }
        })
        .buffer_unordered(48)
        .collect()
        .await;
    for (status, text) in &answers {
        assert_eq!((*status, text.as_str()), (200, "ok"));
    }
    // Their jobs all still run: none was ended to make room.
    let listed = bash(
        &server,
        kept[0],
        json!({"command": "pgrep -c -x sleep || true"}),
    )
    .await;
    assert!(
        listed.1.trim().parse::<usize>().is_ok_and(|n| n >= HELD),
        "{listed:?}"
    );
    let most = most.load(Ordering::Relaxed);
    assert!(most < LIMIT as usize, "{most} descriptors");
    eprintln!(
        "{OPENED} sessions asked for in {opening:?}, {HELD} kept and {} refused; every kept one called, 48 at once; at most {most} descriptors seen; {:?} in all",
        refused.len(),
        started.elapsed()
    );
}

/// A session whose background jobs (each keeps its output pipes and its process handle)
/// find no descriptor left: the start that fails says EMFILE and the limit, to the client
/// and in the log, and blames no root or command.
///
/// How many descriptors a job holds, and how many the process holds beside them, differ
/// from machine to machine, so a fixed limit and a count of jobs cannot tell when they run
/// out. After each job that starts, the server's soft limit is set to what it then holds
/// and two more: the next start, which needs more than two at once (a pipe takes two),
/// runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_out_of_descriptors_says_emfile_and_the_limit() {
    let server = HttpServer::spawn_limited(Some(CONFIG), 1024).await;
    let pid = server.child.id().expect("the server runs");
    let session = server.open_session().await;
    let start = json!({"command": "exec sleep 300", "background": true});
    let (status, first) = bash_answer(&server, &session, start.clone()).await;
    assert_eq!((status, first.contains("EMFILE")), (200, false), "{first}");
    let mut answers = Vec::new();
    let mut limit = 0;
    // A session runs at most 16 jobs; the first is running.
    for _ in 1..16 {
        limit = descriptors(pid) + 2;
        let soft = u64::try_from(limit).expect("a small number");
        rustix::process::prlimit(
            Some(
                rustix::process::Pid::from_raw(i32::try_from(pid).expect("a pid")).expect("a pid"),
            ),
            rustix::process::Resource::Nofile,
            rustix::process::Rlimit {
                current: Some(soft),
                maximum: Some(1024),
            },
        )
        .expect("the server's soft limit is set");
        let (status, text) = bash_answer(&server, &session, start.clone()).await;
        assert_eq!(status, 200, "{text}");
        let refused = text.contains("EMFILE");
        answers.push(text);
        if refused {
            break;
        }
    }
    let refused = answers.last().expect("a job was started");
    eprintln!(
        "job {} of the session found {limit} descriptors too few to start",
        answers.len() + 1
    );
    assert!(
        refused.starts_with(&format!(
            "The server is out of file descriptors (EMFILE, too many open files: its soft limit, `ulimit -n`, is {limit})."
        )),
        "each start with two descriptors left answered: {answers:#?}"
    );
    assert!(!refused.contains("cannot be used"), "{refused}");
    let log = server.log.lock().expect("the log").join("\n");
    assert!(log.contains("EMFILE, too many open files"), "{log}");
}
