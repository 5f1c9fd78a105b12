//! `pi-tools mcp --http`, spawned, with more sessions than are kept awake: a sleeping
//! session holds no descriptor, no inotify instance and no private temporary directory, the
//! process takes only a small share of the user's inotify instances, and a sleeping session
//! woken by a call has them all again (issue 50, findings 1 to 3; counted in /proc).
#![cfg(feature = "cli")]

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::mcp_http_support::{HttpServer, call, messages, text_of};

/// Idle sessions the server keeps awake (`awake_idle`: 32, or an eighth of the limit on
/// open files when lower), and the one that is the last to have gone idle when it counts
/// them; those past it sleep.
const AWAKE: usize = 33;
/// The most inotify instances the process takes (`MAX_INSTANCES` in `dir_watch.rs`).
const MAX_INSTANCES: usize = 16;

/// The kinds of the process's open descriptors (`anon_inode:inotify`, a directory's path,
/// ...) with how many of each.
fn descriptors(pid: u32) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).expect("/proc/PID/fd") {
        let Ok(entry) = entry else { continue };
        if let Ok(target) = std::fs::read_link(entry.path()) {
            let kind = target.to_string_lossy().into_owned();
            let kind = if kind.starts_with("socket:") || kind.starts_with("pipe:") {
                kind.split(':').next().unwrap_or_default().to_owned()
            } else {
                kind
            };
            *kinds.entry(kind).or_insert(0) += 1;
        }
    }
    kinds
}

/// The private temporary directories of the process (in the temporary directory and in
/// `/dev/shm`).
fn sandbox_dirs(pid: u32) -> usize {
    let prefix = format!("pi-tools-sandbox-{pid}-");
    [std::env::temp_dir(), "/dev/shm".into()]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .count()
}

/// A bash `tools/call` in `session`, answered (its session asleep or not).
async fn call_in(server: &HttpServer, session: &str, id: i64, arguments: Value) -> Value {
    let response = server
        .post(Some(session), &call(id, "bash", arguments))
        .send()
        .await
        .expect("the call is sent");
    let status = response.status();
    if status != StatusCode::OK {
        panic!("{status}: {}", response.text().await.unwrap_or_default());
    }
    messages(response)
        .await
        .into_iter()
        .find(|m| m["id"] == id)
        .expect("the call is answered")
}

/// Many more sessions than are kept awake (200, each with a bash call, and 100 that never
/// make one, under a limit of 4,096 descriptors, which keeps up to 501 sessions; a lower
/// limit keeps fewer, see `mcp_http_descriptors.rs`): every call works, the first
/// session's too once the last has been opened, and the sleeping ones are counted holding
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sleeping_sessions_hold_no_descriptor_watch_or_directory() {
    let server = HttpServer::spawn_with_descriptor_limit(4096).await;
    // A workspace with folders beneath it: each session's repository search walks and
    // watches them.
    for i in 0..300 {
        std::fs::create_dir_all(server.path(&format!("d{}/e{i}", i / 30))).expect("mkdir");
    }
    let pid = server.child.id().expect("the server runs");
    let sessions = 200;
    let mut opened = Vec::new();
    for n in 0..sessions {
        let session = server.open_session().await;
        let answer = call_in(&server, &session, 1, json!({"command": "echo hi"})).await;
        assert_eq!(text_of(&answer), "hi", "session {n}");
        opened.push(session);
    }
    // And sessions that never made a call: theirs were made when they started.
    for _ in 0..100 {
        server.open_session().await;
    }
    // The sessions past the awake ones fall asleep once their call ended.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let (kinds, dirs) = loop {
        let kinds = descriptors(pid);
        let dirs = sandbox_dirs(pid);
        let rulesets = kinds.get("anon_inode:[landlock-ruleset]").copied();
        if (rulesets.unwrap_or(0) <= AWAKE && dirs <= 2 * AWAKE)
            || tokio::time::Instant::now() > deadline
        {
            break (kinds, dirs);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let work = std::fs::canonicalize(server.work.path()).expect("canonical");
    let of = |kind: &str| kinds.get(kind).copied().unwrap_or(0);
    assert!(
        of("anon_inode:inotify") <= MAX_INSTANCES,
        "at most {MAX_INSTANCES} inotify instances: {kinds:?}"
    );
    assert!(
        of("anon_inode:[landlock-ruleset]") <= AWAKE,
        "a sleeping session holds no Landlock ruleset: {kinds:?}"
    );
    assert!(
        of(&work.to_string_lossy()) <= AWAKE,
        "a sleeping session holds no handle of its root: {kinds:?}"
    );
    assert!(
        dirs <= 2 * AWAKE,
        "a sleeping session holds no private temporary directory: {dirs} for {sessions} sessions"
    );
    // The first session, asleep for long, is woken by a call.
    let first = call_in(&server, &opened[0], 3, json!({"command": "echo first"})).await;
    assert_eq!(text_of(&first), "first");
    // The last session sleeps; a call wakes it, with its temporary directory made again
    // and its repository search working: the repository its command makes below the top
    // is found, and what git wrote in it is taken away as in any call.
    let last = opened.last().expect("sessions");
    let command = "test -d \"$TMPDIR\" && echo tmp > \"$TMPDIR/x\" && cat \"$TMPDIR/x\" && mkdir -p d0/new && git init -q d0/new && echo made";
    let answer = call_in(&server, last, 2, json!({ "command": command })).await;
    let text = text_of(&answer);
    assert!(text.starts_with("tmp\nmade\n"), "{text}");
    let config = std::fs::canonicalize(server.path("d0/new/.git"))
        .expect("the repository")
        .join("config");
    assert!(
        text.contains(&format!("removed {}.", config.display())),
        "{text}"
    );
}
