//! Memory while reading a reply stays in proportion to the reply: an event stream whose
//! indexes point far ahead (`output_index`, `content_index`, `index` near the cap), and
//! bodies and events padded with millions of small values in members no reader uses, are
//! read by `pi-tools run --dialect …` in a process whose heap is capped by `RLIMIT_DATA`, so
//! a reader that made a slot for every index up to the one it was given, or that decoded
//! every value of the reply, fails (and is seen to).

#![cfg(feature = "cli")]

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::sse;

/// The heap `pi-tools run` may have: its own needs (a few MB) and a small multiple of the
/// replies below (about 1 MB each).
const DATA_LIMIT: u64 = 96 << 20;

/// `pi-tools run --dialect <dialect> -` with `reply` on standard input, its heap capped at
/// [`DATA_LIMIT`]; also how long it took.
fn run_capped(dialect: &str, reply: &str) -> (Output, Duration) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("providers-memory");
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command
        .args(["run", "--dialect", dialect, "--cwd"])
        .arg(&dir)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            let limit = rustix::process::Rlimit {
                current: Some(DATA_LIMIT),
                maximum: Some(DATA_LIMIT),
            };
            rustix::process::setrlimit(rustix::process::Resource::Data, limit)
                .map_err(std::io::Error::from)
        });
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("pi-tools starts");
    let mut stdin = child.stdin.take().unwrap();
    let reply = reply.to_owned();
    // The reader may fail before it has read everything: write on a thread of its own.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(reply.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (output, started.elapsed())
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

/// A Responses stream of 4096 messages whose one part each is announced at content index
/// 4095: 1.3 MB of events. A slot per index would be 16 M parts (GBs); read sparsely, the
/// parts are what came, in index order.
#[test]
fn a_responses_stream_with_far_indexes_takes_memory_in_proportion_to_it() {
    let mut events = Vec::new();
    for i in 0..4096 {
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": i,
                   "item": {"type": "message", "role": "assistant", "content": []}}),
        ));
        events.push((
            "response.content_part.added",
            json!({"type": "response.content_part.added", "output_index": i, "content_index": 4095,
                   "part": {"type": "output_text", "text": "x"}}),
        ));
    }
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    ));
    let body = sse(&events);
    assert!(body.len() < 1_400_000, "{}", body.len());
    let (output, took) = run_capped("openai-responses", &body);
    assert_eq!(
        stdout_json(&output),
        json!([]),
        "no call, nothing to append"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// The same for Chat Completions (`tool_calls[].index`) and Anthropic (`index`): a call or
/// block at index 4095 is the only one there is, not the last of 4096.
#[test]
fn a_far_call_or_block_index_is_the_one_call_there_is() {
    let chunk = |call: Value, finish: Value| {
        json!({"object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": finish}]})
    };
    let openai = sse(&[
        (
            "",
            chunk(
                json!({"index": 4095, "id": "call_1", "type": "function",
                       "function": {"name": "ls", "arguments": "{}"}}),
                Value::Null,
            ),
        ),
        ("", chunk(json!({"index": 4095}), json!("tool_calls"))),
    ]);
    let (output, _) = run_capped("openai", &openai);
    let messages = stdout_json(&output);
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{messages}");
    assert_eq!(messages[0]["tool_call_id"], "call_1");

    let anthropic = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                   "role": "assistant", "content": [], "stop_reason": null}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 4095, "content_block":
                   {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 4095}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    let (output, _) = run_capped("anthropic", &anthropic);
    let message = stdout_json(&output);
    assert_eq!(message["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(message["content"][0]["tool_use_id"], "toolu_1");
}

/// A JSON list of `n` zeros: two bytes each, and tens of bytes each as JSON values.
fn zeros(n: usize) -> String {
    let mut list = String::with_capacity(2 * n + 2);
    list.push('[');
    for i in 0..n {
        if i > 0 {
            list.push(',');
        }
        list.push('0');
    }
    list.push(']');
    list
}

/// `value` as JSON text with each string `"ZEROS"` in it replaced by [`zeros`]`(n)`.
fn with_zeros(value: &Value, n: usize) -> String {
    value.to_string().replace("\"ZEROS\"", &zeros(n))
}

/// The zeros of the replies below: 2.4 M, 4.8 MB of text in a member no reader uses. As JSON
/// values they would take about 160 MB, past the cap; skipped as they are parsed, nothing.
const MANY: usize = 2_400_000;

/// `pi-tools run` in the capped process, with `a.txt` in its directory for the call to read.
fn run_read_call(dialect: &str, reply: &str) -> Value {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("providers-memory");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "the file the call reads\n").unwrap();
    assert!(reply.len() > 4_800_000, "{}", reply.len());
    let (output, took) = run_capped(dialect, reply);
    assert!(took < Duration::from_secs(20), "{took:?}");
    stdout_json(&output)
}

/// The one result of the call `call_1` (`read a.txt`), in `dialect`'s shape: its arguments
/// came through whole.
fn read_the_file(results: &Value, id_key: &str, text_key: &str) {
    assert_eq!(results.as_array().map(Vec::len), Some(1), "{results}");
    assert_eq!(results[0][id_key], "call_1", "{results}");
    let text = results[0][text_key].as_str().unwrap_or_default();
    assert!(text.contains("the file the call reads"), "{results}");
}

/// A Responses body whose call comes with 2.4 M zeros in members nobody reads (at the top,
/// in `usage`): read within the cap, the call and its arguments whole.
#[test]
fn a_responses_body_with_many_values_nobody_reads_is_read_within_the_cap() {
    let body = json!({"id": "resp_1", "status": "completed", "metadata_extra": "ZEROS",
        "output": [{"type": "function_call", "call_id": "call_1", "name": "read",
                    "arguments": "{\"path\": \"a.txt\"}"}],
        "usage": {"input_tokens": 1, "details": "ZEROS"}});
    let results = run_read_call("openai-responses", &with_zeros(&body, MANY / 2));
    read_the_file(&results, "call_id", "output");
}

/// The same for a Chat Completions body, the zeros beside the choice's message and in it.
#[test]
fn a_chat_body_with_many_values_nobody_reads_is_read_within_the_cap() {
    let body = json!({"id": "chatcmpl-1", "object": "chat.completion", "extra": "ZEROS",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": "ZEROS",
            "message": {"role": "assistant", "content": null, "annotations": "ZEROS",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "read", "arguments": "{\"path\": \"a.txt\"}"}}]}}]});
    let results = run_read_call("openai", &with_zeros(&body, MANY / 3));
    read_the_file(&results, "tool_call_id", "content");
}

/// Streams: an event carrying 2.4 M zeros in a member its reader does not use is read
/// within the cap (each event is decoded on its own, but one event is enough).
#[test]
fn a_responses_stream_event_with_many_values_nobody_reads_is_read_within_the_cap() {
    let call = json!({"type": "function_call", "call_id": "call_1", "name": "read",
                      "arguments": "{\"path\": \"a.txt\"}"});
    let responses = sse(&[
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": call,
                   "obfuscation": "ZEROS"}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed",
                   "response": {"status": "completed", "output": [], "usage": "ZEROS"}}),
        ),
    ]);
    let results = run_read_call(
        "openai-responses",
        &responses.replace("\"ZEROS\"", &zeros(MANY / 2)),
    );
    read_the_file(&results, "call_id", "output");
}

/// The same for a Chat Completions chunk.
#[test]
fn a_chat_stream_event_with_many_values_nobody_reads_is_read_within_the_cap() {
    let chat = sse(&[
        (
            "",
            json!({"object": "chat.completion.chunk", "usage": "ZEROS", "choices": [{"index": 0,
                "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "read", "arguments": "{\"path\": \"a.txt\"}"}}]},
                "finish_reason": null}]}),
        ),
        (
            "",
            json!({"object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ),
    ]);
    let results = run_read_call("openai", &chat.replace("\"ZEROS\"", &zeros(MANY)));
    read_the_file(&results, "tool_call_id", "content");
}

/// Anthropic and Gemini bodies likewise, the zeros in `usage`, `usageMetadata` and a
/// candidate's `safetyRatings`; the call's `input` or `args` stays an object.
#[test]
fn anthropic_and_gemini_bodies_with_many_values_nobody_reads_are_read_within_the_cap() {
    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "stop_reason": "tool_use", "usage": {"input_tokens": 1, "extra": "ZEROS"},
        "content": [{"type": "tool_use", "id": "call_1", "name": "read",
                     "input": {"path": "a.txt"}}]});
    let message = run_read_call("anthropic", &with_zeros(&anthropic, MANY));
    assert_eq!(message["content"][0]["tool_use_id"], "call_1", "{message}");
    let text = message["content"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("the file the call reads"), "{message}");

    let gemini = json!({"usageMetadata": {"extra": "ZEROS"}, "candidates": [{
        "finishReason": "STOP", "safetyRatings": "ZEROS",
        "content": {"role": "model", "parts": [{"functionCall": {"id": "call_1",
            "name": "read", "args": {"path": "a.txt"}}}]}}]});
    let content = run_read_call("gemini", &with_zeros(&gemini, MANY / 2));
    let response = &content["parts"][0]["functionResponse"];
    assert_eq!(response["id"], "call_1", "{content}");
    let output = response["response"]["output"].as_str().unwrap_or_default();
    assert!(output.contains("the file the call reads"), "{content}");
}

/// Lists a reader walks, made of 2.4 M zeros instead of objects: the reader refuses the
/// first, and the rest is not kept (as JSON values they would pass the cap).
#[test]
fn a_list_of_many_values_where_objects_are_read_is_refused_within_the_cap() {
    for (dialect, body, path) in [
        (
            "openai-responses",
            json!({"status": "completed", "output": "ZEROS"}),
            "output[0]",
        ),
        ("openai", json!({"choices": "ZEROS"}), "choices[0]"),
        (
            "anthropic",
            json!({"type": "message", "stop_reason": "end_turn", "content": "ZEROS"}),
            "content[0]",
        ),
    ] {
        let (output, took) = run_capped(dialect, &with_zeros(&body, MANY));
        assert!(took < Duration::from_secs(20), "{took:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "at `{path}`: expected a JSON object, found a number"
            )),
            "{dialect}: {stderr}"
        );
        assert_eq!(output.status.code(), Some(2), "{dialect}: {stderr}");
    }
}

/// The reason a reply of `bytes` bytes too dense to decode is refused with.
fn too_dense(bytes: usize) -> String {
    format!(
        "it holds more JSON values than pi-tools decodes for a reply of its size: more than {} in what it reads (one for every 16 bytes of the {bytes} bytes read, and at least 65536; an object counts as 5), and decoding them would take memory far out of proportion to the reply; check what sent it, and have the tool take such data as text or in smaller calls",
        (bytes / 16).max(65_536)
    )
}

/// `pi-tools run` in the capped process refuses `reply` as too dense (`at` is where, as the
/// error says it: empty for the body as a whole), quickly, with exit code 2.
fn refused_as_too_dense(dialect: &str, reply: &str, streamed: bool, at: &str) {
    let (output, took) = run_capped(dialect, reply);
    assert!(took < Duration::from_secs(20), "{took:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let what = if streamed { "event stream" } else { "reply" };
    let place = if at.is_empty() {
        String::new()
    } else {
        format!(" at `{at}`")
    };
    let expected = format!(
        "unusable reply: cannot read the {dialect} {what}{place}: {}",
        too_dense(reply.len())
    );
    assert!(stderr.contains(&expected), "{dialect}: {stderr}");
    assert_eq!(output.status.code(), Some(2), "{dialect}: {stderr}");
}

/// A call's arguments of 600 K small values (1.2 MB): as JSON values they take tens of MB
/// for each copy (the call's, the assistant turn's, the runner's), so such a reply is refused
/// as too dense, whether the arguments are a value (Anthropic's `input`, Gemini's `args`) or
/// a JSON text (Chat's and Responses' `arguments`).
#[test]
fn arguments_of_many_small_values_are_refused_as_too_dense_within_the_cap() {
    const VALUES: usize = 600_000;
    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "stop_reason": "tool_use", "content": [{"type": "tool_use", "id": "call_1",
            "name": "read", "input": {"path": "a.txt", "extra": "ZEROS"}}]});
    let anthropic = with_zeros(&anthropic, VALUES);
    assert!(anthropic.len() > 1_200_000, "{}", anthropic.len());
    refused_as_too_dense("anthropic", &anthropic, false, "");

    let gemini = json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model",
        "parts": [{"functionCall": {"id": "call_1", "name": "read",
            "args": {"path": "a.txt", "extra": "ZEROS"}}}]}}]});
    refused_as_too_dense("gemini", &with_zeros(&gemini, VALUES), false, "");

    let arguments = format!("{{\"path\": \"a.txt\", \"extra\": {}}}", zeros(VALUES));
    let chat = json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
        "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "read", "arguments": arguments}}]}}]});
    refused_as_too_dense(
        "openai",
        &chat.to_string(),
        false,
        "choices[0].message.tool_calls[0].function.arguments",
    );
}

/// The same for a streamed call whose arguments are put together from 600 K small values in
/// deltas: the stream is refused when they are parsed, at the call's input.
#[test]
fn streamed_arguments_of_many_small_values_are_refused_as_too_dense_within_the_cap() {
    let text = format!("{{\"path\": \"a.txt\", \"extra\": {}}}", zeros(600_000));
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                   "role": "assistant", "content": [], "stop_reason": null}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block":
                   {"type": "tool_use", "id": "call_1", "name": "read", "input": {}}}),
        ),
    ];
    for piece in text.as_bytes().chunks(100_000) {
        let piece = std::str::from_utf8(piece).unwrap();
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "input_json_delta", "partial_json": piece}}),
        ));
    }
    events.extend([
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    refused_as_too_dense("anthropic", &sse(&events), true, "content[0].input");
}

/// 100 K small objects in a list the reader walks and keeps (Responses output items of 13
/// bytes, 1.3 MB): each is two values, so the body is refused as too dense before the
/// reader sees them.
#[test]
fn a_list_of_many_small_objects_is_refused_as_too_dense_within_the_cap() {
    let items = vec![r#"{"type":"x"}"#; 100_000].join(",");
    let body = format!(r#"{{"status": "completed", "output": [{items}]}}"#);
    assert!(body.len() > 1_300_000, "{}", body.len());
    refused_as_too_dense("openai-responses", &body, false, "");
}

/// A call's arguments of 5,000 numbers, dense but ordinary (a few kB), are read whole in
/// every dialect, as a body and as a stream.
#[test]
fn a_dense_but_ordinary_arguments_array_is_read_whole() {
    use pi_tools::dialect::Dialect;
    use pi_tools::provider::read_reply;

    let numbers: Vec<u64> = (0..5_000).collect();
    let arguments = json!({"path": "a.txt", "numbers": numbers});
    let text = arguments.to_string();
    let bodies = [
        (
            Dialect::Anthropic,
            json!({"type": "message", "stop_reason": "tool_use", "content": [{"type": "tool_use",
                "id": "call_1", "name": "read", "input": arguments}]})
            .to_string(),
        ),
        (
            Dialect::Gemini,
            json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model",
                "parts": [{"functionCall": {"id": "call_1", "name": "read",
                    "args": arguments}}]}}]})
            .to_string(),
        ),
        (
            Dialect::OpenAi,
            json!({"choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "read", "arguments": text}}]}}]})
            .to_string(),
        ),
        (
            Dialect::OpenAiResponses,
            json!({"status": "completed", "output": [{"type": "function_call",
                "call_id": "call_1", "name": "read", "arguments": text}]})
            .to_string(),
        ),
        (
            Dialect::OpenAi,
            sse(&[
                (
                    "",
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                        "id": "call_1", "type": "function",
                        "function": {"name": "read", "arguments": text}}]},
                        "finish_reason": null}]}),
                ),
                (
                    "",
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                ),
            ]),
        ),
    ];
    for (dialect, body) in bodies {
        assert!(body.len() < 40_000, "{}", body.len());
        let reply = read_reply(dialect, body.as_bytes()).unwrap();
        assert_eq!(reply.calls.len(), 1, "{dialect}");
        assert_eq!(reply.calls[0].arguments, arguments, "{dialect}");
        assert_eq!(reply.unreadable(0), None, "{dialect}");
    }
}

/// A stream whose events each keep nearly as many values as one event may (60 K small
/// values in an output item, 120 kB): past one value per 16 bytes of each event, the events
/// draw on 65,536 values for the whole stream, so the second such event is refused rather
/// than twenty of them keeping 1.2 M values.
#[test]
fn a_stream_of_many_dense_events_is_refused_as_too_dense_within_the_cap() {
    let mut events = Vec::new();
    for i in 0..20 {
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": i,
                   "item": {"type": "reasoning", "summary": [], "extra": "ZEROS"}}),
        ));
    }
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    ));
    let body = sse(&events).replace("\"ZEROS\"", &zeros(60_000));
    let (output, took) = run_capped("openai-responses", &body);
    assert!(took < Duration::from_secs(20), "{took:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = "unusable reply: cannot read the openai-responses event stream at `events[1]`: its events keep more JSON values than pi-tools decodes for a stream of their size: one for every 16 bytes of each event, and 65536 more in all (an object counts as 5), and keeping them would take memory far out of proportion to the stream; check what sent it, and have the tool take such data as text or in smaller calls";
    assert!(stderr.contains(expected), "{stderr}");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
}
