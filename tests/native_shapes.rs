//! The providers' native tool shapes (`[tools] shapes = "native"`): the requests offer each
//! family its trained tools, the replies' native calls run as the built-ins through the
//! runner (validation, policy, hooks, mutation queue, sandbox), and the results go back in
//! each shape's own form.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::Arc;

use pi_tools::config::Config;
use pi_tools::dialect::Dialect;
use pi_tools::env::WithEnv;
use pi_tools::provider::{Reply, read_json};
use pi_tools::toolbox::Toolbox;
use pi_tools::{CollectingSink, Extensions, ToolResultMessage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

mod limits;
mod v4a_proptest;

const NATIVE: &str = support::NATIVE_SHAPES_CONFIG;

fn toolbox(cwd: &Path, text: &str) -> Toolbox {
    let registry = pi_tools::Registry::from_inventory().expect("the built-in tools register");
    let registered: Vec<_> = registry.iter().cloned().collect();
    let config = Config::parse(text, "pi-tools.toml", &registered).expect("valid");
    let env = config.local_env(cwd).expect("the environment builds");
    Toolbox::new(
        registered,
        &config,
        Extensions::new().with_env(Arc::new(env)),
    )
}

/// Runs a reply's calls with the toolbox; the results as the next request's entries.
async fn run(toolbox: &Toolbox, reply: &Reply) -> (Vec<ToolResultMessage>, Vec<Value>) {
    let outcome = reply
        .run(
            toolbox.tool_set(),
            &toolbox.runner_config(),
            &CancellationToken::new(),
            &CollectingSink::new(),
        )
        .await;
    let results = reply.results(&outcome.messages);
    (outcome.messages, results)
}

fn anthropic(blocks: Value) -> Reply {
    read_json(
        Dialect::Anthropic,
        &json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": blocks}),
    )
    .expect("the reply reads")
}

fn responses(items: Value) -> Reply {
    read_json(
        Dialect::OpenAiResponses,
        &json!({"id": "resp_1", "object": "response", "status": "completed", "output": items}),
    )
    .expect("the reply reads")
}

fn editor(id: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": "str_replace_based_edit_tool", "input": input})
}

fn text_of(block: &Value) -> String {
    block["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn requests_offer_each_family_its_trained_tools() {
    let dir = tempfile::tempdir().unwrap();
    let native = toolbox(dir.path(), NATIVE);
    let anthropic = native.schemas(Dialect::Anthropic).unwrap();
    assert!(
        anthropic.contains(
            &json!({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"})
        )
    );
    assert!(anthropic.contains(&json!({"type": "bash_20250124", "name": "bash"})));
    let names: Vec<&str> = anthropic
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["read", "bash", "ls", "str_replace_based_edit_tool"]);

    let responses = native.schemas(Dialect::OpenAiResponses).unwrap();
    assert!(responses.contains(&json!({"type": "apply_patch"})));
    assert!(responses.contains(&json!({"type": "shell", "environment": {"type": "local"}})));
    let names: Vec<&str> = responses
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["read", "ls"]);

    // A family without native tools keeps the pi-tools shapes, and nothing more.
    let chat = native.schemas(Dialect::OpenAi).unwrap();
    let names: Vec<&str> = chat
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(names, ["read", "bash", "edit", "write", "ls"]);
    let listed = native.dialect_schemas(Dialect::Anthropic);
    assert_eq!(listed.schemas.len(), anthropic.len());

    // The default stays the pi-tools shapes.
    let plain = toolbox(dir.path(), &NATIVE.replace("shapes = \"native\"", ""));
    let schemas = plain.schemas(Dialect::Anthropic).unwrap();
    let names: Vec<&str> = schemas.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["read", "bash", "edit", "write", "ls"]);
}

#[test]
fn the_prompt_names_the_tools_each_family_sees() {
    let dir = tempfile::tempdir().unwrap();
    let native = toolbox(dir.path(), NATIVE);
    let anthropic = native.prompt_for(Dialect::Anthropic).to_string();
    assert!(
        anthropic.contains("str_replace_based_edit_tool"),
        "{anthropic}"
    );
    assert!(!anthropic.contains("- edit:"), "{anthropic}");
    assert!(!anthropic.contains("apply_patch"), "{anthropic}");
    let responses = native.prompt_for(Dialect::OpenAiResponses).to_string();
    assert!(responses.contains("apply_patch"), "{responses}");
    assert!(
        !responses.contains("str_replace_based_edit_tool"),
        "{responses}"
    );
    let gemini = native.prompt_for(Dialect::Gemini).to_string();
    assert!(gemini.contains("- edit:"), "{gemini}");
    assert!(!gemini.contains("apply_patch"), "{gemini}");
}

#[tokio::test]
async fn str_replace_of_a_text_found_twice_is_refused_as_edit_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x = 1\nx = 1\n").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let reply = anthropic(json!([editor(
        "toolu_1",
        json!({"command": "str_replace", "path": "a.txt", "old_str": "x = 1", "new_str": "x = 2"})
    )]));
    let (messages, results) = run(&tools, &reply).await;
    assert!(messages[0].is_error);
    let block = &results[0]["content"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["is_error"], true);
    assert_eq!(block["tool_use_id"], "toolu_1");
    let said = text_of(block);
    assert!(
        said.starts_with("old_str matches 2 places in a.txt"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "x = 1\nx = 1\n"
    );

    // edit itself says the same of the same file.
    let edit = pi_tools::ToolCall::new(
        "c",
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
    );
    let outcome = pi_tools::execute_tool_calls(
        tools.tool_set(),
        &[edit],
        &tools.runner_config(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await;
    assert_eq!(
        outcome.messages[0]
            .text_content()
            .replace("oldText", "old_str"),
        messages[0].text_content()
    );
}

#[tokio::test]
async fn view_of_a_directory_lists_it_and_view_of_a_file_reads_its_range() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "one\ntwo\nthree\nfour\n").unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let reply = anthropic(json!([
        editor("toolu_1", json!({"command": "view", "path": "src"})),
        editor(
            "toolu_2",
            json!({"command": "view", "path": "src/lib.rs", "view_range": [2, 3]})
        ),
    ]));
    let (messages, results) = run(&tools, &reply).await;
    assert!(!messages[0].is_error, "{}", messages[0].text_content());
    let listing = text_of(&results[0]["content"][0]);
    assert!(
        listing.contains("lib.rs") && listing.contains("main.rs"),
        "{listing}"
    );
    let range = text_of(&results[0]["content"][1]);
    assert!(range.contains("two") && range.contains("three"), "{range}");
    assert!(!range.contains("one") && !range.contains("four"), "{range}");
}

#[tokio::test]
async fn insert_at_line_zero_and_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "first\r\nlast").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let reply = anthropic(json!([editor(
        "toolu_1",
        json!({"command": "insert", "path": "a.txt", "insert_line": 0, "insert_text": "top\n"})
    )]));
    let (messages, _) = run(&tools, &reply).await;
    assert!(!messages[0].is_error, "{}", messages[0].text_content());
    let reply = anthropic(json!([editor(
        "toolu_2",
        json!({"command": "insert", "path": "a.txt", "insert_line": 3, "insert_text": "bottom"})
    )]));
    let (messages, _) = run(&tools, &reply).await;
    assert!(!messages[0].is_error, "{}", messages[0].text_content());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "top\r\nfirst\r\nlast\r\nbottom\r\n"
    );
    // Past the end is refused, saying how many lines there are.
    let reply = anthropic(json!([editor(
        "toolu_3",
        json!({"command": "insert", "path": "a.txt", "insert_line": 9, "insert_text": "x"})
    )]));
    let (messages, _) = run(&tools, &reply).await;
    assert!(messages[0].is_error);
    assert!(
        messages[0].text_content().contains("has 4 lines"),
        "{}",
        messages[0].text_content()
    );
}

#[tokio::test]
async fn create_writes_and_policy_rules_for_edit_apply_to_the_text_editor() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("locked")).unwrap();
    std::fs::write(dir.path().join("locked/a.txt"), "keep\n").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let reply = anthropic(json!([
        editor(
            "toolu_1",
            json!({"command": "create", "path": "new/b.txt", "file_text": "hello\n"})
        ),
        editor(
            "toolu_2",
            json!({"command": "str_replace", "path": "locked/a.txt", "old_str": "keep", "new_str": "gone"})
        ),
    ]));
    let (messages, _) = run(&tools, &reply).await;
    assert!(!messages[0].is_error, "{}", messages[0].text_content());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new/b.txt")).unwrap(),
        "hello\n"
    );
    assert!(messages[1].is_error);
    assert!(
        messages[1].text_content().contains("The locked directory"),
        "{}",
        messages[1].text_content()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("locked/a.txt")).unwrap(),
        "keep\n"
    );
}

#[tokio::test]
async fn native_bash_under_a_policy_deny_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    // Anthropic's bash_20250124.
    let reply = anthropic(json!([
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "touch denied"}},
        {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"restart": true}},
    ]));
    let (messages, results) = run(&tools, &reply).await;
    assert!(messages[0].is_error);
    assert!(
        messages[0]
            .text_content()
            .contains("Nothing may be called denied.")
    );
    assert!(messages[1].is_error);
    assert!(messages[1].text_content().contains("fresh shell"));
    assert_eq!(results[0]["content"][0]["is_error"], true);
    // The history keeps the call as the model sent it.
    assert_eq!(
        reply.assistant[0]["content"][1]["input"],
        json!({"restart": true})
    );
    // The Responses shell.
    let reply = responses(json!([{
        "type": "shell_call", "id": "sh_1", "call_id": "call_1", "status": "completed",
        "action": {"commands": ["echo ok", "touch denied"], "timeout_ms": 5000, "max_output_length": 100},
    }]));
    let (messages, results) = run(&tools, &reply).await;
    assert!(messages[0].is_error);
    assert_eq!(results[0]["type"], "shell_call_output");
    assert_eq!(results[0]["call_id"], "call_1");
    assert_eq!(results[0]["max_output_length"], 100);
    assert!(
        results[0]["output"][0]["stdout"]
            .as_str()
            .unwrap()
            .contains("Nothing may be called denied.")
    );
    assert!(!dir.path().join("denied").exists());
}

#[tokio::test]
async fn the_responses_shell_answers_with_its_own_output_item() {
    let dir = tempfile::tempdir().unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let reply = responses(json!([{
        "type": "shell_call", "id": "sh_1", "call_id": "call_1", "status": "completed",
        "action": {"commands": ["echo one", "exit 3"]},
    }]));
    let (_, results) = run(&tools, &reply).await;
    assert_eq!(results[0]["type"], "shell_call_output");
    assert_eq!(
        results[0]["output"][0]["outcome"],
        json!({"type": "exit", "exit_code": 3})
    );
    assert!(
        results[0]["output"][0]["stdout"]
            .as_str()
            .unwrap()
            .contains("one")
    );
    assert_eq!(reply.assistant[0]["type"], "shell_call");
}

const TWO_FILES: &str = "*** Begin Patch\n\
*** Update File: a.txt\n\
@@\n alpha\n-beta\n+BETA\n\
*** Update File: b.txt\n\
@@\n one\n-missing line\n+two\n\
*** End Patch\n";

#[tokio::test]
async fn a_multi_file_patch_with_one_bad_hunk_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "one\ntwo\n").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let call = pi_tools::ToolCall::new("c1", "apply_patch", json!({"patch": TWO_FILES}));
    let outcome = pi_tools::execute_tool_calls(
        tools.tool_set(),
        &[call],
        &tools.runner_config(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await;
    let said = outcome.messages[0].text_content();
    assert!(outcome.messages[0].is_error, "{said}");
    assert!(said.contains("Hunk 1 of b.txt"), "{said}");
    assert!(said.contains("Nothing was changed in any file"), "{said}");
    assert!(said.contains("resend"), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "one\ntwo\n"
    );

    // Fixed, it applies to both, and adds, moves and deletes.
    let good = TWO_FILES.replace("-missing line\n+two", "-two\n+TWO").replace(
        "*** End Patch\n",
        "*** Add File: c/new.txt\n+fresh\n*** Delete File: old.txt\n*** Update File: m.txt\n*** Move to: moved/m.txt\n@@\n-m\n+M\n*** End Patch\n",
    );
    std::fs::write(dir.path().join("old.txt"), "bye\n").unwrap();
    std::fs::write(dir.path().join("m.txt"), "m\n").unwrap();
    let call = pi_tools::ToolCall::new("c2", "apply_patch", json!({"patch": good}));
    let outcome = pi_tools::execute_tool_calls(
        tools.tool_set(),
        &[call],
        &tools.runner_config(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await;
    assert!(
        !outcome.messages[0].is_error,
        "{}",
        outcome.messages[0].text_content()
    );
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(read("a.txt"), "alpha\nBETA\n");
    assert_eq!(read("b.txt"), "one\nTWO\n");
    assert_eq!(read("c/new.txt"), "fresh\n");
    assert_eq!(read("moved/m.txt"), "M\n");
    assert!(!dir.path().join("old.txt").exists());
    assert!(!dir.path().join("m.txt").exists());
}

#[test]
fn shapes_can_be_native_for_one_family_only() {
    let dir = tempfile::tempdir().unwrap();
    let names = |tools: &Toolbox, dialect: Dialect| -> Vec<String> {
        tools
            .schemas(dialect)
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or_else(|| t["type"].as_str())
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    let anthropic_only = toolbox(
        dir.path(),
        &NATIVE.replace(
            "shapes = \"native\"",
            "shapes = { anthropic = \"native\", openai-responses = \"pi-tools\" }",
        ),
    );
    assert_eq!(
        names(&anthropic_only, Dialect::Anthropic),
        ["read", "bash", "ls", "str_replace_based_edit_tool"]
    );
    assert_eq!(
        names(&anthropic_only, Dialect::OpenAiResponses),
        ["read", "bash", "edit", "write", "ls"]
    );
    assert_eq!(
        names(&anthropic_only, Dialect::Gemini),
        ["read", "bash", "edit", "write", "ls"]
    );
    let responses_only = toolbox(
        dir.path(),
        &NATIVE.replace(
            "shapes = \"native\"",
            "shapes = { openai-responses = \"native\" }",
        ),
    );
    assert_eq!(
        names(&responses_only, Dialect::Anthropic),
        ["read", "bash", "edit", "write", "ls"]
    );
    assert_eq!(
        names(&responses_only, Dialect::OpenAiResponses),
        ["read", "shell", "ls", "apply_patch"]
    );
    // The prompt's line on trained tools goes to the native family only.
    let trained = |tools: &Toolbox, dialect: Dialect| {
        tools
            .prompt_for(dialect)
            .guidelines
            .iter()
            .any(|g| g.contains("you were trained on"))
    };
    assert!(trained(&responses_only, Dialect::OpenAiResponses));
    assert!(!trained(&responses_only, Dialect::Anthropic));
}

#[tokio::test]
async fn a_replys_apply_patch_calls_apply_all_or_nothing_and_answer_in_their_own_items() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    std::fs::write(dir.path().join("gone.py"), "x\n").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let good = json!([
        {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_1", "status": "completed",
         "operation": {"type": "update_file", "path": "a.py", "diff": "@@ def f():\n-    return 1\n+    return 2\n"}},
        {"type": "apply_patch_call", "id": "apc_2", "call_id": "call_2", "status": "completed",
         "operation": {"type": "create_file", "path": "b.py", "diff": "+print('b')\n"}},
        {"type": "apply_patch_call", "id": "apc_3", "call_id": "call_3", "status": "completed",
         "operation": {"type": "delete_file", "path": "gone.py"}},
    ]);
    let mut bad = good.clone();
    bad.as_array_mut().unwrap().push(
        json!({"type": "apply_patch_call", "id": "apc_4", "call_id": "call_4", "status": "completed",
         "operation": {"type": "update_file", "path": "a.py", "diff": "@@\n-not there\n+x\n"}}),
    );

    // One item's hunk does not match: no item's file changes, and every item says so.
    let (messages, results) = run(&tools, &responses(bad)).await;
    let output = |i: usize| results[i]["output"].as_str().unwrap().to_owned();
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result["type"], "apply_patch_call_output");
        assert_eq!(result["call_id"], format!("call_{}", i + 1));
        assert_eq!(result["status"], "failed", "{}", output(i));
        // The transcript says what the wire says.
        assert!(messages[i].is_error);
        assert_eq!(messages[i].text_content(), output(i));
    }
    assert!(
        output(3).starts_with("Hunk 1 of a.py (line 1 of its diff) could not be applied:"),
        "{}",
        output(3)
    );
    assert!(
        output(3).ends_with(
            "The 3 other items were not applied either: the reply's apply_patch_call items are applied all or nothing. Resend all 4 of them, this one corrected."
        ),
        "{}",
        output(3)
    );
    for i in 0..3 {
        assert_eq!(
            output(i),
            "Not applied: the reply's apply_patch_call items are applied all or nothing, and the item of call call_4 (its operation on a.py) could not be applied; see its output. Nothing was changed; resend this item with the corrected one."
        );
    }
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).ok();
    assert_eq!(read("a.py").as_deref(), Some("def f():\n    return 1\n"));
    assert_eq!(read("b.py"), None);
    assert_eq!(read("gone.py").as_deref(), Some("x\n"));

    // Resent without the bad item, they apply together, each answered with its own file.
    let (messages, results) = run(&tools, &responses(good)).await;
    let said: Vec<&str> = results
        .iter()
        .map(|r| r["output"].as_str().unwrap())
        .collect();
    assert_eq!(
        said,
        [
            "Applied: updated a.py (1 hunk). The reply's 3 apply_patch_call items were applied together, all or nothing.",
            "Applied: added b.py. The reply's 3 apply_patch_call items were applied together, all or nothing.",
            "Applied: deleted gone.py. The reply's 3 apply_patch_call items were applied together, all or nothing.",
        ]
    );
    assert!(results.iter().all(|r| r["status"] == "completed"));
    assert!(messages[1..].iter().all(|m| !m.is_error));
    assert_eq!(read("a.py").as_deref(), Some("def f():\n    return 2\n"));
    assert_eq!(read("b.py").as_deref(), Some("print('b')\n"));
    assert_eq!(read("gone.py"), None);
}

#[tokio::test]
async fn an_edit_deny_on_one_items_file_refuses_every_item_of_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("locked")).unwrap();
    std::fs::write(dir.path().join("locked/a.txt"), "a\n").unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let reply = responses(json!([
        {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_1", "status": "completed",
         "operation": {"type": "create_file", "path": "free.txt", "diff": "+free\n"}},
        {"type": "apply_patch_call", "id": "apc_2", "call_id": "call_2", "status": "completed",
         "operation": {"type": "update_file", "path": "locked/a.txt", "diff": "@@\n-a\n+b\n"}},
    ]));
    let (_, results) = run(&tools, &reply).await;
    for result in &results {
        assert_eq!(result["status"], "failed");
        let output = result["output"].as_str().unwrap();
        assert!(
            output.starts_with("Not applied: the reply's 2 apply_patch_call items are applied together, all or nothing, and they were refused:")
                && output.contains("The locked directory is a person's to change."),
            "{output}"
        );
    }
    assert!(!dir.path().join("free.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("locked/a.txt")).unwrap(),
        "a\n"
    );
}

#[tokio::test]
async fn a_patch_outside_the_roots_and_under_an_edit_deny_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("locked")).unwrap();
    std::fs::write(work.join("locked/a.txt"), "a\n").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "o\n").unwrap();
    let config = format!("{NATIVE}\n[paths]\nallowed_roots = [\".\"]\n");
    let tools = toolbox(&work, &config);
    let patch = |body: &str| json!({"patch": format!("*** Begin Patch\n{body}*** End Patch\n")});
    let calls = [
        pi_tools::ToolCall::new(
            "c1",
            "apply_patch",
            patch("*** Update File: locked/a.txt\n@@\n-a\n+b\n"),
        ),
        pi_tools::ToolCall::new(
            "c2",
            "apply_patch",
            patch("*** Update File: ../outside.txt\n@@\n-o\n+p\n"),
        ),
        pi_tools::ToolCall::new(
            "c3",
            "apply_patch",
            patch("*** Delete File: ../outside.txt\n"),
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
    assert!(outcome.messages.iter().all(|m| m.is_error));
    assert!(
        outcome.messages[0]
            .text_content()
            .contains("The locked directory")
    );
    assert!(
        outcome.messages[1]
            .text_content()
            .contains("outside the allowed"),
        "{}",
        outcome.messages[1].text_content()
    );
    assert!(
        outcome.messages[2]
            .text_content()
            .contains("outside the allowed"),
        "{}",
        outcome.messages[2].text_content()
    );
    assert_eq!(
        std::fs::read_to_string(work.join("locked/a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("outside.txt")).unwrap(),
        "o\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn patches_sharing_files_in_opposite_orders_never_wait_on_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let tools = toolbox(dir.path(), NATIVE);
    let add = |first: &str, second: &str, text: &str| {
        json!({"patch": format!(
            "*** Begin Patch\n*** Add File: {first}\n+{text}\n*** Add File: {second}\n+{text}\n*** End Patch\n"
        )})
    };
    for round in 0..20 {
        let calls = [
            pi_tools::ToolCall::new("c1", "apply_patch", add("a.txt", "b.txt", "one")),
            pi_tools::ToolCall::new("c2", "apply_patch", add("b.txt", "a.txt", "two")),
            pi_tools::ToolCall::new("c3", "apply_patch", add("a.txt", "b.txt", "three")),
        ];
        let (config, cancel, sink) = (
            tools.runner_config(),
            CancellationToken::new(),
            CollectingSink::new(),
        );
        let run = pi_tools::execute_tool_calls(tools.tool_set(), &calls, &config, &cancel, &sink);
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(20), run)
            .await
            .unwrap_or_else(|_| panic!("round {round}: the patches waited on each other"));
        assert!(outcome.messages.iter().all(|m| !m.is_error));
        // Each patch is applied whole: both files hold the same patch's text.
        let a = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
        let b = std::fs::read_to_string(dir.path().join("b.txt")).unwrap();
        assert_eq!(a, b, "round {round}");
    }
}

/// An event stream's body from `(event, data)` pairs.
fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect::<String>()
        .into_bytes()
}

#[test]
fn streamed_native_calls_are_read() {
    // Responses: the items come whole in their done events; the diff's own delta events
    // pass.
    let call = json!({"type": "apply_patch_call", "id": "apc_1", "call_id": "call_1", "status": "completed",
                      "operation": {"type": "update_file", "path": "a.txt", "diff": "@@\n-a\n+b\n"}});
    let shell = json!({"type": "shell_call", "id": "sh_1", "call_id": "call_2", "status": "completed",
                       "action": {"commands": ["ls"]}});
    let body = sse(&[
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_1", "status": "in_progress",
                     "operation": {"type": "update_file", "path": "a.txt", "diff": ""}}}),
        ),
        (
            "response.apply_patch_call_operation_diff.delta",
            json!({"type": "response.apply_patch_call_operation_diff.delta", "output_index": 0, "delta": "@@\n-a\n+b\n"}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": call}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 1, "item": shell}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": []}}),
        ),
    ]);
    let reply =
        pi_tools::provider::read_reply(Dialect::OpenAiResponses, &body).expect("the stream reads");
    assert_eq!(reply.calls.len(), 2);
    assert_eq!(reply.calls[0].name, "apply_patch");
    assert!(
        reply.calls[0].arguments["patch"]
            .as_str()
            .unwrap()
            .contains("*** Update File: a.txt\n@@\n-a\n+b\n")
    );
    assert_eq!(reply.calls[1].name, "bash");
    assert_eq!(reply.calls[1].arguments, json!({"command": "ls"}));
    assert_eq!(reply.assistant, vec![call, shell]);

    // Anthropic: the text editor's input in pieces.
    let body = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "str_replace_based_edit_tool", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"view\", "}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "\"path\": \"src\"}"}}),
        ),
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
    let reply =
        pi_tools::provider::read_reply(Dialect::Anthropic, &body).expect("the stream reads");
    assert_eq!(reply.calls[0].name, "str_replace_based_edit_tool");
    assert_eq!(
        reply.calls[0].arguments,
        json!({"command": "view", "path": "src"})
    );
}

#[test]
fn the_catalog_says_which_shape_each_family_gets() {
    let dir = tempfile::tempdir().unwrap();
    let native = toolbox(dir.path(), NATIVE);
    let catalog = native.catalog(false);
    let shapes = |name: &str| {
        catalog
            .tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.shapes.clone())
            .unwrap()
    };
    assert_eq!(
        shapes("edit"),
        [
            "anthropic: not offered (a native tool stands for it)",
            "openai-responses: not offered (a native tool stands for it)"
        ]
    );
    assert_eq!(
        shapes("bash"),
        [
            "anthropic: as its native `bash_20250124`",
            "openai-responses: as its native `shell`"
        ]
    );
    assert!(shapes("read").is_empty());
    assert!(
        catalog
            .to_markdown()
            .contains("- **Shape:** anthropic: as its native `text_editor_20250728`")
    );
    let plain = toolbox(dir.path(), &NATIVE.replace("shapes = \"native\"", ""));
    assert!(
        plain
            .catalog(false)
            .tools
            .iter()
            .all(|t| t.shapes.is_empty())
    );
}

#[test]
fn write_without_edit_keeps_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let config = NATIVE.replace(
        "active = [\"read\", \"bash\", \"edit\", \"write\", \"ls\"]",
        "active = [\"read\", \"write\"]",
    );
    let tools = toolbox(dir.path(), &config);
    for dialect in [Dialect::Anthropic, Dialect::OpenAiResponses] {
        let schemas = tools.schemas(dialect).unwrap();
        assert_eq!(schemas.len(), 2, "{dialect}: {schemas:?}");
        assert!(schemas.iter().any(|t| t["name"] == "write"), "{dialect}");
    }
    assert!(tools.tool_set().get("apply_patch").is_none());
}
