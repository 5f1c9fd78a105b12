//! The wire JSON of events and messages matches the original's field names and round-trips.

use pi_tools::{ContentBlock, ToolCall, ToolEvent, ToolResult, ToolResultMessage, Usage};
use serde_json::{Value, json};

fn round_trip<T>(value: &T, expected: Value)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_value(value).unwrap();
    assert_eq!(json, expected);
    let back: T = serde_json::from_value(json).unwrap();
    assert_eq!(&back, value);
}

fn message() -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: "call_1".into(),
        tool_name: "read".into(),
        result: ToolResult {
            content: vec![
                ContentBlock::text("hello"),
                ContentBlock::image("aGk=", "image/png"),
            ],
            details: json!({"lines": 1}),
            ..ToolResult::default()
        },
        is_error: false,
        timestamp: 1_700_000_000_000,
    }
}

#[test]
fn content_blocks() {
    round_trip(
        &ContentBlock::text("hi"),
        json!({"type": "text", "text": "hi"}),
    );
    round_trip(
        &ContentBlock::image("AAAA", "image/jpeg"),
        json!({"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}),
    );
}

#[test]
fn result_message() {
    round_trip(
        &message(),
        json!({
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"}
            ],
            "details": {"lines": 1},
            "isError": false,
            "timestamp": 1_700_000_000_000u64
        }),
    );
}

#[test]
fn result_message_with_usage_and_added_tools() {
    let mut m = message();
    m.content = vec![];
    m.details = Value::Null;
    m.usage = Some(Usage {
        input: 10,
        output: 5,
        total_tokens: 15,
        ..Usage::default()
    });
    m.added_tool_names = vec!["grep".into()];
    m.is_error = true;
    round_trip(
        &m,
        json!({
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [],
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
            "addedToolNames": ["grep"],
            "isError": true,
            "timestamp": 1_700_000_000_000u64
        }),
    );
}

#[test]
fn events() {
    round_trip(
        &ToolEvent::ToolExecutionStart {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            args: json!({"command": "ls"}),
        },
        json!({"type": "tool_execution_start", "toolCallId": "c", "toolName": "bash", "args": {"command": "ls"}}),
    );
    round_trip(
        &ToolEvent::ToolExecutionUpdate {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            args: json!({"command": "ls"}),
            partial_result: ToolResult::text("a").into(),
        },
        json!({
            "type": "tool_execution_update", "toolCallId": "c", "toolName": "bash",
            "args": {"command": "ls"},
            "partialResult": {"content": [{"type": "text", "text": "a"}]}
        }),
    );
    round_trip(
        &ToolEvent::ToolExecutionEnd {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            result: ToolResult {
                terminate: true,
                added_tool_names: vec!["ls".into()],
                ..ToolResult::text("done").with_details(json!({"exitCode": 0}))
            }
            .into(),
            is_error: false,
        },
        json!({
            "type": "tool_execution_end", "toolCallId": "c", "toolName": "bash",
            "result": {
                "content": [{"type": "text", "text": "done"}],
                "details": {"exitCode": 0},
                "addedToolNames": ["ls"],
                "terminate": true
            },
            "isError": false
        }),
    );
    let m = message();
    let expected = serde_json::to_value(&m).unwrap();
    round_trip(
        &ToolEvent::MessageStart {
            message: m.clone().into(),
        },
        json!({"type": "message_start", "message": expected.clone()}),
    );
    round_trip(
        &ToolEvent::MessageEnd { message: m.into() },
        json!({"type": "message_end", "message": expected}),
    );
}

#[test]
fn tool_calls() {
    round_trip(
        &ToolCall::new("id1", "edit", json!({"path": "a"})),
        json!({"id": "id1", "name": "edit", "arguments": {"path": "a"}}),
    );
    let missing: ToolCall = serde_json::from_value(json!({"id": "x", "name": "ls"})).unwrap();
    assert_eq!(missing.arguments, json!({}));
}
