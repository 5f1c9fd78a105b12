//! OpenAI Responses: a `response` and its `response.*` event stream.

use pi_tools::dialect::Dialect;
use pi_tools::provider::read_reply;
use serde_json::{Value, json};

use super::{
    CUT_ARGUMENTS, NOT_FOUND, calls, read_stream_every_way, run, sse,
    strict_nulls_take_the_defaults,
};

const P: Dialect = Dialect::OpenAiResponses;

fn function_call(n: usize, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
           "name": name, "arguments": arguments, "status": "completed"})
}

fn items() -> Vec<Value> {
    vec![
        json!({"type": "reasoning", "id": "rs_1",
               "summary": [{"type": "summary_text", "text": "Two echoes and a picture."}]}),
        json!({"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]}),
        function_call(1, "echo", r#"{"text": "one"}"#),
        function_call(2, "echo", r#"{"text": "twö →"}"#),
        function_call(3, "picture", "{}"),
        function_call(4, "nosuch", "{}"),
        function_call(5, "echo", r#"{"text": "tw"#),
    ]
}

fn response(status: &str, output: Vec<Value>) -> Value {
    json!({
        "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
        "object": "response",
        "created_at": 1741476542,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": "gpt-4.1-2025-04-14",
        "output": output,
        "parallel_tool_calls": true,
        "usage": {"input_tokens": 36, "output_tokens": 87, "total_tokens": 123}
    })
}

/// The stream of [`items`]: each item added empty, filled by deltas split inside JSON
/// strings and inside `ö`, then (with `done`) its `output_item.done` and the final output.
fn streamed(done: bool) -> String {
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "response": response("in_progress", vec![])}),
    )];
    for (i, item) in items().into_iter().enumerate() {
        let mut empty = item.clone();
        let mut deltas = Vec::new();
        match item["type"].as_str().unwrap() {
            "reasoning" => {
                empty["summary"] = json!([]);
                deltas.push((
                    "response.reasoning_summary_part.added",
                    json!({"output_index": i, "summary_index": 0, "item_id": "rs_1",
                           "part": {"type": "summary_text", "text": ""}}),
                ));
                for piece in ["Two echoes", " and a picture."] {
                    deltas.push(("response.reasoning_summary_text.delta",
                        json!({"output_index": i, "summary_index": 0, "item_id": "rs_1", "delta": piece})));
                }
            }
            "message" => {
                empty["content"] = json!([]);
                deltas.push((
                    "response.content_part.added",
                    json!({"output_index": i, "content_index": 0, "item_id": "msg_1",
                           "part": {"type": "output_text", "text": "", "annotations": []}}),
                ));
                for piece in ["Let me", " look."] {
                    deltas.push(("response.output_text.delta",
                        json!({"output_index": i, "content_index": 0, "item_id": "msg_1", "delta": piece})));
                }
            }
            _ => {
                empty["arguments"] = json!("");
                let arguments = item["arguments"].as_str().unwrap();
                let cut = arguments
                    .char_indices()
                    .nth(10)
                    .map_or(arguments.len(), |(at, _)| at);
                for piece in [&arguments[..cut], &arguments[cut..]] {
                    deltas.push((
                        "response.function_call_arguments.delta",
                        json!({"output_index": i, "item_id": item["id"], "delta": piece}),
                    ));
                }
            }
        }
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": i, "item": empty}),
        ));
        for (name, mut data) in deltas {
            data["type"] = json!(name);
            events.push((name, data));
        }
        if done {
            events.push((
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": i, "item": item}),
            ));
        }
    }
    let output = if done { items() } else { vec![] };
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": response("completed", output)}),
    ));
    for (n, (_, data)) in events.iter_mut().enumerate() {
        data["sequence_number"] = json!(n);
    }
    sse(&events)
}

fn expected_results() -> Value {
    json!([
        {"type": "function_call_output", "call_id": "call_1", "output": "one"},
        {"type": "function_call_output", "call_id": "call_2", "output": "twö →"},
        {"type": "function_call_output", "call_id": "call_3", "output": [
            {"type": "input_text", "text": "a red pixel"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
        ]},
        {"type": "function_call_output", "call_id": "call_4", "output": NOT_FOUND},
        {"type": "function_call_output", "call_id": "call_5", "output": CUT_ARGUMENTS}
    ])
}

#[test]
fn a_response_runs_as_a_batch_and_its_results_are_function_call_outputs() {
    let reply = read_reply(P, response("completed", items()).to_string().as_bytes()).unwrap();
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
    assert_eq!(reply.thinking, "Two echoes and a picture.");
    assert_eq!(
        reply.assistant,
        items(),
        "every output item goes back as it came"
    );
    assert_eq!(Value::Array(run(&reply)), expected_results());
}

#[test]
fn the_streamed_response_gives_the_same_reply_however_it_is_split() {
    let whole = read_reply(P, response("completed", items()).to_string().as_bytes()).unwrap();
    assert_eq!(read_stream_every_way(P, &streamed(true)), whole);
    // Without the done events and the final output, the deltas alone make the same items.
    assert_eq!(read_stream_every_way(P, &streamed(false)), whole);
    assert_eq!(Value::Array(run(&whole)), expected_results());
}

#[test]
fn strict_mode_nulls_are_absent_so_defaults_apply() {
    let body = response(
        "completed",
        vec![function_call(
            1,
            "count",
            r#"{"limit": null, "note": null}"#,
        )],
    );
    let reply = read_reply(P, body.to_string().as_bytes()).unwrap();
    assert!(
        reply.strict,
        "Responses function tools are strict unless declared otherwise"
    );
    strict_nulls_take_the_defaults(reply);
}

#[test]
fn what_cannot_be_read_is_named_with_the_provider_and_the_path() {
    let error = |body: &str| read_reply(P, body.as_bytes()).unwrap_err().to_string();
    let computer = response(
        "completed",
        vec![json!({"type": "computer_call", "id": "cu_1"})],
    );
    assert_eq!(
        error(&computer.to_string()),
        "cannot read the openai-responses reply at `output[0].type`: unknown output item type `computer_call`; pi-tools reads `message`, `reasoning`, `function_call`, `apply_patch_call` and `shell_call` items, and keeps those of hosted tools (web_search_call, file_search_call, code_interpreter_call, image_generation_call)"
    );
    let mut no_call_id = items();
    no_call_id[3].as_object_mut().unwrap().remove("call_id");
    assert_eq!(
        error(&response("completed", no_call_id).to_string()),
        "cannot read the openai-responses reply at `output[3].call_id`: missing; every reply of this kind has it"
    );
    let body = streamed(true);
    let before_completed = &body[..body.find("event: response.completed").unwrap()];
    assert_eq!(
        error(before_completed),
        "cannot read the openai-responses event stream: the stream ended before the reply did (no `response.completed` event): it was cut off; pass the whole body"
    );
    let failed = sse(&[(
        "response.failed",
        json!({"type": "response.failed", "response": {"status": "failed",
               "error": {"code": "server_error", "message": "The model failed."}}}),
    )]);
    assert_eq!(
        error(&failed),
        "cannot read the openai-responses event stream at `events[0]`: the response failed: The model failed."
    );
}
