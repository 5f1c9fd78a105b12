//! The request each provider gets from the same turn: path, headers and the exact body, with
//! the system prompt where that API takes it and the tools in the dialect its reply reader
//! goes with.

use pi_tools::dialect::{Dialect, tool_schema};
use pi_tools::provider::{ProviderRequest, Request};
use serde_json::{Value, json};
use support::FakeTool;

fn build(provider: Dialect, tools: &[Value], history: &[Value]) -> ProviderRequest {
    Request::new("m-1", history)
        .with_system("Be brief.")
        .with_tools(tools)
        .with_api_key("k-1")
        .build(provider)
        .unwrap()
}

/// A tool with one required and one optional parameter (the lean library has no built-ins).
fn read_tool() -> FakeTool {
    FakeTool::new("read").parameters(json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"]
    }))
}

#[test]
fn chat_completions_gets_the_system_prompt_as_the_first_message() {
    let tool = tool_schema(&read_tool(), Dialect::OpenAi).unwrap();
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "read");
    assert_eq!(tool["function"].get("strict"), None);
    let history = [json!({"role": "user", "content": "hi"})];
    let request = build(Dialect::OpenAi, std::slice::from_ref(&tool), &history);
    assert_eq!(request.path, "/chat/completions");
    assert_eq!(
        request.headers,
        [("Authorization", "Bearer k-1".to_owned())]
    );
    assert_eq!(
        request.body,
        json!({"model": "m-1",
               "messages": [{"role": "system", "content": "Be brief."}, history[0]],
               "tools": [tool]})
    );
}

#[test]
fn responses_gets_instructions_and_flat_strict_tools() {
    let tool = tool_schema(&read_tool(), Dialect::OpenAiResponses).unwrap();
    let keys: Vec<&str> = tool
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["type", "name", "description", "parameters", "strict"]
    );
    assert_eq!(
        (&tool["type"], &tool["strict"]),
        (&json!("function"), &json!(true))
    );
    // Strict: every property is required, optional ones nullable.
    assert_eq!(tool["parameters"]["additionalProperties"], false);
    let history = [json!({"role": "user", "content": "hi"})];
    let request = build(
        Dialect::OpenAiResponses,
        std::slice::from_ref(&tool),
        &history,
    );
    assert_eq!(request.path, "/responses");
    assert_eq!(
        request.headers,
        [("Authorization", "Bearer k-1".to_owned())]
    );
    assert_eq!(
        request.body,
        json!({"model": "m-1", "instructions": "Be brief.", "input": history, "tools": [tool]})
    );
}

#[test]
fn anthropic_gets_system_max_tokens_and_its_version() {
    let tool = tool_schema(&read_tool(), Dialect::Anthropic).unwrap();
    assert_eq!(tool["name"], "read");
    let history = [json!({"role": "user", "content": "hi"})];
    let request = Request::new("m-1", &history)
        .with_system("Be brief.")
        .with_tools(std::slice::from_ref(&tool))
        .with_api_key("k-1")
        .with_max_tokens(1000)
        .build(Dialect::Anthropic)
        .unwrap();
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(
        request.headers,
        [
            ("x-api-key", "k-1".to_owned()),
            ("anthropic-version", "2023-06-01".to_owned())
        ]
    );
    assert_eq!(
        request.body,
        json!({"model": "m-1", "max_tokens": 1000, "system": "Be brief.",
               "messages": history, "tools": [tool]})
    );
}

#[test]
fn gemini_gets_the_model_in_the_path_and_one_function_declarations() {
    let tool = tool_schema(&read_tool(), Dialect::Gemini).unwrap();
    let history = [json!({"role": "user", "parts": [{"text": "hi"}]})];
    let request = build(Dialect::Gemini, std::slice::from_ref(&tool), &history);
    assert_eq!(request.path, "/v1beta/models/m-1:generateContent");
    assert_eq!(request.headers, [("x-goog-api-key", "k-1".to_owned())]);
    assert_eq!(
        request.body,
        json!({"systemInstruction": {"parts": [{"text": "Be brief."}]},
               "contents": history,
               "tools": [{"functionDeclarations": [tool]}]})
    );
}

#[test]
fn no_tools_no_system_and_no_key_leave_their_fields_out() {
    let history = [json!({"role": "user", "content": "hi"})];
    for provider in Dialect::ALL.into_iter().filter(|d| d.has_replies()) {
        let request = Request::new("m-1", &history).build(provider).unwrap();
        assert_eq!(request.body.get("tools"), None, "{provider}");
        assert_eq!(request.body.get("system"), None, "{provider}");
        assert_eq!(request.body.get("instructions"), None, "{provider}");
        let auth = request
            .headers
            .iter()
            .filter(|(name, _)| *name != "anthropic-version")
            .count();
        assert_eq!(auth, 0, "{provider}");
    }
    let anthropic = Request::new("m-1", &history)
        .build(Dialect::Anthropic)
        .unwrap();
    assert_eq!(anthropic.body["max_tokens"], 4096);
}
