//! `[tool.edit] max_file_bytes` holds for the tools that stand for edit: a file over the
//! limit is refused by `apply_patch` and by the text editor's `str_replace` and `insert` in
//! edit's own words, and nothing is written.

use super::*;

#[tokio::test]
async fn the_native_editors_refuse_a_file_over_edits_limit_as_edit_does() {
    let dir = tempfile::tempdir().unwrap();
    let big = "x\n".repeat(50);
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    std::fs::write(dir.path().join("small.txt"), "s\n").unwrap();
    let config = format!("{NATIVE}\n[tool.edit]\nmax_file_bytes = 10\n");
    let tools = toolbox(dir.path(), &config);
    let patch = "*** Begin Patch\n*** Update File: small.txt\n@@\n-s\n+S\n\
*** Update File: big.txt\n@@\n-x\n+y\n*** End Patch\n";
    let calls = [
        pi_tools::ToolCall::new(
            "c1",
            "edit",
            json!({"path": "big.txt", "edits": [{"oldText": big, "newText": "y\n"}]}),
        ),
        pi_tools::ToolCall::new("c2", "apply_patch", json!({"patch": patch})),
        pi_tools::ToolCall::new(
            "c3",
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "big.txt", "old_str": big, "new_str": "y\n"}),
        ),
        pi_tools::ToolCall::new(
            "c4",
            "str_replace_based_edit_tool",
            json!({"command": "insert", "path": "big.txt", "insert_line": 0, "insert_text": "top"}),
        ),
    ];
    let outcome = pi_tools::execute_tool_calls(
        tools.tool_set(),
        &calls,
        &tools.runner_config(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await;
    let edit_says = "big.txt is larger than edit's limit of 10 bytes, so it was not read. \
Change it with bash (e.g. sed), or raise [tool.edit] max_file_bytes in the configuration.";
    let texts: Vec<String> = outcome.messages.iter().map(|m| m.text_content()).collect();
    assert!(outcome.messages.iter().all(|m| m.is_error), "{texts:#?}");
    assert_eq!(texts[0], edit_says);
    assert_eq!(
        texts[1],
        format!("{edit_says} Nothing was changed in any file.")
    );
    assert_eq!(texts[2], edit_says);
    assert_eq!(texts[3], edit_says);
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(read("big.txt"), big);
    assert_eq!(read("small.txt"), "s\n");
}
