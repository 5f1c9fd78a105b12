//! `pi-tools run --dialect …`: a provider's reply in, exactly the JSON to append out.

#![cfg(feature = "cli")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// A scratch directory with `a.txt`, for the tools to work in.
fn workspace(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("providers")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "hello\nwörld\n").unwrap();
    dir
}

/// `pi-tools run --dialect <dialect> --cwd <dir> -` with `reply` on standard input.
fn run(dialect: &str, dir: &Path, reply: &str, extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
        .args(["run", "--dialect", dialect, "--cwd"])
        .arg(dir)
        .args(extra)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pi-tools starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(reply.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_json(output: &Output) -> Value {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("standard output is one JSON value")
}

#[test]
fn openai_prints_the_tool_messages_and_the_events_go_to_standard_error() {
    let dir = workspace("openai");
    let reply = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"a.txt\"}"}},
        {"id": "call_2", "type": "function", "function": {"name": "nosuch", "arguments": "{}"}}
    ]}}]});
    let output = run("openai", &dir, &reply.to_string(), &["--json"]);
    assert_eq!(
        stdout_json(&output),
        json!([
            {"role": "tool", "tool_call_id": "call_1", "content": "hello\nwörld\n"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Tool nosuch not found"}
        ])
    );
    let events: Vec<Value> = String::from_utf8(output.stderr)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event a line on standard error"))
        .collect();
    assert_eq!(
        events.last(),
        Some(&json!({"type": "batch_end", "terminate": false}))
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "tool_execution_end")
            .count(),
        2
    );
}

#[test]
fn an_anthropic_event_stream_gives_one_user_message() {
    let dir = workspace("anthropic");
    let stream = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "stop_reason": null}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "txt\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ]
    .iter()
    .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
    .collect::<String>();
    let output = run("anthropic", &dir, &stream, &[]);
    assert_eq!(
        stdout_json(&output),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
               "content": [{"type": "text", "text": "hello\nwörld\n"}], "is_error": false}]})
    );
    let shown = String::from_utf8(output.stderr).unwrap();
    assert!(shown.contains("1 call: 1 succeeded, 0 failed."), "{shown}");
}

#[test]
fn a_reply_that_cannot_be_read_is_a_usage_error_with_the_reason() {
    let dir = workspace("unusable");
    let output = run(
        "gemini",
        &dir,
        r#"{"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]}"#,
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(output.stdout, b"");
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: unusable reply: cannot read the gemini reply at `candidates[0].content.parts[0].functionCall.name`: missing; every reply of this kind has it\n"
    );
}

#[test]
fn the_dialect_flag_is_in_the_help_and_the_completions() {
    let help = Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("--dialect <PROVIDER>"), "{help}");
    for name in [
        "openai",
        "openai-strict",
        "openai-responses",
        "anthropic",
        "gemini",
    ] {
        assert!(help.contains(&format!("- {name}:")), "{name} in {help}");
    }
    let bash = Command::new(env!("CARGO_BIN_EXE_cli-under-test"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let bash = String::from_utf8(bash.stdout).unwrap();
    assert!(
        bash.contains("--dialect"),
        "the bash completions offer --dialect"
    );
    assert!(
        bash.contains("openai openai-strict openai-responses anthropic gemini"),
        "the bash completions offer the providers"
    );
}
