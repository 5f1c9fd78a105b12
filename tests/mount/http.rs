//! The gateway over Streamable HTTP: `pi-tools mcp --http` with a mounted server, spoken to
//! with a real HTTP client, and no process left behind when it ends.

use super::*;
use crate::mcp_http_support::{HttpServer, PATIENCE};

#[tokio::test]
async fn the_http_gateway_serves_mounted_tools_to_each_session_and_ends_its_servers() {
    let config = everything_config(r#"["read", "everything__echo"]"#, "");
    let mut server = HttpServer::spawn_with(None, &[], Some(&config)).await;
    let sessions = [server.open_session().await, server.open_session().await];

    // Both sessions list the mounted tool beside the built-in one and call it at once.
    for session in &sessions {
        let response = server
            .post(
                Some(session),
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            )
            .send()
            .await
            .expect("tools/list is sent");
        let listed = crate::mcp_http_support::messages(response).await;
        let names: Vec<&str> = listed[0]["result"]["tools"]
            .as_array()
            .expect("a tool list")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["read", "everything__echo"]);
    }
    let calls = sessions.iter().enumerate().map(|(i, session)| {
        let message = format!("through the HTTP gateway, session {i}");
        let server = &server;
        async move {
            let answer = server
                .call(session, 2, "everything__echo", json!({"message": message}))
                .await;
            (message, answer)
        }
    });
    for (message, answer) in futures::future::join_all(calls).await {
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("Echo: {message}")
        );
    }
    // A mistake in the arguments is the gateway's own validation error, for the model.
    let answer = server
        .call(&sessions[0], 3, "everything__echo", json!({"text": "no"}))
        .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    // The mounted server runs in the working directory; ending the gateway ends it.
    let mounted = processes_in(server.work.path());
    assert!(!mounted.is_empty(), "the mounted server runs");
    let pid = i32::try_from(server.child.id().expect("the gateway runs")).expect("a pid");
    // SAFETY: kill(2) with a pid this test spawned; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(PATIENCE, server.child.wait())
        .await
        .expect("the gateway ends in time")
        .expect("its status can be read");
    assert!(status.success(), "{status}");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !mounted.iter().all(|&pid| gone(pid)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left: Vec<u32> = mounted.into_iter().filter(|&pid| !gone(pid)).collect();
    assert!(left.is_empty(), "mounted processes left running: {left:?}");
}
