//! The TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4, in its `auto` mode)
//! against the binary over Streamable HTTP and over stdio: it takes the server's 2026-07-28
//! offer (over stdio its probe no longer meets "came before `initialize`"), so a
//! policy `ask` reaches its elicitation handler as an input-required result, and its roots,
//! listed through its `roots/list` handler the same way, confine its writes.
#![cfg(all(feature = "cli", feature = "mount"))]

use serde_json::Value;
use support::mount::{node, node_tools, path_text};

use crate::mcp_http_support::HttpServer;

const ASKING: &str = "[[policy.rule]]\ntool = \"write\"\ndecision = \"ask\"\nreason = \"A person decides what is written.\"\n";

#[tokio::test]
async fn the_ts_sdk_v2_client_in_auto_mode_is_asked_and_confined_to_its_roots() {
    let server = HttpServer::spawn_with(None, &[], Some(ASKING)).await;
    let report = run_client(&server.url, server.work.path()).await;
    assert_eq!(report["version"], "2026-07-28", "{report}");
}

#[tokio::test]
async fn the_ts_sdk_v2_client_in_auto_mode_speaks_2026_over_stdio() {
    let work = tempfile::TempDir::new().expect("a working directory");
    let config = work.path().join("pi-tools.toml");
    std::fs::write(&config, ASKING).expect("the configuration is written");
    let target = format!(
        "stdio:{}:{}:{}",
        env!("CARGO_BIN_EXE_cli-under-test"),
        work.path().display(),
        config.display()
    );
    let report = run_client(&target, work.path()).await;
    assert_eq!(report["version"], "2026-07-28", "{report}");
}

/// Runs the client against `target` (a URL, or `stdio:BINARY:CWD:CONFIG`) with roots
/// `work/inside`: it writes `work/outside.txt` (which must fail) and `work/inside/a.txt`.
/// Checks what holds in either era and returns its report.
async fn run_client(target: &str, work: &std::path::Path) -> Value {
    std::fs::create_dir(work.join("inside")).expect("a directory");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("node/era_client.mjs");
    let output = tokio::process::Command::new(node())
        .arg(script)
        .arg(target)
        .arg(work.join("inside"))
        .arg(work.join("outside.txt"))
        .arg(work.join("inside/a.txt"))
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
        !work.join("outside.txt").exists(),
        "a write outside the client's roots failed"
    );
    assert_eq!(report["inside"]["isError"], false, "{report}");
    assert!(work.join("inside/a.txt").exists());
    report
}
