//! Providers' native tool calls, read onto the built-ins that serve them, and their results
//! written back in each shape's own form (see [`crate::dialect::native`] for the tools):
//!
//! | native call | runs as | result |
//! |---|---|---|
//! | Responses `apply_patch_call` (`create_file`, `update_file`, `delete_file` with a V4A `diff`) | `apply_patch`: the reply's items as one patch, all or nothing, in the first item's call (see `patch_group.rs`) | `apply_patch_call_output` (`status` `completed` or `failed`, `output` the text) |
//! | Responses `shell_call` (`action.commands`, `timeout_ms`) | `bash` (the commands one after another) | `shell_call_output` (`stdout`, `stderr`, `outcome` exit or timeout) |
//! | Anthropic `tool_use` of `str_replace_based_edit_tool` | the built-in of that name | `tool_result` |
//! | Anthropic `tool_use` of `bash` (`command`, `restart`) | `bash`; `restart` answered without running | `tool_result` |

use serde_json::{Map, Value, json};

use super::reply::NativeCall;
use super::walk::At;
use super::{Reply, ReplyError, split_content};
use crate::core::ToolResultMessage;

/// Reads a Responses `apply_patch_call` item into a call of `apply_patch` (the reply's
/// items joined into one patch).
pub(super) fn apply_patch_call(at: &At<'_>, reply: &mut Reply) -> Result<(), ReplyError> {
    let id = at.required_str("call_id")?;
    let operation = at.required("operation")?;
    let field = |key: &str| operation.get(key).and_then(Value::as_str);
    let Some(path) = field("path") else {
        return Err(at.error_at("operation", "the operation has no `path` string"));
    };
    let diff = field("diff").unwrap_or_default();
    let body = match field("type") {
        Some("create_file") => format!("*** Add File: {path}\n{}", with_newline(diff)),
        Some("update_file") => format!("*** Update File: {path}\n{}", with_newline(diff)),
        Some("delete_file") => format!("*** Delete File: {path}\n"),
        other => {
            return Err(at.error_at(
                "operation",
                format!(
                    "unknown operation type {}; pi-tools applies `create_file`, `update_file` and `delete_file`",
                    other.map_or_else(|| "(none)".to_owned(), |t| format!("`{t}`"))
                ),
            ));
        }
    };
    super::patch_group::push(reply, id, &body);
    Ok(())
}

/// Reads a Responses `shell_call` item into a call of `bash`: its commands one after
/// another, in one shell, with its timeout.
pub(super) fn shell_call(at: &At<'_>, reply: &mut Reply) -> Result<(), ReplyError> {
    let id = at.required_str("call_id")?;
    let action = at.required("action")?;
    let commands: Option<Vec<&str>> = action
        .get("commands")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect());
    let Some(commands) = commands.filter(|c| !c.is_empty()) else {
        return Err(at.error_at("action", "the action has no `commands` list of strings"));
    };
    let mut arguments = Map::new();
    arguments.insert("command".into(), json!(commands.join("\n")));
    if let Some(ms) = action.get("timeout_ms").and_then(Value::as_u64) {
        arguments.insert("timeout".into(), json!(ms as f64 / 1000.0));
    }
    let max_output_length = action.get("max_output_length").and_then(Value::as_u64);
    reply.push_native_call(
        id,
        "bash",
        Value::Object(arguments),
        NativeCall::Shell { max_output_length },
    );
    Ok(())
}

/// An Anthropic `tool_use` of the native `bash` tool with `restart`: answered without
/// running, since every command runs in a fresh shell; the key is removed otherwise (bash
/// takes no such argument). `true` when the call was taken care of here.
pub(super) fn bash_restart(id: &str, input: &mut Value, reply: &mut Reply) -> bool {
    let Some(restart) = input.as_object_mut().and_then(|o| o.remove("restart")) else {
        return false;
    };
    if restart != Value::Bool(true) {
        return false;
    }
    reply.push_answered_call(
        id,
        "bash",
        input.clone(),
        "Every command runs in a fresh shell, so there is no shell to restart and nothing was run. Call bash again with the command you want to run.".to_owned(),
    );
    true
}

/// The result of a call that came in a native shape, in that shape's form; `None` for a
/// call whose result is an ordinary `function_call_output`.
pub(super) fn responses_output(
    reply: &Reply,
    message: &ToolResultMessage,
    messages: &[ToolResultMessage],
) -> Option<Value> {
    let index = reply
        .calls
        .iter()
        .position(|c| c.id == message.tool_call_id)?;
    let (text, _) = split_content(&message.content);
    match reply.native(index)? {
        NativeCall::ApplyPatch { .. } => {
            let (failed, text) = super::patch_group::answer(reply, index, messages)
                .unwrap_or((message.is_error, text));
            Some(json!({
                "type": "apply_patch_call_output",
                "call_id": message.tool_call_id,
                "status": if failed { "failed" } else { "completed" },
                "output": text,
            }))
        }
        NativeCall::Shell { max_output_length } => {
            let details = &message.details;
            let timed_out = details.get("timedOut").and_then(Value::as_bool) == Some(true);
            let outcome = if timed_out {
                json!({"type": "timeout"})
            } else {
                let code = details
                    .get("exitCode")
                    .and_then(Value::as_i64)
                    .unwrap_or(if message.is_error { 1 } else { 0 });
                json!({"type": "exit", "exit_code": code})
            };
            // bash gives stdout and stderr as one text, in the order they came.
            let mut item = json!({
                "type": "shell_call_output",
                "call_id": message.tool_call_id,
                "output": [{"stdout": text, "stderr": "", "outcome": outcome}],
            });
            if let (Some(max), Some(object)) = (max_output_length, item.as_object_mut()) {
                object.insert("max_output_length".into(), json!(max));
            }
            Some(item)
        }
    }
}

/// `diff` ending with a newline (an empty one stays empty).
fn with_newline(diff: &str) -> String {
    if diff.is_empty() || diff.ends_with('\n') {
        diff.to_owned()
    } else {
        format!("{diff}\n")
    }
}
