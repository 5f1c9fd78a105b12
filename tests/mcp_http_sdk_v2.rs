//! The TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4, in its `auto` mode)
//! against the binary over Streamable HTTP: it takes the server's 2026-07-28 offer, so a
//! policy `ask` reaches its elicitation handler as an input-required result, and its roots,
//! listed through its `roots/list` handler the same way, confine its writes.
#![cfg(all(feature = "cli", feature = "mount"))]

use serde_json::Value;
use support::mount::{node, node_tools, path_text};

use crate::mcp_http_support::HttpServer;

#[tokio::test]
async fn the_ts_sdk_v2_client_in_auto_mode_is_asked_and_confined_to_its_roots() {
    let config = "[[policy.rule]]\ntool = \"write\"\ndecision = \"ask\"\nreason = \"A person decides what is written.\"\n";
    let server = HttpServer::spawn_with(None, &[], Some(config)).await;
    std::fs::create_dir(server.path("inside")).expect("a directory");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("node/era_client.mjs");
    let output = tokio::process::Command::new(node())
        .arg(script)
        .arg(&server.url)
        .arg(server.path("inside"))
        .arg(server.path("outside.txt"))
        .arg(server.path("inside/a.txt"))
        .env("NODE_TOOLS", path_text(&node_tools()))
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), output)
        .await
        .expect("the client ends in time")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the client failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON report");
    assert_eq!(report["version"], "2026-07-28", "{report}");
    assert!(report["tools"].to_string().contains("write"), "{report}");
    assert!(
        report["asked"].as_u64() >= Some(1),
        "the person was asked: {report}"
    );
    assert!(
        report["rootsListed"].as_u64() >= Some(1),
        "roots were listed: {report}"
    );
    assert_eq!(report["outside"]["isError"], true, "{report}");
    assert!(
        !server.path("outside.txt").exists(),
        "a write outside the client's roots failed"
    );
    assert_eq!(report["inside"]["isError"], false, "{report}");
    assert!(server.path("inside/a.txt").exists());
}
