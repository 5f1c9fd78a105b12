//! The TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4, in its `auto` mode)
//! against the binary over Streamable HTTP and over stdio: it takes the server's 2026-07-28
//! offer (over stdio its probe no longer meets "came before `initialize`"), so a
//! policy `ask` reaches its elicitation handler as an input-required result, and its roots,
//! listed through its `roots/list` handler the same way, confine its writes. And it reads
//! bash's typed result (checked by the SDK against the listed `outputSchema`) and drives a
//! background job (tests/node/jobs_client.mjs).
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
    let target = stdio_target(work.path(), Some(&config));
    let report = run_client(&target, work.path()).await;
    assert_eq!(report["version"], "2026-07-28", "{report}");
}

/// Runs the client against `target` (a URL, or `stdio:BINARY:CWD:CONFIG`) with roots
/// `work/inside`: it writes `work/outside.txt` (which must fail) and `work/inside/a.txt`.
/// Checks what holds in either era and returns its report.
async fn run_client(target: &str, work: &std::path::Path) -> Value {
    std::fs::create_dir(work.join("inside")).expect("a directory");
    let inside = work.join("inside");
    let outside = work.join("outside.txt");
    let inside_file = work.join("inside/a.txt");
    let args = [
        target.as_ref(),
        inside.as_os_str(),
        outside.as_os_str(),
        inside_file.as_os_str(),
    ];
    let report = node_report("era_client.mjs", &args).await;
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

const JOBS: &str =
    "[tools]\nactive = [\"bash\", \"job_output\", \"job_input\", \"job_kill\", \"job_list\"]\n";

#[tokio::test]
async fn the_ts_sdk_v2_client_reads_typed_results_and_a_job_over_http() {
    let server = HttpServer::spawn_with(None, &[], Some(JOBS)).await;
    let report = run_jobs_client(&server.url, "legacy").await;
    assert_eq!(report["version"], "2025-11-25", "{report}");
}

/// A request of the 2026-07-28 era over HTTP has no session, but the server's stateless
/// house keeps its environment: the v2 client in `auto` mode starts a background job in one
/// request and reads it to its end in later ones, as a 2025-11-25 client does.
#[tokio::test]
async fn the_ts_sdk_v2_client_drives_a_job_over_http_in_the_2026_era() {
    let server = HttpServer::spawn_with(None, &[], Some(JOBS)).await;
    let report = run_jobs_client(&server.url, "auto").await;
    assert_eq!(report["version"], "2026-07-28", "{report}");
}

#[tokio::test]
async fn the_ts_sdk_v2_client_reads_typed_results_and_a_job_over_stdio_in_both_eras() {
    let work = tempfile::TempDir::new().expect("a working directory");
    let config = work.path().join("pi-tools.toml");
    std::fs::write(&config, JOBS).expect("the configuration is written");
    let target = stdio_target(work.path(), Some(&config));
    for (mode, era) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let report = run_jobs_client(&target, mode).await;
        assert_eq!(report["version"], era, "{report}");
    }
}

/// Runs tests/node/jobs_client.mjs against `target` in the negotiation `mode`; checks the
/// typed result of a finished command and the job a background one became, read to its
/// end; returns the report.
async fn run_jobs_client(target: &str, mode: &str) -> Value {
    let report = jobs_client_report(target, mode).await;
    let schema = &report["outputSchema"];
    assert_eq!(schema["type"], "object", "{report}");
    assert_eq!(
        schema["required"],
        serde_json::json!(["truncated", "durationMs"])
    );
    assert!(schema["properties"]["job"].is_object(), "{report}");
    let finished = &report["finished"];
    assert_eq!(finished["isError"], false, "{report}");
    assert_eq!(finished["text"], "typed", "{report}");
    assert_eq!(finished["structured"]["exitCode"], 0, "{report}");
    assert_eq!(finished["structured"]["job"], Value::Null, "{report}");
    let job = report["job"]
        .as_u64()
        .expect("the job's id in the structured result");
    assert_eq!(report["started"]["structured"]["exitCode"], Value::Null);
    assert_eq!(report["readError"], Value::Null, "{report}");
    let read = report["read"].as_str().expect("what the reads gave");
    // What the command printed before it was handed back as a job (on a busy machine, its
    // first line) is in the call's own answer; the reads give the rest.
    let printed = format!(
        "{}{read}",
        report["started"]["text"].as_str().unwrap_or_default()
    );
    assert!(
        printed.contains("tick 1") && printed.contains("tick 3"),
        "{printed}"
    );
    assert!(
        read.contains(&format!("Job {job} exited with code 0")),
        "{read}"
    );
    report
}

/// What tests/node/jobs_client.mjs reports against `target` in the negotiation `mode`.
async fn jobs_client_report(target: &str, mode: &str) -> Value {
    node_report("jobs_client.mjs", &[target.as_ref(), mode.as_ref()]).await
}

/// The Node clients' stdio target, `stdio:BINARY:CWD[:CONFIG]`: this build's binary serving
/// `work`, with the configuration file `config` when given.
pub(crate) fn stdio_target(work: &std::path::Path, config: Option<&std::path::Path>) -> String {
    let mut target = format!(
        "stdio:{}:{}",
        env!("CARGO_BIN_EXE_cli-under-test"),
        work.display()
    );
    if let Some(config) = config {
        target.push_str(&format!(":{}", config.display()));
    }
    target
}

/// Runs the client `script` of tests/node with `args` under the installed Node and SDK,
/// and returns the one JSON object it prints (failing on its exit status).
pub(crate) async fn node_report(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    node_report_with(script, args, &[]).await
}

/// [`node_report`], with the variables `env` added to the client's environment.
pub(crate) async fn node_report_with(
    script: &str,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &str)],
) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("node")
        .join(script);
    let output = tokio::process::Command::new(node())
        .arg(script)
        .args(args)
        .env("NODE_TOOLS", path_text(&node_tools()))
        .envs(env.iter().copied())
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
    serde_json::from_str(stdout.trim()).expect("one JSON report")
}
