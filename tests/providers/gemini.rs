//! Gemini: a `GenerateContentResponse` and the chunks of `streamGenerateContent?alt=sse`.

use pi_tools::dialect::Dialect;
use pi_tools::provider::read_reply;
use serde_json::{Value, json};

use super::{
    CUT_ARGUMENTS, NOT_FOUND, calls, read_stream_every_way, run, sse,
    strict_nulls_take_the_defaults,
};

const P: Dialect = Dialect::Gemini;

fn function_call(id: Option<&str>, name: &str, args: Value) -> Value {
    let mut call = json!({"name": name, "args": args});
    if let Some(id) = id {
        call["id"] = json!(id);
    }
    json!({"functionCall": call})
}

/// The parts of the reply; the first call has an id, the others have none.
fn parts() -> Vec<Value> {
    let mut first = function_call(Some("fc-1"), "echo", json!({"text": "one"}));
    first["thoughtSignature"] = json!("CiQBcsjafFrMOb3bZ0Pyk8Q0ofG9sRc8");
    vec![
        json!({"text": "Two echoes and a picture.", "thought": true}),
        json!({"text": "Let me look."}),
        first,
        function_call(None, "echo", json!({"text": "twö →"})),
        function_call(None, "picture", json!({})),
        function_call(None, "nosuch", json!({})),
        // Not what Gemini sends: arguments as a cut-off JSON text.
        function_call(None, "echo", json!(r#"{"text": "tw"#)),
    ]
}

fn response(parts: Vec<Value>, finish_reason: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(reason) = finish_reason {
        candidate["finishReason"] = json!(reason);
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 40, "totalTokenCount": 160},
        "modelVersion": "gemini-2.5-flash"
    })
}

/// The chunks of [`parts`]: text and thoughts split across chunks, one call a chunk, the
/// last chunk with `finishReason`.
fn streamed() -> String {
    let all = parts();
    let mut chunks = vec![
        response(vec![json!({"text": "Two echoes", "thought": true})], None),
        response(
            vec![json!({"text": " and a picture.", "thought": true})],
            None,
        ),
        response(vec![json!({"text": "Let me"})], None),
        response(vec![json!({"text": " look."})], None),
    ];
    for part in &all[2..all.len() - 1] {
        chunks.push(response(vec![part.clone()], None));
    }
    chunks.push(response(vec![all[all.len() - 1].clone()], Some("STOP")));
    sse(&chunks.into_iter().map(|c| ("", c)).collect::<Vec<_>>())
}

fn expected_results() -> Value {
    json!([{"role": "user", "parts": [
        {"functionResponse": {"name": "echo", "id": "fc-1", "response": {"output": "one"}}},
        {"functionResponse": {"name": "echo", "response": {"output": "twö →"}}},
        {"functionResponse": {"name": "picture", "response": {"output": "a red pixel"},
            "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}},
        {"functionResponse": {"name": "nosuch", "response": {"error": NOT_FOUND}}},
        {"functionResponse": {"name": "echo", "response": {"error": CUT_ARGUMENTS}}}
    ]}])
}

#[test]
fn a_response_runs_as_a_batch_and_its_results_are_one_content_of_function_responses() {
    let reply = read_reply(P, response(parts(), Some("STOP")).to_string().as_bytes()).unwrap();
    assert_eq!(
        calls(&reply),
        [
            ("fc-1".into(), "echo".into(), json!({"text": "one"})),
            ("call_1".into(), "echo".into(), json!({"text": "twö →"})),
            ("call_2".into(), "picture".into(), json!({})),
            ("call_3".into(), "nosuch".into(), json!({})),
            ("call_4".into(), "echo".into(), json!({})),
        ]
    );
    assert!(reply.sent_id(0) && !reply.sent_id(1));
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(reply.thinking, "Two echoes and a picture.");
    assert_eq!(
        reply.assistant,
        [json!({"role": "model", "parts": parts()})],
        "the content goes back as it came, thought signature included"
    );
    assert_eq!(Value::Array(run(&reply)), expected_results());
}

#[test]
fn the_streamed_chunks_give_the_same_reply_however_they_are_split() {
    let whole = read_reply(P, response(parts(), Some("STOP")).to_string().as_bytes()).unwrap();
    assert_eq!(read_stream_every_way(P, &streamed()), whole);
    assert_eq!(Value::Array(run(&whole)), expected_results());
}

#[test]
fn strict_mode_nulls_are_absent_so_defaults_apply() {
    let body = response(
        vec![function_call(
            None,
            "count",
            json!({"limit": null, "note": null}),
        )],
        Some("STOP"),
    );
    strict_nulls_take_the_defaults(read_reply(P, body.to_string().as_bytes()).unwrap());
}

#[test]
fn what_cannot_be_read_is_named_with_the_provider_and_the_path() {
    let error = |body: &str| read_reply(P, body.as_bytes()).unwrap_err().to_string();
    let odd = response(vec![json!({"videoMetadata": {"fps": 1}})], Some("STOP"));
    assert_eq!(
        error(&odd.to_string()),
        "cannot read the gemini reply at `candidates[0].content.parts[0]`: a part with none of `text`, `functionCall` or executableCode, codeExecutionResult, inlineData, fileData (it has videoMetadata); pi-tools cannot tell what it is"
    );
    let body = streamed();
    let last = body[..body.len() - 2].rfind("\n\n").unwrap() + 2;
    assert_eq!(
        error(&body[..last]),
        "cannot read the gemini event stream: the stream ended before the reply did (no chunk has a `finishReason`): it was cut off; pass the whole body"
    );
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
    assert_eq!(
        error(&blocked.to_string()),
        "cannot read the gemini reply at `promptFeedback.blockReason`: the prompt was blocked (SAFETY); change the request"
    );
    let no_name = response(vec![json!({"functionCall": {"args": {}}})], Some("STOP"));
    assert_eq!(
        error(&no_name.to_string()),
        "cannot read the gemini reply at `candidates[0].content.parts[0].functionCall.name`: missing; every reply of this kind has it"
    );
}
