//! `pi-tools mcp --http`, spawned, under a flood of connections from one client (over
//! loopback, in bounded numbers): connections past the per-client bound are closed on
//! arrival, partial requests and idle connections are closed after the request timeout,
//! and the health probe and other clients are answered meanwhile.
#![cfg(feature = "cli")]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::mcp_http_support::{HttpServer, text_of};
use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The bounds the flood meets: 8 connections per client, 2 s to send a request.
const BOUNDS: &str =
    "[mcp]\nmax_connections = 64\nmax_connections_per_client = 8\nrequest_timeout_secs = 2\n";

fn address(server: &HttpServer) -> SocketAddr {
    let authority = server
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .expect("the url is http://ADDRESS/mcp");
    authority.parse().expect("the address is an IP and a port")
}

/// A connection from `from` (another loopback address: one client) to the server.
async fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(format!("{from}:0").parse().expect("an address"))
        .expect("a loopback address can be bound");
    socket.connect(to).await.expect("the server accepts")
}

/// Whether the server has closed `stream` (end of file or reset) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 512];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            // An answer before the close (a 408) is fine: read on to the end.
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn a_flood_of_partial_requests_is_bounded_and_the_health_probe_still_answers() {
    let server = HttpServer::spawn_with(None, &[], Some(BOUNDS)).await;
    let to = address(&server);
    // One client holds 30 partial requests open (slowloris).
    let mut flood = Vec::new();
    for _ in 0..30 {
        let mut stream = connect_from("127.0.0.2", to).await;
        // Written as far as the server lets: a connection closed on arrival may refuse it.
        let _ = stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await;
        flood.push(stream);
    }
    let flooded = Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Past 8 from one address, each was closed on arrival.
    let mut closed = 0;
    for stream in &mut flood {
        if closed_within(stream, Duration::from_millis(10)).await {
            closed += 1;
        }
    }
    assert_eq!(
        closed, 22,
        "connections past the per-client bound stay open"
    );

    // Another client is answered at once: the health probe, and a new session.
    let health_url = server.url.replace("/mcp", "/healthz");
    let asked = Instant::now();
    let health = server.http.get(&health_url).send().await.expect("sent");
    assert_eq!(health.status(), StatusCode::OK);
    assert!(asked.elapsed() < Duration::from_secs(1));
    let session = server.open_session().await;

    // A connection that never sends a byte, and a body that stops halfway.
    let mut idle = TcpStream::connect(to).await.expect("connected");
    let mut half = TcpStream::connect(to).await.expect("connected");
    half.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .expect("written");
    let opened = Instant::now();
    // The held partial requests end after the request timeout (2 s), not before.
    for stream in &mut flood {
        assert!(
            closed_within(stream, Duration::from_secs(5)).await,
            "a partial request was held open"
        );
    }
    assert!(flooded.elapsed() >= Duration::from_millis(1900));
    assert!(closed_within(&mut idle, Duration::from_secs(5)).await);
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), half.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(opened.elapsed() < Duration::from_secs(4));

    // And the server still answers; an answer that takes longer than the request timeout
    // is not cut.
    let health = server.http.get(&health_url).send().await.expect("sent");
    assert_eq!(health.status(), StatusCode::OK);
    let answer = server
        .call(
            &session,
            1,
            "bash",
            json!({"command": "sleep 3; echo done"}),
        )
        .await;
    assert_eq!(text_of(&answer), "done");
}

/// Raises this process's soft limit on open files to `wanted` (the server, spawned after,
/// inherits it); false when the hard limit is lower.
fn descriptors_for(wanted: u64) -> bool {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.maximum.is_some_and(|hard| hard < wanted) {
        eprintln!("skipped: the hard limit on open files is under {wanted}");
        return false;
    }
    if limit.current.is_some_and(|soft| soft >= wanted) {
        return true;
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(wanted),
            maximum: limit.maximum,
        },
    )
    .is_ok()
}

/// Whether the server has closed `stream`, seen without waiting.
fn closed_now(stream: &TcpStream) -> bool {
    let mut buf = [0u8; 512];
    loop {
        match stream.try_read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// How many descriptors the process `pid` has open.
fn descriptors_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// 1,120 partial requests from 40 clients, each under the per-client bound: together they
/// reach the bound on all connections (1024) and would hold it for the whole request
/// timeout (30 s here). The server stays within its descriptors, and a new connection
/// takes the place of the flood's oldest one that is not sending an answer, so the health
/// probe and a new session with the token are answered at once, and an answer being sent
/// is never cut for room.
#[tokio::test]
async fn over_a_thousand_partial_requests_from_many_clients_leave_the_server_answering() {
    if !descriptors_for(4096) {
        return;
    }
    let server = HttpServer::spawn_with(
        Some("flood-token"),
        &[],
        Some("[mcp]\nmax_connections = 1024\nmax_connections_per_client = 64\nrequest_timeout_secs = 30\n"),
    )
    .await;
    let to = address(&server);
    let pid = server.child.id().expect("the server runs");
    let before = descriptors_of(pid);
    // A session with a call whose answer is being sent all through the flood.
    let session = server.open_session().await;
    let long = {
        let request = server.post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "bash", "arguments": {"command": "sleep 4; echo slow"}}}),
        );
        tokio::spawn(async move {
            let response = request.send().await.expect("sent");
            response.text().await.expect("the answer arrives whole")
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut flood = Vec::new();
    for client in 0..40 {
        let from = format!("127.0.0.{}", client + 2);
        for _ in 0..28 {
            let mut stream = connect_from(&from, to).await;
            let _ = stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                .await;
            flood.push(stream);
        }
    }
    // The server closes what is past its bound as it accepts it: wait until it has (on a
    // loaded machine that takes longer than the flood's own half second).
    let mut open = flood.len();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        open = flood.iter().filter(|s| !closed_now(s)).count();
        if open <= 1023 {
            break;
        }
    }
    assert!(
        (1000..=1023).contains(&open),
        "the flood holds {open} connections: the bound is 1024 in all"
    );
    assert!(
        descriptors_of(pid) <= before + 1024 + 8,
        "the server holds {} descriptors",
        descriptors_of(pid)
    );

    // Still answered at once while the flood is held.
    let health_url = server.url.replace("/mcp", "/healthz");
    for _ in 0..3 {
        let asked = Instant::now();
        let health = tokio::time::timeout(
            Duration::from_secs(2),
            crate::mcp_http_support::http_client()
                .get(&health_url)
                .send(),
        )
        .await
        .expect("the health probe is answered in time")
        .expect("the health probe is answered");
        assert_eq!(health.status(), StatusCode::OK);
        assert!(asked.elapsed() < Duration::from_secs(1));
    }
    let other = tokio::time::timeout(Duration::from_secs(5), server.open_session())
        .await
        .expect("a new session opens in time");
    let answer = server
        .call(&other, 2, "bash", json!({"command": "echo flooded"}))
        .await;
    assert_eq!(text_of(&answer), "flooded");
    let slow = tokio::time::timeout(Duration::from_secs(10), long)
        .await
        .expect("the long call ends")
        .expect("the task");
    assert!(slow.contains("slow"), "{slow}");
    assert!(
        (900..=1023).contains(&flood.iter().filter(|s| !closed_now(s)).count()),
        "the room was taken from the flood"
    );
}

/// A kept-alive connection that sends nothing after its answer is closed after the request
/// timeout, as one that never sent a byte is.
#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_request_timeout() {
    let server = HttpServer::spawn_with(None, &[], Some(BOUNDS)).await;
    let mut kept = TcpStream::connect(address(&server))
        .await
        .expect("connected");
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .expect("written");
    let mut buf = [0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(5), kept.read(&mut buf))
        .await
        .expect("answered")
        .expect("read");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    let answered = Instant::now();
    assert!(
        !closed_within(&mut kept, Duration::from_millis(1500)).await,
        "kept alive for a while"
    );
    assert!(
        closed_within(&mut kept, Duration::from_secs(3)).await,
        "an idle kept-alive connection was held open"
    );
    assert!(answered.elapsed() < Duration::from_secs(4));
}
