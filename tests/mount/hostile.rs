//! A mounted server that misbehaves (`hostile_server.py`, run by Python): an answer over
//! `[mcp] max_message_bytes` or with too many values to decode, a flood of pings while it
//! stops reading, and processes it starts outside its group (`setsid`, a double fork) or
//! keeps running after the end of its input and SIGTERM. The gateway cuts such a server
//! off, fails its calls at once with the reason, and leaves nothing of it running.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tools::config::ServerSettings;
use pi_tools::mount::{McpServerTools, MountOptions};
use pi_tools::{RunnerConfig, ToolSet};
use serde_json::{Value, json};

use super::mount_support::{STARTUP, Setup, StdioGateway, gone, text_of};
use super::{call, processes_with};

fn command() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mount/hostile_server.py");
    vec![
        "python3".into(),
        "-u".into(),
        script.to_str().expect("a UTF-8 path").into(),
    ]
}

/// The hostile server mounted as `h`, its messages limited to `limit` bytes.
async fn hostile(limit: usize) -> (McpServerTools, Arc<ToolSet>) {
    let server = hostile_as("h", limit).await;
    let mut tools = ToolSet::new([]);
    server.add_to(&mut tools);
    (server, Arc::new(tools))
}

/// The hostile server mounted as `name`.
async fn hostile_as(name: &str, limit: usize) -> McpServerTools {
    let mut settings = ServerSettings::stdio(name, command());
    settings.startup_timeout = STARTUP;
    let options = MountOptions {
        max_message_bytes: limit,
        ..MountOptions::default()
    };
    let cwd = std::env::current_dir().expect("cwd");
    McpServerTools::connect_in(settings, &cwd, &options)
        .await
        .expect("the hostile server starts")
}

/// Calls `name` while `h__hang` waits beside it; both texts, and how long it took.
async fn with_a_bystander(tools: &Arc<ToolSet>, name: &str, args: Value) -> (String, String) {
    let bystander = {
        let tools = Arc::clone(tools);
        tokio::spawn(
            async move { call(&tools, &RunnerConfig::default(), "h__hang", json!({})).await },
        )
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (message, _) = tokio::time::timeout(
        Duration::from_secs(20),
        call(tools, &RunnerConfig::default(), name, args),
    )
    .await
    .expect("the call fails at once");
    let (hung, _) = tokio::time::timeout(Duration::from_secs(10), bystander)
        .await
        .expect("the other call fails at once too")
        .expect("the task");
    assert_eq!(message["isError"], true, "{message}");
    assert_eq!(hung["isError"], true, "{hung}");
    (text_of(&message), text_of(&hung))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_limit_cuts_the_server_off_and_its_calls_fail_with_the_reason() {
    let (server, tools) = hostile(1 << 20).await;
    let started = Instant::now();
    let (text, other) =
        with_a_bystander(&tools, "h__big", json!({"count": 1, "width": 2_000_000})).await;
    assert!(started.elapsed() < Duration::from_secs(15));
    let reason = "the gateway cut it off: it sent a message longer than 1048576 bytes, the limit of [mcp] max_message_bytes";
    assert!(text.contains(reason), "{text}");
    assert!(other.contains(reason), "{other}");
    // The next call starts it again.
    let (message, _) = call(
        &tools,
        &RunnerConfig::default(),
        "h__echo",
        json!({"text": "back"}),
    )
    .await;
    assert_eq!(text_of(&message), "back");

    // Under the limit, but 300 000 values: more than decoding may take memory for.
    let (text, _) = with_a_bystander(&tools, "h__big", json!({"count": 300_000})).await;
    assert!(
        text.contains("the gateway cut it off: it sent a message of 3000")
            && text.contains(" JSON values; the gateway decodes at most 65536 in one message (one per 16 bytes of [mcp] max_message_bytes)"),
        "{text}"
    );
    server.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_reading_is_cut_off_and_its_calls_fail_at_once() {
    let (server, tools) = hostile(1 << 20).await;
    let started = Instant::now();
    let (text, other) = with_a_bystander(&tools, "h__flood", json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let reason = "the gateway cut it off: it stopped reading its input";
    assert!(text.contains(reason), "{text}");
    assert!(other.contains(reason), "{other}");
    let (message, _) = call(
        &tools,
        &RunnerConfig::default(),
        "h__echo",
        json!({"text": "back"}),
    )
    .await;
    assert_eq!(text_of(&message), "back");
    server.end().await;
}

/// Three servers flood pings at once while they stop reading, more of them than the
/// runtime has worker threads: each is cut off and its call fails at once. (Without a bound
/// on the requests waiting for an answer, rmcp's tasks for them grew by hundreds of MB a
/// second and no call ever returned; a thread aborts the test past 1.5 GB.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_flooding_at_once_are_each_cut_off() {
    std::thread::spawn(|| {
        loop {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let kb: u64 = status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0);
            if kb > 1_500_000 {
                eprintln!("the flooded gateway took {kb} kB: aborting");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let mut servers = Vec::new();
    let mut tools = ToolSet::new([]);
    for name in ["f1", "f2", "f3"] {
        let server = hostile_as(name, 1 << 20).await;
        server.add_to(&mut tools);
        servers.push(server);
    }
    let tools = Arc::new(tools);
    let started = Instant::now();
    let calls: Vec<_> = ["f1", "f2", "f3"]
        .into_iter()
        .map(|name| {
            let tools = Arc::clone(&tools);
            tokio::spawn(async move {
                let name = format!("{name}__flood");
                call(&tools, &RunnerConfig::default(), &name, json!({})).await
            })
        })
        .collect();
    for task in calls {
        let (message, _) = tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("the call fails at once")
            .expect("the task");
        assert_eq!(message["isError"], true, "{message}");
        assert!(
            text_of(&message).contains("the gateway cut it off: it stopped reading its input"),
            "{message}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    for server in servers {
        server.end().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_server_started_outside_its_group_ends_with_it() {
    let (server, tools) = hostile(1 << 20).await;
    let tag = support::procfs::tag();
    let (message, _) = call(
        &tools,
        &RunnerConfig::default(),
        "h__spawn",
        json!({"tag": tag}),
    )
    .await;
    assert_eq!(text_of(&message), "spawned");
    assert_eq!(
        support::procfs::settle(2, || support::procfs::alive(&tag).len()).await,
        2,
        "a child in its group and a double-forked one in a session of its own"
    );
    server.end().await;
    assert_eq!(
        support::procfs::settle(0, || support::procfs::alive(&tag).len()).await,
        0,
        "nothing it started outlives it: {:?}",
        support::procfs::alive(&tag)
    );
}

/// Two sessions call the same server: one call of the first runs (reporting its own
/// progress) while a call of the second sends progress with every other call's token. The
/// second waits for the first to end, so its made-up progress reaches nobody.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_only_calls_of_the_session_the_server_works_for() {
    use pi_tools::env::local::LocalEnv;
    use pi_tools::env::{ExecutionEnv, WithEnv};
    let (server, tools) = hostile(1 << 20).await;
    let session = || {
        RunnerConfig::default()
            .with_env(Arc::new(LocalEnv::new(std::env::temp_dir())) as Arc<dyn ExecutionEnv>)
    };
    let first = {
        let tools = Arc::clone(&tools);
        let config = session();
        tokio::spawn(async move { call(&tools, &config, "h__progress", json!({"wait": 2})).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (stealer, _) = call(&tools, &session(), "h__progress", json!({"steal": true})).await;
    assert_eq!(text_of(&stealer), "done");
    let (message, events) = first.await.expect("the task");
    assert_eq!(text_of(&message), "done");
    let events = serde_json::to_string(&events).expect("JSON");
    assert!(events.contains("own"), "its own progress arrived: {events}");
    assert!(
        !events.contains("stolen"),
        "another session's progress arrived: {events}"
    );
    server.end().await;
}

/// A call of one session ends, but the server goes on sending progress (a thread of its
/// own) to every call it sees; a call of another session then starts. The server would be
/// sent that call's token and could name it, so routing by token cannot tell the two apart:
/// the turn passing to another session gives that session a fresh process, and the
/// lingering one (with everything it started) is ended first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_a_server_sends_after_its_call_ended_reaches_no_later_session() {
    use pi_tools::env::local::LocalEnv;
    use pi_tools::env::{ExecutionEnv, WithEnv};
    let (server, tools) = hostile(1 << 20).await;
    let session = || {
        RunnerConfig::default()
            .with_env(Arc::new(LocalEnv::new(std::env::temp_dir())) as Arc<dyn ExecutionEnv>)
    };
    let (lingering, _) = call(
        &tools,
        &session(),
        "h__progress",
        json!({"steal": true, "linger": 3}),
    )
    .await;
    assert_eq!(text_of(&lingering), "done");
    let (message, events) = call(&tools, &session(), "h__progress", json!({"wait": 1})).await;
    assert_eq!(text_of(&message), "done");
    let events = serde_json::to_string(&events).expect("JSON");
    assert!(events.contains("own"), "its own progress arrived: {events}");
    assert!(
        !events.contains("stolen"),
        "progress of another session's ended call arrived: {events}"
    );
    server.end().await;
}

/// Two servers of one session: while a call of `g` runs, `h` sends progress naming every
/// token a call could have (each server's tokens are counted from 0). Only `h`'s own call
/// can get it: progress goes to the calls of the server that sent it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_only_calls_of_the_server_that_sent_it() {
    let (g, h) = (
        hostile_as("g", 1 << 20).await,
        hostile_as("h", 1 << 20).await,
    );
    let mut tools = ToolSet::new([]);
    g.add_to(&mut tools);
    h.add_to(&mut tools);
    let tools = Arc::new(tools);
    let victim = {
        let tools = Arc::clone(&tools);
        tokio::spawn(async move {
            call(
                &tools,
                &RunnerConfig::default(),
                "g__progress",
                json!({"wait": 2}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let tokens: Vec<Value> = (0..64)
        .flat_map(|n| [json!(n), json!(n.to_string())])
        .collect();
    let (sender, _) = call(
        &tools,
        &RunnerConfig::default(),
        "h__progress",
        json!({"tokens": tokens}),
    )
    .await;
    assert_eq!(text_of(&sender), "done");
    let (message, events) = victim.await.expect("the task");
    assert_eq!(text_of(&message), "done");
    let events = serde_json::to_string(&events).expect("JSON");
    assert!(events.contains("own"), "its own progress arrived: {events}");
    assert!(
        !events.contains("stolen"),
        "another server's progress arrived: {events}"
    );
    g.end().await;
    h.end().await;
}

/// The gateway ended by the end of its input and killed outright: the server (which
/// ignores SIGTERM and the end of its own input) and what it started in a session of its
/// own go with it, checked in /proc.
#[test]
fn nothing_of_a_server_outlives_the_gateway_at_the_end_of_its_input_or_killed() {
    for killed in [false, true] {
        let command = command();
        let setup = Setup::new(&format!(
            "[tools]\nactive = [\"h__stubborn\", \"h__spawn\"]\n\n[mcp.servers.h]\ncommand = {}\n",
            super::toml_list(&command)
        ));
        let tag = support::procfs::tag();
        let mut gateway = StdioGateway::start(&setup, &[]);
        for (id, name, arguments) in [
            (2, "h__stubborn", json!({})),
            (3, "h__spawn", json!({"tag": tag})),
        ] {
            let answer = gateway.call(id, name, arguments);
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
        let servers = || -> Vec<u32> {
            processes_with("hostile_server.py")
                .into_iter()
                .filter(|pid| super::processes_in(setup.work.path()).contains(pid))
                .collect()
        };
        // The server's forked children carry its command line until they exec what they run.
        support::procfs::settle_blocking(1, || servers().len());
        let server = servers();
        assert_eq!(server.len(), 1, "{server:?}");
        assert_eq!(
            support::procfs::settle_blocking(2, || support::procfs::alive(&tag).len()),
            2
        );

        let status = if killed {
            gateway.kill()
        } else {
            gateway.end_input()
        };
        assert_eq!(status.success(), !killed, "{status}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while !(gone(server[0]) && support::procfs::alive(&tag).is_empty())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let how = if killed {
            "killed"
        } else {
            "at the end of its input"
        };
        assert!(gone(server[0]), "the server outlived the gateway {how}");
        assert_eq!(
            support::procfs::alive(&tag),
            Vec::<i32>::new(),
            "what it started outlived the gateway {how}"
        );
    }
}
