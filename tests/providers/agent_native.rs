//! The `agent` example with `--native` against a local scripted server for each family
//! that has native tools: three turns (a file created, then changed, with the family's own
//! tools, then an answer in text). The requests offer the family's tools (Anthropic's text
//! editor and bash, the Responses `apply_patch` and `shell`), and each result goes back in
//! the shape's own form.

#![cfg(feature = "cli")]

use serde_json::{Value, json};

use super::agent::converse;

#[tokio::test(flavor = "multi_thread")]
async fn a_native_session_over_anthropic_messages() {
    let message = |content: Value, stop: &str| {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted-model",
               "content": content, "stop_reason": stop, "stop_sequence": null,
               "usage": {"input_tokens": 1, "output_tokens": 1}})
    };
    let editor = |id: &str, input: Value| json!([{"type": "tool_use", "id": id, "name": "str_replace_based_edit_tool", "input": input}]);
    let replies = vec![
        message(
            editor(
                "toolu_1",
                json!({"command": "create", "path": "notes.txt", "file_text": "hello\n"}),
            ),
            "tool_use",
        ),
        message(
            editor(
                "toolu_2",
                json!({"command": "str_replace", "path": "notes.txt", "old_str": "hello", "new_str": "hello, world"}),
            ),
            "tool_use",
        ),
        message(json!([{"type": "text", "text": "Done."}]), "end_turn"),
    ];
    let env = [
        ("ANTHROPIC_BASE_URL", "http://localhost:PORT".to_owned()),
        ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
    ];
    let args = ["--native", "--provider", "anthropic", "Take a note"];
    let (requests, stdout, dir) = converse("anthropic-native", replies, &env, &args).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "hello, world\n"
    );
    assert_eq!(requests.len(), 3);
    for (_, _, body) in &requests {
        let tools = body["tools"].as_array().unwrap();
        assert!(tools.contains(
            &json!({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"})
        ));
        assert!(tools.contains(&json!({"type": "bash_20250124", "name": "bash"})));
        assert!(
            !tools
                .iter()
                .any(|t| t["name"] == "edit" || t["name"] == "write")
        );
        let system = body["system"].as_str().unwrap();
        assert!(system.contains("str_replace_based_edit_tool"), "{system}");
    }
    let last = &requests[2].2["messages"];
    assert_eq!(last[2]["content"][0]["type"], "tool_result");
    assert_eq!(last[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(last[4]["content"][0]["tool_use_id"], "toolu_2");
    assert_eq!(last[4]["content"][0]["is_error"], false);
    assert!(stdout.ends_with("assistant: Done.\n"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_native_session_over_responses() {
    let response = |output: Value| {
        json!({"id": "resp_1", "object": "response", "status": "completed", "model": "scripted-model",
               "output": output})
    };
    let patch = |id: &str, operation: Value| {
        json!([{"type": "apply_patch_call", "id": format!("apc_{id}"), "call_id": id,
                "status": "completed", "operation": operation}])
    };
    let replies = vec![
        response(patch(
            "call_1",
            json!({"type": "create_file", "path": "notes.txt", "diff": "+hello\n"}),
        )),
        response(json!([
            {"type": "apply_patch_call", "id": "apc_2", "call_id": "call_2", "status": "completed",
             "operation": {"type": "update_file", "path": "notes.txt", "diff": "@@\n-hello\n+hello, world\n"}},
            {"type": "shell_call", "id": "sh_3", "call_id": "call_3", "status": "completed",
             "action": {"commands": ["echo shell ran"], "timeout_ms": 10000, "max_output_length": 1000}}
        ])),
        response(
            json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}]),
        ),
    ];
    let env = [
        ("OPENAI_BASE_URL", "http://localhost:PORT/v1".to_owned()),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
    ];
    let args = ["--native", "--provider", "openai-responses", "Take a note"];
    let (requests, stdout, dir) = converse("responses-native", replies, &env, &args).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "hello, world\n"
    );
    assert_eq!(requests.len(), 3);
    for (_, _, body) in &requests {
        let tools = body["tools"].as_array().unwrap();
        assert!(tools.contains(&json!({"type": "apply_patch"})));
        assert!(tools.contains(&json!({"type": "shell", "environment": {"type": "local"}})));
        assert!(
            !tools
                .iter()
                .any(|t| t["name"] == "edit" || t["name"] == "bash")
        );
    }
    let input = requests[2].2["input"].as_array().unwrap().clone();
    let outputs: Vec<&Value> = input
        .iter()
        .filter(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
        .collect();
    assert_eq!(outputs.len(), 3);
    assert_eq!(outputs[0]["type"], "apply_patch_call_output");
    assert_eq!(outputs[0]["status"], "completed");
    assert_eq!(outputs[1]["call_id"], "call_2");
    assert_eq!(outputs[2]["type"], "shell_call_output");
    assert_eq!(
        outputs[2]["output"][0]["outcome"],
        json!({"type": "exit", "exit_code": 0})
    );
    assert!(
        outputs[2]["output"][0]["stdout"]
            .as_str()
            .unwrap()
            .contains("shell ran")
    );
    assert!(stdout.ends_with("assistant: Done.\n"), "{stdout}");
}
