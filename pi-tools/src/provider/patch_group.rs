//! A Responses reply's `apply_patch_call` items applied together, all or nothing. The model
//! sends one operation per item, but the items of one reply are one change: the first item
//! becomes a call of `apply_patch` carrying every item's operation as one V4A patch (the
//! tool holds every file's mutation queue, computes every change and writes only when all
//! apply), and each later item a call answered without running, since its operation rides
//! on the first. The policy judges the carried patch file by file, so a deny of any item's
//! file refuses them all. Each item is answered from the carrying call's result: its own
//! file on success; on a failure, which item failed and that the others were not applied
//! and are to be resent.

use serde_json::{Value, json};

use super::reply::{NativeCall, Reply};
use super::split_content;
use crate::core::{ContentBlock, ToolResult, ToolResultMessage};

const END: &str = "*** End Patch\n";

/// Adds an `apply_patch_call` item whose operation is `body` (a file section of a V4A
/// patch): to the reply's carrying call when there is one, else as that call.
pub(super) fn push(reply: &mut Reply, id: &str, body: &str) {
    let carrier = (0..reply.calls.len()).find(|&i| {
        matches!(reply.native(i), Some(NativeCall::ApplyPatch { carrier, .. }) if *carrier == reply.calls[i].id)
    });
    let own_patch = format!("*** Begin Patch\n{body}{END}");
    let Some(at) = carrier else {
        reply.push_native_call(
            id,
            "apply_patch",
            json!({ "patch": own_patch }),
            NativeCall::ApplyPatch {
                carrier: id.to_owned(),
                operation: 0,
                header_line: 2,
            },
        );
        return;
    };
    let operation = members(reply, &reply.calls[at].id).len();
    let carrier_id = reply.calls[at].id.clone();
    let carried = reply.calls[at].arguments["patch"]
        .as_str()
        .unwrap_or_default();
    let before = carried.strip_suffix(END).unwrap_or(carried);
    let header_line = before.matches('\n').count() + 1;
    reply.calls[at].arguments["patch"] = json!(format!("{before}{body}{END}"));
    let placeholder = ToolResult {
        content: vec![ContentBlock::text(format!(
            "Not run on its own: the reply's apply_patch_call items are applied together as one patch, all or nothing, by call {carrier_id}; this item is answered from that call's result."
        ))],
        details: json!({"provider": reply.dialect.api(), "appliedBy": carrier_id}),
        ..ToolResult::default()
    };
    reply.push_joined_call(
        id,
        "apply_patch",
        json!({ "patch": own_patch }),
        placeholder,
        NativeCall::ApplyPatch {
            carrier: carrier_id,
            operation,
            header_line,
        },
    );
}

/// The calls (index, operation) whose operations `carrier` carries, in order.
fn members(reply: &Reply, carrier: &str) -> Vec<(usize, usize)> {
    (0..reply.calls.len())
        .filter_map(|i| match reply.native(i) {
            Some(NativeCall::ApplyPatch {
                carrier: c,
                operation,
                ..
            }) if c == carrier => Some((i, *operation)),
            _ => None,
        })
        .collect()
}

/// Call `index`'s answer when it is one of several `apply_patch_call` items applied
/// together: whether it failed, and its text, from the carrying call's message in
/// `messages`. `None` for any other call (a lone item answers for itself).
pub(super) fn answer(
    reply: &Reply,
    index: usize,
    messages: &[ToolResultMessage],
) -> Option<(bool, String)> {
    let Some(NativeCall::ApplyPatch {
        carrier, operation, ..
    }) = reply.native(index)
    else {
        return None;
    };
    let group = members(reply, carrier);
    let n = group.len();
    if n < 2 {
        return None;
    }
    let carried = messages.iter().find(|m| m.tool_call_id == *carrier)?;
    // The carrying call's own text, kept in its details once its message is settled.
    let text = match carried.details.get(CARRIED).and_then(Value::as_str) {
        Some(text) => text.to_owned(),
        None => split_content(&carried.content).0,
    };
    let others = match n - 1 {
        1 => "other item was".to_owned(),
        k => format!("{k} other items were"),
    };
    if !carried.is_error {
        let file = carried.details["files"]
            .get(*operation)
            .map_or_else(|| "its operation".to_owned(), done);
        return Some((
            false,
            format!(
                "Applied: {file}. The reply's {n} apply_patch_call items were applied together, all or nothing."
            ),
        ));
    }
    let failed = carried.details["operation"]
        .as_u64()
        .and_then(|f| usize::try_from(f).ok())
        .and_then(|f| group.iter().find(|(_, op)| *op == f));
    let Some(&(failed_at, failed_op)) = failed else {
        return Some((
            true,
            format!(
                "Not applied: the reply's {n} apply_patch_call items are applied together, all or nothing, and they were refused: {text} Resend them once that is fixed."
            ),
        ));
    };
    if failed_op == *operation {
        let header_line = match reply.native(index) {
            Some(NativeCall::ApplyPatch { header_line, .. }) => *header_line,
            _ => 0,
        };
        return Some((
            true,
            format!(
                "{} The {others} not applied either: the reply's apply_patch_call items are applied all or nothing. Resend all {n} of them, this one corrected.",
                in_its_diff(&text, header_line)
            ),
        ));
    }
    let path = reply.calls[failed_at].arguments["patch"]
        .as_str()
        .and_then(|p| p.lines().nth(1))
        .and_then(|header| header.split_once(": "))
        .map_or("", |(_, path)| path);
    Some((
        true,
        format!(
            "Not applied: the reply's apply_patch_call items are applied all or nothing, and the item of call {} (its operation on {path}) could not be applied; see its output. Nothing was changed; resend this item with the corrected one.",
            reply.calls[failed_at].id
        ),
    ))
}

/// Puts each item's own answer into its transcript message (a joined item's was a
/// placeholder, since its operation ran in the carrying call; the carrying call's was the
/// whole patch's, which its details keep under `carriedText`, so answering again gives the
/// same answers).
pub(super) fn settle(reply: &Reply, messages: &mut [ToolResultMessage]) {
    let answers: Vec<Option<(bool, String)>> = (0..messages.len())
        .map(|i| answer(reply, i, messages))
        .collect();
    for (i, (message, answer)) in messages.iter_mut().zip(answers).enumerate() {
        let Some((failed, text)) = answer else {
            continue;
        };
        let carrier = reply
            .calls
            .get(i)
            .is_some_and(|c| c.id == message.tool_call_id)
            && matches!(reply.native(i), Some(NativeCall::ApplyPatch { carrier, .. }) if *carrier == message.tool_call_id);
        if carrier {
            let own = split_content(&message.content).0;
            match &mut message.details {
                Value::Object(details) => {
                    details.entry(CARRIED).or_insert(Value::String(own));
                }
                details @ Value::Null => *details = json!({ CARRIED: own }),
                // Nowhere to keep the text: the message stays the whole patch's.
                _ => continue,
            }
        }
        message.is_error = failed;
        message.content = vec![ContentBlock::text(text)];
    }
}

/// Where a settled carrying call's message keeps the whole patch's text.
const CARRIED: &str = "carriedText";

/// One file's outcome (`{"path", "action", "to"?, "hunks"}`) in words.
fn done(file: &Value) -> String {
    let path = file["path"].as_str().unwrap_or_default();
    let hunks = match file["hunks"].as_u64().unwrap_or_default() {
        0 => String::new(),
        1 => " (1 hunk)".to_owned(),
        n => format!(" ({n} hunks)"),
    };
    match file["to"].as_str() {
        Some(to) => format!("moved {path} to {to}{hunks}"),
        None => format!(
            "{} {path}{hunks}",
            file["action"].as_str().unwrap_or("changed")
        ),
    }
}

/// `text` with the carried patch's line numbers (`(line N of the patch)`) counted in the
/// item's own diff, whose section starts at line `header_line` of the carried patch.
fn in_its_diff(text: &str, header_line: usize) -> String {
    let (open, close) = ("(line ", " of the patch)");
    let Some(start) = text.find(open) else {
        return text.to_owned();
    };
    let rest = &text[start + open.len()..];
    let Some(end) = rest.find(close) else {
        return text.to_owned();
    };
    let Ok(line) = rest[..end].parse::<usize>() else {
        return text.to_owned();
    };
    format!(
        "{}(line {} of its diff){}",
        &text[..start],
        line.saturating_sub(header_line),
        &rest[end + close.len()..]
    )
}
