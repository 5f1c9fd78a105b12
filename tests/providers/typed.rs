//! A tool with a typed result, called by a model: providers have no place for a structured
//! result in a tool result, so each gets the text (the value as compact JSON), and nothing
//! of the structured content leaks into the request.

use pi_tools::dialect::Dialect;
use pi_tools::provider::read_reply;
use serde_json::{Value, json};

use super::run;

fn anthropic() -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "tally", "input": {"text": "a b c"}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 2}
    })
}

fn openai() -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "tally", "arguments": "{\"text\": \"a b c\"}"}
            }]},
            "finish_reason": "tool_calls"
        }]
    })
}

#[test]
fn anthropic_and_openai_get_the_text_of_a_typed_result() {
    for (dialect, body) in [
        (Dialect::Anthropic, anthropic()),
        (Dialect::OpenAi, openai()),
    ] {
        let reply = read_reply(dialect, body.to_string().as_bytes()).expect("the reply reads");
        let results = run(&reply);
        let wire = serde_json::to_string(&results).expect("results serialise");
        assert!(wire.contains(r#"{\"words\":3}"#), "{dialect}: {wire}");
        assert!(!wire.contains("structured"), "{dialect}: {wire}");
    }
    let reply = read_reply(Dialect::Anthropic, anthropic().to_string().as_bytes())
        .expect("the reply reads");
    assert_eq!(
        run(&reply),
        vec![json!({"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": "toolu_01",
            "content": [{"type": "text", "text": "{\"words\":3}"}], "is_error": false
        }]})]
    );
}
