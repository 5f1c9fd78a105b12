//! The built-in calls a call of a native-shape tool stands for, as the policy judges it:
//! rules written for `edit`, `write` and `read` apply to the tools that serve the providers'
//! native shapes, so one policy covers every family. A call is judged as itself and as each
//! built-in call it stands for, and the strictest decision wins.
//!
//! | native-shape tool | judged also as |
//! |---|---|
//! | `str_replace_based_edit_tool` `view` | `read` (and `ls`) with its `path` |
//! | `str_replace_based_edit_tool` `create` | `write` with its `path` and `file_text` as `content` |
//! | `str_replace_based_edit_tool` `str_replace`, `insert` | `edit` with its `path` |
//! | `apply_patch` | per file: `write` for an added file, `edit` for an updated one, `edit` and `write` for a deleted one, and for a move `edit` of the old path and `write` of the new |
//!
//! The native shell tools need nothing here: Anthropic's `bash` and the Responses `shell`
//! calls run as calls of `bash`, which the rules for `bash` judge as they are.

use serde_json::{Value as Json, json};

use crate::dialect::v4a::{FileOp, parse_patch};

/// The built-in calls (`tool`, `args`) a call of `tool` with `args` stands for; empty for a
/// tool that is not a native-shape one (or a patch that cannot be read, which is refused
/// when it runs).
pub(super) fn stands_for(tool: &str, args: &Json) -> Vec<(&'static str, Json)> {
    let text = |key: &str| args.get(key).and_then(Json::as_str).unwrap_or_default();
    match tool {
        "str_replace_based_edit_tool" => {
            let path = json!(text("path"));
            match text("command") {
                "view" => vec![
                    ("read", json!({"path": path})),
                    ("ls", json!({"path": path})),
                ],
                "create" => vec![("write", json!({"path": path, "content": text("file_text")}))],
                _ => vec![("edit", json!({"path": path}))],
            }
        }
        "apply_patch" => {
            let patch = args
                .get("patch")
                .or_else(|| args.get("input"))
                .and_then(Json::as_str)
                .unwrap_or_default();
            let Ok(patch) = parse_patch(patch) else {
                return Vec::new();
            };
            let mut calls = Vec::new();
            for op in patch.files {
                match op {
                    FileOp::Add { path, content } => {
                        calls.push(("write", json!({"path": path, "content": content})));
                    }
                    FileOp::Delete { path } => {
                        calls.push(("edit", json!({"path": path})));
                        calls.push(("write", json!({"path": path, "content": ""})));
                    }
                    FileOp::Update { path, move_to, .. } => {
                        calls.push(("edit", json!({"path": path})));
                        if let Some(to) = move_to {
                            calls.push(("write", json!({"path": to, "content": ""})));
                        }
                    }
                }
            }
            calls
        }
        _ => Vec::new(),
    }
}
