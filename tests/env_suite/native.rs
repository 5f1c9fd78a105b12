//! The tools that serve the providers' native shapes (Anthropic's text editor, the V4A
//! `apply_patch`) over SSH: the same transcripts and files as on this machine.

use super::*;

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
