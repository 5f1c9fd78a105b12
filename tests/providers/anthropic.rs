//! Anthropic Messages: a `message` and its `message_start` … `message_stop` stream.

use pi_tools::dialect::Dialect;
use pi_tools::provider::read_reply;
use serde_json::{Value, json};

use super::{
    CUT_ARGUMENTS, NOT_FOUND, calls, read_stream_every_way, run, sse,
    strict_nulls_take_the_defaults,
};

const P: Dialect = Dialect::Anthropic;

fn tool_use(n: usize, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": format!("toolu_0{n}"), "name": name, "input": input})
}

fn blocks() -> Vec<Value> {
    vec![
        json!({"type": "thinking", "thinking": "Two echoes and a picture.",
               "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}),
        json!({"type": "text", "text": "Let me look."}),
        tool_use(1, "echo", json!({"text": "one"})),
        tool_use(2, "echo", json!({"text": "twö →"})),
        tool_use(3, "picture", json!({})),
        tool_use(4, "nosuch", json!({})),
        // Not something the API sends whole; what a cut-off `input_json_delta` run makes.
        tool_use(5, "echo", json!(r#"{"text": "tw"#)),
    ]
}

fn message(content: Vec<Value>, stop_reason: Value) -> Value {
    json!({
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": 472, "output_tokens": 2}
    })
}

/// The stream of [`blocks`]: each block started empty and filled by deltas, split inside
/// JSON strings and inside `ö`.
fn streamed() -> String {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": message(vec![], Value::Null)}),
        ),
        ("ping", json!({"type": "ping"})),
    ];
    for (i, block) in blocks().into_iter().enumerate() {
        let (start, deltas) = match block["type"].as_str().unwrap() {
            "thinking" => (
                json!({"type": "thinking", "thinking": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": "Two echoes"}),
                    json!({"type": "thinking_delta", "thinking": " and a picture."}),
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ],
            ),
            "text" => (
                json!({"type": "text", "text": ""}),
                vec![
                    json!({"type": "text_delta", "text": "Let me"}),
                    json!({"type": "text_delta", "text": " look."}),
                ],
            ),
            _ => {
                let input = match &block["input"] {
                    Value::String(text) => text.clone(),
                    object => object.to_string(),
                };
                let cut = input
                    .char_indices()
                    .nth(11)
                    .map_or(input.len(), |(at, _)| at);
                let mut start = block.clone();
                start["input"] = json!({});
                let deltas = [&input[..cut], &input[cut..]]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect();
                (start, deltas)
            }
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        for delta in deltas {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i, "delta": delta}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    events.push(("message_delta", json!({"type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}})));
    events.push(("message_stop", json!({"type": "message_stop"})));
    sse(&events)
}

fn result(n: usize, content: Value, is_error: bool) -> Value {
    json!({"type": "tool_result", "tool_use_id": format!("toolu_0{n}"), "content": content,
           "is_error": is_error})
}

fn expected_results() -> Value {
    json!([{"role": "user", "content": [
        result(1, json!([{"type": "text", "text": "one"}]), false),
        result(2, json!([{"type": "text", "text": "twö →"}]), false),
        result(3, json!([
            {"type": "text", "text": "a red pixel"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
        ]), false),
        result(4, json!([{"type": "text", "text": NOT_FOUND}]), true),
        result(5, json!([{"type": "text", "text": CUT_ARGUMENTS}]), true),
    ]}])
}

#[test]
fn a_message_runs_as_a_batch_and_its_results_are_one_user_message_of_tool_results() {
    let reply = read_reply(
        P,
        message(blocks(), json!("tool_use")).to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(
        calls(&reply),
        [
            ("toolu_01".into(), "echo".into(), json!({"text": "one"})),
            ("toolu_02".into(), "echo".into(), json!({"text": "twö →"})),
            ("toolu_03".into(), "picture".into(), json!({})),
            ("toolu_04".into(), "nosuch".into(), json!({})),
            ("toolu_05".into(), "echo".into(), json!({})),
        ]
    );
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(reply.thinking, "Two echoes and a picture.");
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_use"));
    let mut kept = blocks();
    kept[6]["input"] = json!({});
    assert_eq!(
        reply.assistant,
        [json!({"role": "assistant", "content": kept})],
        "the thinking block keeps its signature; an unreadable input goes back as {{}}"
    );
    assert_eq!(Value::Array(run(&reply)), expected_results());
}

#[test]
fn the_streamed_message_gives_the_same_reply_however_it_is_split() {
    let whole = read_reply(
        P,
        message(blocks(), json!("tool_use")).to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(read_stream_every_way(P, &streamed()), whole);
    assert_eq!(Value::Array(run(&whole)), expected_results());
}

#[test]
fn strict_mode_nulls_are_absent_so_defaults_apply() {
    let body = message(
        vec![tool_use(1, "count", json!({"limit": null, "note": null}))],
        json!("tool_use"),
    );
    strict_nulls_take_the_defaults(read_reply(P, body.to_string().as_bytes()).unwrap());
}

#[test]
fn what_cannot_be_read_is_named_with_the_provider_and_the_path() {
    let error = |body: &str| read_reply(P, body.as_bytes()).unwrap_err().to_string();
    let upload = message(
        vec![json!({"type": "container_upload", "file_id": "f"})],
        json!("end_turn"),
    );
    assert_eq!(
        error(&upload.to_string()),
        "cannot read the anthropic reply at `content[0].type`: unknown content block type `container_upload`; pi-tools reads `text`, `thinking`, `redacted_thinking` and `tool_use` blocks, and keeps those of server tools (server_tool_use, web_search_tool_result)"
    );
    let body = streamed();
    let before_stop = &body[..body.find("event: message_stop").unwrap()];
    assert_eq!(
        error(before_stop),
        "cannot read the anthropic event stream: the stream ended before the reply did (no `message_stop` event): it was cut off; pass the whole body"
    );
    let odd_delta = body.replacen("\"text_delta\"", "\"shout_delta\"", 1);
    assert_eq!(
        error(&odd_delta),
        "cannot read the anthropic event stream at `events[8].delta.type`: unknown delta type `shout_delta`; pi-tools reads text, thinking, signature, input_json and citations deltas"
    );
    let overloaded = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
    assert_eq!(
        error(overloaded),
        "cannot read the anthropic event stream at `events[0]`: the provider reports an error: Overloaded"
    );
}
