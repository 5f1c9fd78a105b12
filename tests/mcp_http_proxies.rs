//! `pi-tools mcp --http` behind a proxy: connections from a trusted proxy's address are not
//! bounded per address, the client each request names in `Forwarded` or `X-Forwarded-For`
//! is, and the health probe answers whatever the bound; from any other address the header
//! is ignored.
#![cfg(feature = "cli")]

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::mcp_http_support::{HttpServer, call};

fn address(server: &HttpServer) -> SocketAddr {
    let authority = server
        .url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .expect("the url is http://ADDRESS/mcp");
    authority.parse().expect("the address is an IP and a port")
}

fn health_url(server: &HttpServer) -> String {
    format!("http://{}/healthz", address(server))
}

/// The status of a ping in `session` sent for the client `header` names.
async fn ping_for(server: &HttpServer, session: &str, header: (&str, &str)) -> StatusCode {
    let ping = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    server
        .post(Some(session), &ping)
        .header(header.0, header.1)
        .send()
        .await
        .expect("the proxy's connection is not closed")
        .status()
}

#[tokio::test]
async fn a_trusted_proxys_clients_are_each_bounded_on_their_own() {
    let config =
        "[mcp]\nmax_connections_per_client = 2\ntrusted_proxies = [\"127.0.0.1\", \"::1\"]\n";
    let server = HttpServer::spawn_with(None, &[], Some(config)).await;
    let session = server.open_session().await;
    // One client behind the proxy holds its two places with calls still answering.
    let mut held = Vec::new();
    for id in 1..=2 {
        let response = server
            .post(
                Some(&session),
                &call(id, "bash", json!({"command": "sleep 5; echo late"})),
            )
            .header("X-Forwarded-For", "192.0.2.1")
            .send()
            .await
            .expect("sent");
        assert_eq!(response.status(), StatusCode::OK);
        held.push(response);
    }
    // Its third request is refused, however the proxy writes the header, and a hop the
    // client itself wrote to the left changes nothing.
    for header in [
        ("X-Forwarded-For", "192.0.2.1"),
        ("X-Forwarded-For", "198.51.100.7, 192.0.2.1"),
        ("Forwarded", "for=192.0.2.1;proto=http"),
    ] {
        assert_eq!(
            ping_for(&server, &session, header).await,
            StatusCode::TOO_MANY_REQUESTS,
            "{header:?}"
        );
    }
    // Other clients of the same proxy, on more connections than one address may hold.
    for client in ["192.0.2.2", "192.0.2.3", "192.0.2.4"] {
        assert_eq!(
            ping_for(&server, &session, ("X-Forwarded-For", client)).await,
            StatusCode::OK
        );
    }
    // The health probe answers for the client at its bound.
    let health = server
        .http
        .get(health_url(&server))
        .header("X-Forwarded-For", "192.0.2.1")
        .send()
        .await
        .expect("sent");
    assert_eq!(health.status(), StatusCode::OK);
    // Its places come back with its answers.
    drop(held);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while ping_for(&server, &session, ("X-Forwarded-For", "192.0.2.1")).await != StatusCode::OK {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the client's places never came back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_forwarding_header_from_an_untrusted_address_is_ignored() {
    let config = "[mcp]\nmax_connections_per_client = 2\ntrusted_proxies = [\"192.0.2.250\"]\n";
    let server = HttpServer::spawn_with(None, &[], Some(config)).await;
    let to = address(&server);
    // Two connections from this address, idle: its bound.
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(TcpStream::connect(to).await.expect("connected"));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A third, claiming another client, is closed on arrival all the same.
    let mut third = TcpStream::connect(to).await.expect("connected");
    let request = format!(
        "GET /healthz HTTP/1.1\r\nHost: {to}\r\nX-Forwarded-For: 192.0.2.9\r\nForwarded: for=192.0.2.9\r\n\r\n"
    );
    let _ = third.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), third.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the connection was not closed");
    assert!(
        !String::from_utf8_lossy(&answer).contains("200 OK"),
        "the header was believed"
    );
    // Once one of the two is gone, the probe is answered.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let health = server
        .http
        .get(health_url(&server))
        .send()
        .await
        .expect("sent");
    assert_eq!(health.status(), StatusCode::OK);
}
