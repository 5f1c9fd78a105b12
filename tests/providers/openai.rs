//! OpenAI Chat Completions: a `ChatCompletion` and its `chat.completion.chunk` stream.

use pi_tools::dialect::Dialect;
use pi_tools::provider::{ReplyStream, Request, read_reply, user_message};
use serde_json::{Value, json};

use super::{
    CUT_ARGUMENTS, NOT_FOUND, calls, read_stream_every_way, run, sse,
    strict_nulls_take_the_defaults,
};

const P: Dialect = Dialect::OpenAi;

fn completion(tool_calls: Value) -> Value {
    json!({
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Let me look.",
                "refusal": null,
                "annotations": [],
                "tool_calls": tool_calls
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    })
}

fn call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

fn the_batch() -> Value {
    completion(json!([
        call("call_1", "echo", r#"{"text": "one"}"#),
        call("call_2", "echo", r#"{"text": "twö →"}"#),
        call("call_3", "picture", "{}"),
        call("call_4", "nosuch", "{}"),
        call("call_5", "echo", r#"{"text": "tw"#),
    ]))
}

fn chunk(delta: Value, finish_reason: Value) -> (&'static str, Value) {
    (
        "",
        json!({
            "id": "chatcmpl-123",
            "object": "chat.completion.chunk",
            "created": 1694268190,
            "model": "gpt-4.1-2025-04-14",
            "system_fingerprint": "fp_44709d6fcb",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]
        }),
    )
}

fn arguments_delta(index: usize, arguments: &str) -> (&'static str, Value) {
    chunk(
        json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
        Value::Null,
    )
}

fn start(index: usize, id: &str, name: &str) -> (&'static str, Value) {
    chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                "function": {"name": name, "arguments": ""}}]}),
        Value::Null,
    )
}

/// The batch of [`the_batch`] as the API streams it; arguments split inside JSON strings
/// and between the bytes of `ö`.
fn the_batch_streamed() -> String {
    let mut body = sse(&[
        chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            Value::Null,
        ),
        chunk(json!({"content": "Let me "}), Value::Null),
        chunk(json!({"content": "look."}), Value::Null),
        start(0, "call_1", "echo"),
        arguments_delta(0, r#"{"text": "o"#),
        arguments_delta(0, r#"ne"}"#),
        start(1, "call_2", "echo"),
        arguments_delta(1, r#"{"text": "tw"#),
        arguments_delta(1, r#"ö →"}"#),
        start(2, "call_3", "picture"),
        arguments_delta(2, "{}"),
        start(3, "call_4", "nosuch"),
        arguments_delta(3, "{}"),
        start(4, "call_5", "echo"),
        arguments_delta(4, r#"{"text": "tw"#),
        chunk(json!({}), json!("tool_calls")),
    ]);
    body.push_str("data: [DONE]\n\n");
    body
}

fn expected_results() -> Value {
    json!([
        {"role": "tool", "tool_call_id": "call_1", "content": "one"},
        {"role": "tool", "tool_call_id": "call_2", "content": "twö →"},
        {"role": "tool", "tool_call_id": "call_3",
         "content": "a red pixel\n\n(The image of this result follows in the next user message.)"},
        {"role": "tool", "tool_call_id": "call_4", "content": NOT_FOUND},
        {"role": "tool", "tool_call_id": "call_5", "content": CUT_ARGUMENTS},
        {"role": "user", "content": [
            {"type": "text", "text": "Images from the result of call call_3 (picture):"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ]}
    ])
}

#[test]
fn a_completion_runs_as_a_batch_and_its_results_are_tool_messages_then_the_images() {
    let reply = read_reply(P, the_batch().to_string().as_bytes()).unwrap();
    assert_eq!(
        calls(&reply),
        [
            ("call_1".into(), "echo".into(), json!({"text": "one"})),
            ("call_2".into(), "echo".into(), json!({"text": "twö →"})),
            ("call_3".into(), "picture".into(), json!({})),
            ("call_4".into(), "nosuch".into(), json!({})),
            ("call_5".into(), "echo".into(), json!({})),
        ]
    );
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        reply.unreadable(4),
        Some("are not valid JSON (EOF while parsing a string at line 1 column 12)")
    );
    assert_eq!(
        reply.assistant,
        [json!({
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": the_batch()["choices"][0]["message"]["tool_calls"]
        })]
    );
    assert_eq!(Value::Array(run(&reply)), expected_results());
}

#[test]
fn the_streamed_completion_gives_the_same_reply_however_it_is_split() {
    let streamed = read_stream_every_way(P, &the_batch_streamed());
    let whole = read_reply(P, the_batch().to_string().as_bytes()).unwrap();
    assert_eq!(streamed, whole);
    assert_eq!(Value::Array(run(&streamed)), expected_results());
}

#[test]
fn strict_mode_nulls_are_absent_so_defaults_apply() {
    let body = completion(json!([call(
        "call_1",
        "count",
        r#"{"limit": null, "note": null}"#
    )]));
    let reply = read_reply(P, body.to_string().as_bytes()).unwrap();
    assert!(
        !reply.strict,
        "Chat Completions tools are strict only when declared so"
    );
    strict_nulls_take_the_defaults(reply);
}

/// The one value that describes strict tools reads their replies as strict: no flag to set
/// by hand, and the same calls, errors and results as plain Chat Completions.
#[test]
fn the_strict_dialect_reads_chat_completions_as_strict() {
    let body = completion(json!([call(
        "call_1",
        "count",
        r#"{"limit": null, "note": null}"#
    )]));
    let plain = read_reply(P, body.to_string().as_bytes()).unwrap();
    let strict = read_reply(Dialect::OpenAiStrict, body.to_string().as_bytes()).unwrap();
    assert!(strict.strict);
    assert_eq!(strict.dialect, Dialect::OpenAiStrict);
    assert_eq!(
        (&strict.calls, &strict.assistant, &strict.text),
        (&plain.calls, &plain.assistant, &plain.text)
    );
    assert_eq!(run(&strict), run(&plain));
    let e = read_reply(Dialect::OpenAiStrict, b"{\"choices\": 3}").unwrap_err();
    assert_eq!(e, read_reply(P, b"{\"choices\": 3}").unwrap_err());
    assert!(
        e.to_string()
            .starts_with("cannot read the openai reply at `choices`"),
        "{e}"
    );
}

/// MCP only lists tools: asking it for a reply, a stream or a request says so.
#[test]
fn mcp_has_no_replies_or_requests() {
    let lists_only = "the mcp dialect only lists tools and has no requests or replies; use openai, openai-strict, openai-responses, anthropic or gemini";
    let body = completion(json!([call("call_1", "count", "{}")]));
    let e = read_reply(Dialect::Mcp, body.to_string().as_bytes()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("cannot read the mcp reply: {lists_only}")
    );
    let mut stream = ReplyStream::new(Dialect::Mcp);
    let e = stream.feed(b"data: {}\n\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("cannot read the mcp event stream: {lists_only}")
    );
    let history = [json!({"role": "user", "content": "hi"})];
    let e = Request::new("m", &history).build(Dialect::Mcp).unwrap_err();
    assert_eq!(e.to_string(), lists_only);
    assert_eq!(
        user_message(Dialect::Mcp, "hi").unwrap_err().to_string(),
        lists_only
    );
    assert_eq!(
        user_message(Dialect::Gemini, "hi").unwrap(),
        json!({"role": "user", "parts": [{"text": "hi"}]})
    );
}

#[test]
fn what_cannot_be_read_is_named_with_the_provider_and_the_path() {
    let error = |body: &str| read_reply(P, body.as_bytes()).unwrap_err().to_string();
    let mut no_id = the_batch();
    no_id["choices"][0]["message"]["tool_calls"][1]
        .as_object_mut()
        .unwrap()
        .remove("id");
    assert_eq!(
        error(&no_id.to_string()),
        "cannot read the openai reply at `choices[0].message.tool_calls[1].id`: missing; every reply of this kind has it"
    );
    let custom =
        completion(json!([{"id": "c", "type": "custom", "custom": {"name": "x", "input": "y"}}]));
    assert_eq!(
        error(&custom.to_string()),
        "cannot read the openai reply at `choices[0].message.tool_calls[0].type`: unknown tool call type `custom`; pi-tools runs `function` calls"
    );
    assert_eq!(
        error(r#"{"choices": [{"index": 0, "message": {"role": "assistant""#),
        "cannot read the openai reply: the body is not valid JSON (EOF while parsing an object at line 1 column 57); pass the reply's whole body"
    );
    let streamed = the_batch_streamed();
    let cut = &streamed[..streamed.find(r#"{\"text\": \"tw"#).unwrap()];
    let last_full = cut.rfind("\n\n").unwrap() + 2;
    assert_eq!(
        error(&streamed[..last_full]),
        "cannot read the openai event stream: the stream ended before the reply did (no chunk has a `finish_reason`): it was cut off; pass the whole body"
    );
    assert_eq!(
        error(cut),
        "cannot read the openai event stream at `events[7]`: the body ends inside this event (it has no closing blank line): it was cut off; pass the whole body"
    );
    let two_choices = r#"data: {"choices": [{"index": 1, "delta": {"content": "x"}}]}"#;
    assert_eq!(
        error(&format!("{two_choices}\n\n")),
        "cannot read the openai event stream at `events[0].choices[0].index`: a second choice: only one can continue a conversation; ask for one (`n` = 1)"
    );
}
