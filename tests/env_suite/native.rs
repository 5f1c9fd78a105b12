//! The tools that serve the providers' native shapes (Anthropic's text editor, the V4A
//! `apply_patch`) over SSH: the same transcripts and files as on this machine.

use super::*;
use pi_tools::dialect::Dialect;

const BAD: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n\
*** Update File: b.txt\n@@\n-missing\n+x\n*** End Patch\n";

const GOOD: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n\
*** Add File: new/c.txt\n+fresh\n*** Delete File: gone.txt\n\
*** Update File: m.txt\n*** Move to: moved/m.txt\n@@\n-m\n+M\n*** End Patch\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_shape_tools_behave_the_same_everywhere() {
    let envs = Envs::new();
    let editor = |input: Value| ("str_replace_based_edit_tool", input);
    let out = envs
        .check(
            files(&[
                ("a.txt", "alpha\nbeta\n"),
                ("b.txt", "one\ntwo\n"),
                ("gone.txt", "bye\n"),
                ("m.txt", "m\n"),
                ("twice.txt", "x = 1\nx = 1\n"),
                ("lines.txt", "first\r\nlast"),
                ("src/lib.rs", "one\ntwo\nthree\n"),
            ]),
            &[
                editor(json!({"command": "view", "path": "src"})),
                editor(json!({"command": "view", "path": "src/lib.rs", "view_range": [2, 3]})),
                editor(json!({"command": "str_replace", "path": "twice.txt", "old_str": "x = 1", "new_str": "x = 2"})),
                editor(json!({"command": "insert", "path": "lines.txt", "insert_line": 0, "insert_text": "top"})),
                editor(json!({"command": "insert", "path": "lines.txt", "insert_line": 3, "insert_text": "bottom"})),
                editor(json!({"command": "create", "path": "made/new.txt", "file_text": "made\n"})),
                ("apply_patch", json!({"patch": BAD})),
                ("apply_patch", json!({"patch": GOOD})),
            ],
        )
        .await;
    assert!(out.contains("a.txt (644): \"alpha\\nBETA\\n\""), "{out}");
    assert!(out.contains("b.txt (644): \"one\\ntwo\\n\""), "{out}");
    assert!(out.contains("Hunk 1 of b.txt"), "{out}");
    assert!(out.contains("new/c.txt (644): \"fresh\\n\""), "{out}");
    assert!(out.contains("moved/m.txt (644): \"M\\n\""), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("gone.txt")), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("m.txt")), "{out}");
    assert!(
        out.contains("twice.txt (644): \"x = 1\\nx = 1\\n\""),
        "{out}"
    );
    assert!(
        out.contains("lines.txt (644): \"top\\r\\nfirst\\r\\nlast\\r\\nbottom\\r\\n\""),
        "{out}"
    );
    assert!(out.contains("made/new.txt (644): \"made\\n\""), "{out}");
}

/// A toolbox with the native shapes and a policy that denies one command and one directory,
/// working in `env`.
fn native_toolbox(env: Arc<dyn ExecutionEnv>) -> pi_tools::toolbox::Toolbox {
    const CONFIG: &str = support::NATIVE_SHAPES_CONFIG;
    let registry = Registry::from_inventory().expect("registry");
    let registered: Vec<_> = registry.iter().cloned().collect();
    let config =
        pi_tools::config::Config::parse(CONFIG, "pi-tools.toml", &registered).expect("valid");
    pi_tools::toolbox::Toolbox::new(
        registered,
        &config,
        pi_tools::Extensions::new().with_env(env),
    )
}

/// Runs each provider reply (`dialect`, its JSON) through [`native_toolbox`] in `env`, one
/// after another; the transcript lists each result message and the entries the results
/// make for the next request.
async fn run_replies(env: Arc<dyn ExecutionEnv>, replies: &[(Dialect, Value)]) -> String {
    let toolbox = native_toolbox(env);
    let mut transcript = String::new();
    for (dialect, body) in replies {
        let reply = pi_tools::provider::read_json(*dialect, body).expect("the reply reads");
        let outcome = reply
            .run(
                toolbox.tool_set(),
                &toolbox.runner_config(),
                &CancellationToken::new(),
                &NoopSink,
            )
            .await;
        for message in &outcome.messages {
            transcript.push_str(&format!(
                "[{}] {} {}: {}\n",
                if message.is_error { "error" } else { "ok" },
                message.tool_call_id,
                message.tool_name,
                message.text_content()
            ));
        }
        for entry in reply.results(&outcome.messages) {
            transcript.push_str(&format!("=> {entry}\n"));
        }
    }
    transcript
}

fn anthropic_reply(blocks: Value) -> (Dialect, Value) {
    (
        Dialect::Anthropic,
        json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": blocks}),
    )
}

fn responses_reply(items: Value) -> (Dialect, Value) {
    (
        Dialect::OpenAiResponses,
        json!({"id": "resp_1", "object": "response", "status": "completed", "output": items}),
    )
}

fn patch_item(id: &str, operation: Value) -> Value {
    json!({"type": "apply_patch_call", "id": format!("apc_{id}"), "call_id": id,
           "status": "completed", "operation": operation})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_replies_give_the_same_transcripts_everywhere() {
    let envs = Envs::new();
    let replies = [
        // A native bash call under a policy deny runs nothing, from either family; an
        // allowed one runs.
        anthropic_reply(json!([
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "touch denied"}},
            {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"command": "echo hi > made.txt && cat made.txt"}},
        ])),
        responses_reply(json!([
            {"type": "shell_call", "id": "sh_1", "call_id": "call_sh1", "status": "completed",
             "action": {"commands": ["touch denied"]}},
            {"type": "shell_call", "id": "sh_2", "call_id": "call_sh2", "status": "completed",
             "action": {"commands": ["echo one", "echo two"]}},
        ])),
        // A reply's patch items with one bad hunk: no file changes, every item says why.
        responses_reply(json!([
            patch_item(
                "p1",
                json!({"type": "update_file", "path": "a.txt", "diff": "@@\n alpha\n-beta\n+BETA\n"})
            ),
            patch_item(
                "p2",
                json!({"type": "create_file", "path": "new/c.txt", "diff": "+fresh\n"})
            ),
            patch_item(
                "p3",
                json!({"type": "update_file", "path": "b.txt", "diff": "@@\n-missing\n+x\n"})
            ),
        ])),
        // An item on a denied path refuses them all.
        responses_reply(json!([
            patch_item("p4", json!({"type": "delete_file", "path": "gone.txt"})),
            patch_item(
                "p5",
                json!({"type": "update_file", "path": "locked/l.txt", "diff": "@@\n-l\n+L\n"})
            ),
        ])),
        // Resent right, they apply together.
        responses_reply(json!([
            patch_item(
                "p6",
                json!({"type": "update_file", "path": "a.txt", "diff": "@@\n alpha\n-beta\n+BETA\n"})
            ),
            patch_item(
                "p7",
                json!({"type": "create_file", "path": "new/c.txt", "diff": "+fresh\n"})
            ),
            patch_item("p8", json!({"type": "delete_file", "path": "gone.txt"})),
        ])),
    ];
    let out = envs
        .check_with(
            files(&[
                ("a.txt", "alpha\nbeta\n"),
                ("b.txt", "one\ntwo\n"),
                ("gone.txt", "bye\n"),
                ("locked/l.txt", "l\n"),
            ]),
            |env| run_replies(env, &replies),
        )
        .await;
    // Nothing was called denied, and the denials say why.
    assert!(!out.lines().any(|l| l.starts_with("denied")), "{out}");
    assert_eq!(
        out.matches("Nothing may be called denied.").count(),
        4,
        "{out}"
    );
    assert!(out.contains("made.txt (644): \"hi\\n\""), "{out}");
    assert!(out.contains("[ok] call_sh2 bash: one\ntwo"), "{out}");
    // The bad reply changed nothing; the denied one neither; the good one everything.
    assert!(
        out.contains("[error] p3 apply_patch: Hunk 1 of b.txt (line 1 of its diff)"),
        "{out}"
    );
    assert!(
        out.contains("the item of call p3 (its operation on b.txt)"),
        "{out}"
    );
    assert!(
        out.contains("The locked directory is a person's to change."),
        "{out}"
    );
    assert!(out.contains("locked/l.txt (644): \"l\\n\""), "{out}");
    assert!(out.contains("b.txt (644): \"one\\ntwo\\n\""), "{out}");
    assert!(out.contains("a.txt (644): \"alpha\\nBETA\\n\""), "{out}");
    assert!(out.contains("new/c.txt (644): \"fresh\\n\""), "{out}");
    assert!(!out.lines().any(|l| l.starts_with("gone.txt")), "{out}");
    assert!(
        out.contains("[ok] p8 apply_patch: Applied: deleted gone.txt."),
        "{out}"
    );
}
