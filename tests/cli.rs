//! The `pi-tools` command line, run as a separate process.
//!
//! Two binaries are exercised: `pi-tools` itself, and the `my_tools` example, a user crate
//! that declares its own tools (`sleep_ms`, `shout`, `fill`) and calls
//! `pi_tools::cli::main()`. Output checks run against `my_tools` with a configuration that
//! names its tools, so they do not depend on which built-in tools the library registers.
#![cfg(feature = "cli")]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use spawn::feed;
use support::procfs;
use support::spawn;

mod call;
mod config_discovery;
mod generated;
mod golden;
mod jobs;
mod policy_check;
mod policy_tty;
mod trust;

/// The configuration the output checks use: the example's tools, in this order.
const MY_TOOLS_TOML: &str = r#"[tools]
active = ["sleep_ms", "shout"]
max_concurrency = 4
timeout_secs = 30

[tool.shout]
mode = "parallel"

[prompt]
guidelines = ["Keep answers short."]
"#;

/// The `pi-tools` command line, called by that name (completions and the man page name the
/// program after it).
fn pi_tools() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command.arg0("pi-tools");
    command
}

/// The `my_tools` example binary (built by this package from the example's source).
fn my_tools() -> Command {
    Command::new(env!("CARGO_BIN_EXE_my_tools"))
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Writes a file under this test's scratch directory and returns its path (each test uses
/// its own names).
fn scratch_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).expect("the scratch directory can be created");
    let path = dir.join(name);
    // Written beside and renamed into place: test processes (a runner that starts one per
    // test) may write the same file while another reads it, and none may see it half done.
    let partial = dir.join(format!(".{name}.{}", std::process::id()));
    std::fs::write(&partial, text).expect("the scratch file can be written");
    std::fs::rename(&partial, &path).expect("the scratch file is put in place");
    path
}

/// A fresh directory under this test's scratch space.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be created");
    dir
}

/// The configuration file with [`MY_TOOLS_TOML`], written once per process.
fn my_tools_config() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| scratch_file("my_tools.toml", MY_TOOLS_TOML))
        .clone()
}

/// `my_tools <subcommand> --config <my_tools.toml> <extra…>`, run to its end.
fn my_tools_with_config(subcommand: &str, extra: &[&str]) -> Output {
    let mut command = my_tools();
    command
        .arg(subcommand)
        .arg("--config")
        .arg(my_tools_config())
        .args(extra);
    feed(command, "")
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect()
}

// ---------------------------------------------------------------------------------------
// run

#[test]
fn run_json_emits_ends_in_completion_order_and_messages_in_source_order() {
    let batch = r#"[
        {"id": "slow", "name": "sleep_ms", "arguments": {"ms": 500}},
        {"id": "fast", "name": "shout", "arguments": {"text": "hi"}}
    ]"#;
    let mut command = my_tools();
    command
        .args(["run", "--json", "--config"])
        .arg(my_tools_config());
    let output = feed(command, batch);
    assert!(output.status.success(), "{}", stderr(&output));
    let events = json_lines(&stdout(&output));

    let order: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["type"] != "tool_execution_update")
        .map(|e| {
            let id = e["toolCallId"]
                .as_str()
                .or_else(|| e["message"]["toolCallId"].as_str())
                .unwrap_or("");
            (e["type"].as_str().unwrap_or("").to_owned(), id.to_owned())
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("tool_execution_start", "slow"),
        ("tool_execution_start", "fast"),
        ("tool_execution_end", "fast"),
        ("tool_execution_end", "slow"),
        ("message_start", "slow"),
        ("message_end", "slow"),
        ("message_start", "fast"),
        ("message_end", "fast"),
        ("batch_end", ""),
    ]
    .iter()
    .map(|(t, id)| ((*t).to_owned(), (*id).to_owned()))
    .collect();
    assert_eq!(order, expected);

    // The slow call's progress arrives between its start and its end, in wire form.
    let position = |pred: &dyn Fn(&Value) -> bool| events.iter().position(pred);
    let update = position(&|e| e["type"] == "tool_execution_update").expect("an update");
    assert_eq!(
        events[update],
        json!({
            "type": "tool_execution_update",
            "toolCallId": "slow",
            "toolName": "sleep_ms",
            "args": {"ms": 500},
            "partialResult": {"content": [{"type": "text", "text": "waiting 500 ms"}]}
        })
    );
    let slow_end = position(&|e| e["type"] == "tool_execution_end" && e["toolCallId"] == "slow");
    assert!(update < slow_end.expect("the slow call ends"));
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "tool_execution_update")
            .count(),
        1
    );

    let fast_end = position(&|e| e["type"] == "tool_execution_end" && e["toolCallId"] == "fast");
    assert_eq!(
        &events[fast_end.expect("the fast call ends")],
        &json!({
            "type": "tool_execution_end",
            "toolCallId": "fast",
            "toolName": "shout",
            "result": {"content": [{"type": "text", "text": "HI"}]},
            "isError": false
        })
    );
    let last_message = &events[events.len() - 2]["message"];
    assert_eq!(last_message["role"], "toolResult");
    assert_eq!(
        last_message["content"],
        json!([{"type": "text", "text": "HI"}])
    );
    assert_eq!(
        events.last(),
        Some(&json!({"type": "batch_end", "terminate": false}))
    );
}

#[test]
fn run_json_ends_every_line_with_type_first_and_batch_end_last() {
    let mut command = my_tools();
    command
        .args(["run", "--json", "--config"])
        .arg(my_tools_config());
    let output = feed(
        command,
        r#"[{"id": "1", "name": "shout", "arguments": {"text": "a"}}]"#,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.lines().all(|l| l.starts_with("{\"type\":\"")),
        "{text}"
    );
    assert!(
        text.ends_with("\n{\"type\":\"batch_end\",\"terminate\":false}\n"),
        "{text}"
    );
}

/// Ctrl-C cancels the running calls; the batch still ends with a result for each, and the
/// exit code says it was interrupted.
#[cfg(unix)]
#[test]
fn run_cancels_the_batch_on_ctrl_c() {
    use std::io::{BufRead, BufReader};

    let mut child = my_tools()
        .args(["run", "--json", "--config"])
        .arg(my_tools_config())
        .arg(scratch_file(
            "slow.json",
            r#"[{"id": "slow", "name": "sleep_ms", "arguments": {"ms": 60000}}]"#,
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
    // Wait until the call is running (its progress update arrived).
    let mut events = Vec::new();
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.expect("a line")).expect("JSON");
        let running = event["type"] == "tool_execution_update";
        events.push(event);
        if running {
            break;
        }
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    events.extend(lines.map(|l| serde_json::from_str::<Value>(&l.expect("a line")).expect("JSON")));
    let output = child.wait_with_output().expect("the binary finishes");
    assert_eq!(output.status.code(), Some(130));
    assert_eq!(
        stderr(&output),
        "Interrupted by SIGINT: cancelling the batch; a second signal (Ctrl-C) quits at once.\n"
    );
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "tool_execution_start",
            "tool_execution_update",
            "tool_execution_end",
            "message_start",
            "message_end",
            "batch_end"
        ]
    );
    assert_eq!(events[2]["isError"], true);
    assert_eq!(
        events[2]["result"]["content"][0]["text"],
        "cancelled before 60000 ms had passed"
    );
}

/// A batch of one bash call that leaves processes in every way (background jobs, a double
/// fork, `setsid`, `setsid -f`, `set -m`), prints `started` and then runs `last`.
fn leaving_batch(name: &str, tag: &str, last: &str) -> PathBuf {
    let command = format!(
        "sleep {tag} >/dev/null 2>&1 & (sleep {tag} >/dev/null 2>&1 &); \
         setsid sleep {tag} >/dev/null 2>&1 & setsid -f sleep {tag} >/dev/null 2>&1; \
         (set -m; sleep {tag} >/dev/null 2>&1 &); echo started; {last}"
    );
    let batch = json!([{"id": "1", "name": "bash", "arguments": {"command": command}}]);
    scratch_file(name, &batch.to_string())
}

/// Waits (up to 3 s) until no process holds `tag`; fails naming the survivors.
fn assert_none_survive(tag: &str) {
    let start = std::time::Instant::now();
    while !procfs::alive(tag).is_empty() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(3),
            "processes survived: {:?}",
            procfs::alive(tag)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Background jobs of finished bash calls end when `pi-tools run` exits.
#[cfg(unix)]
#[test]
fn run_ends_the_background_jobs_of_its_calls_at_exit() {
    let tag = procfs::tag();
    let output = feed(
        {
            let mut command = pi_tools();
            command
                .args(["run", "--json"])
                .arg(leaving_batch("leaving.json", &tag, "echo done"));
            command
        },
        "",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines = json_lines(&stdout(&output));
    let end = lines
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .expect("an end event");
    assert_eq!(end["isError"], false);
    assert_eq!(end["result"]["content"][0]["text"], "started\ndone");
    assert_none_survive(&tag);
}

/// SIGTERM, SIGHUP and SIGINT end a run as the end of its batch does: the running command
/// and every process it started are killed, and the exit code is 128 + the signal.
#[cfg(unix)]
#[test]
fn run_ends_every_process_on_sigterm_sighup_and_sigint() {
    use std::io::{BufRead, BufReader};

    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let tag = procfs::tag();
        let batch = leaving_batch(
            &format!("signal-{signal}.json"),
            &tag,
            &format!("sleep {tag}"),
        );
        let mut child = pi_tools()
            .args(["run", "--json"])
            .arg(batch)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        // Wait until the command printed `started` (its progress update arrived).
        for line in lines.by_ref() {
            let event: Value = serde_json::from_str(&line.expect("a line")).expect("JSON");
            if event["type"] == "tool_execution_update" {
                break;
            }
        }
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let events: Vec<Value> = lines
            .map(|l| serde_json::from_str(&l.expect("a line")).expect("JSON"))
            .collect();
        let output = child.wait_with_output().expect("the binary finishes");
        assert_eq!(output.status.code(), Some(code), "SIG{signal}");
        assert_eq!(
            stderr(&output),
            format!(
                "Interrupted by SIG{signal}: cancelling the batch; a second signal (Ctrl-C) quits at once.\n"
            )
        );
        let end = events
            .iter()
            .find(|e| e["type"] == "tool_execution_end")
            .expect("an end event");
        assert_eq!(end["isError"], true);
        assert_eq!(
            end["result"]["content"][0]["text"],
            "started\n\nCommand aborted"
        );
        assert_none_survive(&tag);
    }
}

#[test]
fn run_shows_a_person_each_result_through_its_renderer_then_a_summary() {
    let batch = r#"[
        {"id": "s", "name": "sleep_ms", "arguments": {"ms": 300}},
        {"id": "e", "name": "shout", "arguments": {"text": " "}},
        {"id": "f", "name": "shout", "arguments": {"text": "done"}}
    ]"#;
    let mut command = my_tools();
    command.args(["run", "--config"]).arg(my_tools_config());
    let output = feed(command, batch);
    assert!(output.status.success(), "{}", stderr(&output));
    // Not a terminal: plain text, results as they finish.
    assert_eq!(
        stdout(&output),
        "✗ shout {\"text\":\" \"}\n  There is nothing to shout: pass a non-empty `text`.\n\
         ✓ shout {\"text\":\"done\"}\n  DONE\n\
         ✓ sleep_ms {\"ms\":300}\n  slept 300 ms\n\
         3 calls: 2 succeeded, 1 failed.\n"
    );
    // Progress without control codes.
    assert_eq!(stderr(&output), "[s] sleep_ms: waiting 300 ms\n");
}

#[test]
fn run_reads_an_assistant_message_from_a_file_and_succeeds_when_calls_fail() {
    let message = scratch_file(
        "assistant.json",
        r#"{"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "toolCall", "id": "call_1", "name": "no_such_tool", "arguments": {"x": 1}}
        ]}"#,
    );
    let mut command = pi_tools();
    command.args(["run", "--json"]).arg(&message);
    let output = feed(command, "");
    assert!(output.status.success(), "{}", stderr(&output));
    let events = json_lines(&stdout(&output));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "tool_execution_start",
            "tool_execution_end",
            "message_start",
            "message_end",
            "batch_end"
        ]
    );
    assert_eq!(
        events[1],
        json!({
            "type": "tool_execution_end",
            "toolCallId": "call_1",
            "toolName": "no_such_tool",
            "result": {"content": [{"type": "text", "text": "Tool no_such_tool not found"}]},
            "isError": true
        })
    );
}

#[test]
fn run_refuses_unusable_input_naming_the_problem_and_the_expected_shape() {
    let cases = [
        ("", "the input is empty"),
        (
            "{not json",
            "the input is not valid JSON (key must be a string at line 1 column 2)",
        ),
        (
            "\"read\"",
            "the input is a JSON string, not an array or an assistant message",
        ),
        (
            r#"[{"id": "a", "arguments": {}}]"#,
            "element 0 of the array has no `name`",
        ),
        (
            r#"{"role": "user", "content": "hi"}"#,
            "the input is a message with role `user`, not an assistant message",
        ),
        (
            r#"[{"id": "a", "name": "t"}, {"id": "a", "name": "u"}]"#,
            "two calls have the id `a`; give every call its own id",
        ),
    ];
    for (input, problem) in cases {
        let mut command = pi_tools();
        command.arg("run");
        let output = feed(command, input);
        assert_eq!(output.status.code(), Some(2), "input {input:?}");
        assert_eq!(stdout(&output), "", "input {input:?}");
        let message = stderr(&output);
        assert!(
            message.starts_with(&format!("error: unusable batch: {problem}; expected a JSON array of tool calls, `[{{\"id\": ")),
            "input {input:?}: {message}"
        );
        assert!(
            message.contains("or an assistant message, `{\"role\": \"assistant\", \"content\": [{\"type\": \"toolCall\""),
            "{message}"
        );
    }
}

#[test]
fn run_refuses_a_working_directory_that_does_not_exist() {
    let missing = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli/no-such-dir");
    let mut command = pi_tools();
    command.args(["run", "--cwd"]).arg(&missing);
    let output = feed(command, "[]");
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.starts_with(&format!(
            "error: --cwd `{}` is not an existing directory (",
            missing.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("); create it or pass another directory\n"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------------------
// catalog, prompt, schema, check

// ---------------------------------------------------------------------------------------
// conventions: configuration discovery, colour, `-o -`, completions, man page
