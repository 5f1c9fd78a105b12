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
