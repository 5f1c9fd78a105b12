//! The batch `pi-tools run` executes: a JSON array of `{id, name, arguments}` or an
//! assistant message whose `toolCall` blocks are the calls, or (`--dialect`) a provider's
//! reply. Anything else is refused with a message naming the problem and the expected shape.

use std::collections::HashSet;
use std::io::{IsTerminal, Read};
use std::path::Path;

use serde_json::{Map, Value};

use crate::core::ToolCall;
use crate::provider::{Reply, read_reply};

use super::Failure;
use crate::dialect::Dialect;

/// The shapes `run` accepts, for error messages.
const EXPECTED: &str = "expected a JSON array of tool calls, \
`[{\"id\": \"call_1\", \"name\": \"read\", \"arguments\": {\"path\": \"README.md\"}}]`, \
or an assistant message, \
`{\"role\": \"assistant\", \"content\": [{\"type\": \"toolCall\", \"id\": \"call_1\", \"name\": \"read\", \"arguments\": {…}}]}`";

/// Reads the batch from `path`, or from standard input when `path` is `None` or `-`.
pub(super) fn read(path: Option<&Path>) -> Result<String, Failure> {
    match path {
        Some(path) if path != Path::new("-") => std::fs::read_to_string(path).map_err(|e| {
            Failure::usage(format!(
                "cannot read the batch file `{}` ({e}); check the path, or pass `-` to read standard input",
                path.display()
            ))
        }),
        _ => {
            if std::io::stdin().is_terminal() {
                eprintln!("Reading the batch from standard input; end it with Ctrl-D.");
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| {
                Failure::usage(format!(
                    "cannot read the batch from standard input ({e}); pipe UTF-8 JSON into it or pass a file"
                ))
            })?;
            Ok(text)
        }
    }
}

/// The calls of a batch, in source order.
pub(super) fn parse(text: &str) -> Result<Vec<ToolCall>, Failure> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        if text.trim().is_empty() {
            unusable("the input is empty")
        } else {
            unusable(&format!("the input is not valid JSON ({e})"))
        }
    })?;
    let calls = match &value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| call(item, &format!("element {index} of the array")))
            .collect::<Result<Vec<_>, _>>()?,
        Value::Object(message) => message_calls(message)?,
        other => {
            return Err(unusable(&format!(
                "the input is a JSON {}, not an array or an assistant message",
                kind(other)
            )));
        }
    };
    let mut seen = HashSet::new();
    for call in &calls {
        if !seen.insert(call.id.as_str()) {
            return Err(unusable(&format!(
                "two calls have the id `{}`; give every call its own id",
                call.id
            )));
        }
    }
    Ok(calls)
}

/// A provider's reply (its JSON body or its event stream), for `run --dialect`.
pub(super) fn reply(text: &str, dialect: Dialect) -> Result<Reply, Failure> {
    if !dialect.has_replies() {
        return Err(Failure::usage(format!(
            "the {dialect} dialect only lists tools and has no replies to read; use openai, openai-strict, openai-responses, anthropic or gemini"
        )));
    }
    let mut reply = read_reply(dialect, text.as_bytes())
        .map_err(|e| Failure::usage(format!("unusable reply: {e}")))?;
    // `run` prints the results only, never the assistant turn: a second copy of every
    // call's arguments need not stay while the calls run.
    reply.assistant = Vec::new();
    let mut seen = HashSet::new();
    for call in &reply.calls {
        if !seen.insert(call.id.as_str()) {
            return Err(Failure::usage(format!(
                "unusable reply: two calls have the id `{}`; the results could not be told apart",
                call.id
            )));
        }
    }
    Ok(reply)
}

fn message_calls(message: &Map<String, Value>) -> Result<Vec<ToolCall>, Failure> {
    match message.get("role") {
        Some(Value::String(role)) if role == "assistant" => {}
        Some(Value::String(role)) => {
            return Err(unusable(&format!(
                "the input is a message with role `{role}`, not an assistant message"
            )));
        }
        _ => {
            return Err(unusable(
                "the input is an object without `\"role\": \"assistant\"`",
            ));
        }
    }
    let Some(content) = message.get("content").and_then(Value::as_array) else {
        return Err(unusable(
            "the assistant message has no `content` array of blocks",
        ));
    };
    content
        .iter()
        .enumerate()
        .filter(|(_, block)| block.get("type").and_then(Value::as_str) == Some("toolCall"))
        .map(|(index, block)| call(block, &format!("content block {index}")))
        .collect()
}

/// One call; `what` names where it sits in the input.
fn call(item: &Value, what: &str) -> Result<ToolCall, Failure> {
    let Value::Object(fields) = item else {
        return Err(unusable(&format!(
            "{what} is a JSON {}, not a tool call object",
            kind(item)
        )));
    };
    let text = |field: &str| match fields.get(field) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(unusable(&format!("{what} has an empty `{field}`"))),
        Some(other) => Err(unusable(&format!(
            "the `{field}` of {what} is a JSON {}, not a string",
            kind(other)
        ))),
        None => Err(unusable(&format!("{what} has no `{field}`"))),
    };
    let id = text("id")?;
    let name = text("name")?;
    let arguments = fields
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    Ok(ToolCall::new(id, name, arguments))
}

fn unusable(problem: &str) -> Failure {
    Failure::usage(format!("unusable batch: {problem}; {EXPECTED}."))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_array_and_an_assistant_message_give_the_same_calls() {
        let array =
            r#"[{"id": "a", "name": "t", "arguments": {"x": 1}}, {"id": "b", "name": "u"}]"#;
        let message = r#"{"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "toolCall", "id": "a", "name": "t", "arguments": {"x": 1}},
            {"type": "thinking", "thinking": "…"},
            {"type": "toolCall", "id": "b", "name": "u"}
        ]}"#;
        let expected = vec![
            ToolCall::new("a", "t", json!({"x": 1})),
            ToolCall::new("b", "u", json!({})),
        ];
        assert_eq!(parse(array), Ok(expected.clone()));
        assert_eq!(parse(message), Ok(expected));
    }

    #[test]
    fn each_problem_is_named_with_the_expected_shape() {
        let problem = |text: &str| {
            let failure = parse(text).expect_err("unusable input");
            assert_eq!(failure.code, Failure::USAGE);
            assert!(
                failure.message.ends_with(&format!("; {EXPECTED}.")),
                "{failure}"
            );
            failure.message
        };
        assert!(problem("").starts_with("unusable batch: the input is empty;"));
        assert!(problem("[{").starts_with("unusable batch: the input is not valid JSON ("));
        assert!(problem("3").starts_with("unusable batch: the input is a JSON number, not"));
        assert!(
            problem(r#"[{"id": "a"}]"#)
                .starts_with("unusable batch: element 0 of the array has no `name`;")
        );
        assert!(problem(r#"[{"id": 1, "name": "t"}]"#).starts_with(
            "unusable batch: the `id` of element 0 of the array is a JSON number, not a string;"
        ));
        assert!(
            problem(r#"{"role": "user", "content": []}"#)
                .starts_with("unusable batch: the input is a message with role `user`")
        );
        assert!(
            problem(r#"{"role": "assistant", "content": [{"type": "toolCall", "id": "a"}]}"#)
                .starts_with("unusable batch: content block 0 has no `name`;")
        );
        assert!(
            problem(r#"[{"id": "a", "name": "t"}, {"id": "a", "name": "u"}]"#)
                .starts_with("unusable batch: two calls have the id `a`;")
        );
    }
}
