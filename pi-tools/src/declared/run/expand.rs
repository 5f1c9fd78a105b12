//! A declared tool's call, made into what runs: the parameters' values (defaults filled,
//! each checked), the argument vector a `command` gives with them, the shell line that runs
//! exactly that vector, and the environment a `script` reads them from.

use serde_json::Value;

use crate::core::ToolError;
use crate::declared::spec::{ArgTemplate, DeclaredAction, DeclaredTool, Piece};

/// Each parameter's value for this call (its default when the call gave none; `None` when
/// it has neither), in declaration order.
pub(super) struct Values(Vec<(String, Option<Value>)>);

impl Values {
    fn get(&self, name: &str) -> Option<&Value> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_ref())
    }
}

/// The call's values, each string (an array's items too, and a number's text) refused when
/// it holds a NUL byte, or starts with `-` and its parameter does not allow that; for a
/// `script`, an array's item is also refused when it holds a newline, since the script gets
/// the items one per line and the item would become two (the second unchecked for `-`).
pub(super) fn values(tool: &DeclaredTool, args: &Value) -> Result<Values, ToolError> {
    let lines = matches!(tool.action, DeclaredAction::Script(_));
    let mut out = Vec::with_capacity(tool.params.len());
    for param in &tool.params {
        let value = args
            .get(&param.name)
            .filter(|v| !v.is_null())
            .or(param.default.as_ref())
            .cloned();
        if let Some(value) = &value {
            let (items, array) = match value {
                Value::Array(items) => (items.iter().collect(), true),
                one => (vec![one], false),
            };
            for item in items {
                let text = text(item);
                if array && lines && text.contains('\n') {
                    return Err(ToolError::new(format!(
                        "An item of `{}` holds a newline, but {} gets an array's items one per line, so the item would arrive as two. Call {} again with each line as an item of its own.",
                        param.name, tool.name, tool.name
                    )));
                }
                if text.contains('\0') {
                    return Err(ToolError::new(format!(
                        "The value of `{}` contains a NUL byte, which no command line can carry. Call {} again without it.",
                        param.name, tool.name
                    )));
                }
                if text.starts_with('-') && !param.allow_dash {
                    return Err(ToolError::new(format!(
                        "The value `{text}` of `{}` starts with `-`, so the command would read it as an option, and {} does not allow that. Call it again with a value that does not start with `-`.",
                        param.name, tool.name
                    )));
                }
            }
        }
        out.push((param.name.clone(), value));
    }
    Ok(Values(out))
}

/// A value as an argument's text: a string as it is, a number as JSON writes it, a boolean
/// as `true` or `false`.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The argument vector: each element with its placeholders filled; an element naming an
/// absent parameter dropped; an element that is exactly an array's placeholder one
/// argument per item; a group kept whole only when every parameter it names is present and
/// no boolean it names is false (a boolean's own placeholder then gives no argument).
pub(super) fn argv(template: &[ArgTemplate], values: &Values) -> Vec<String> {
    let mut argv = Vec::new();
    for element in template {
        match element {
            ArgTemplate::Text(pieces) => {
                argv.extend(fill(pieces, values).unwrap_or_default());
            }
            ArgTemplate::Group(elements) => {
                let names = elements.iter().flatten().filter_map(|p| match p {
                    Piece::Param(name) => Some(name),
                    Piece::Literal(_) => None,
                });
                let mut keep = true;
                for name in names {
                    match values.get(name) {
                        None | Some(Value::Bool(false)) => keep = false,
                        Some(_) => {}
                    }
                }
                if !keep {
                    continue;
                }
                for pieces in elements {
                    if let [Piece::Param(name)] = pieces.as_slice()
                        && matches!(values.get(name), Some(Value::Bool(true)))
                    {
                        continue;
                    }
                    argv.extend(fill(pieces, values).unwrap_or_default());
                }
            }
        }
    }
    argv
}

/// One element's arguments, or `None` when a parameter it names is absent.
fn fill(pieces: &[Piece], values: &Values) -> Option<Vec<String>> {
    if let [Piece::Param(name)] = pieces
        && let Some(Value::Array(items)) = values.get(name)
    {
        return Some(items.iter().map(text).collect());
    }
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Literal(literal) => out.push_str(literal),
            Piece::Param(name) => out.push_str(&text(values.get(name)?)),
        }
    }
    Some(vec![out])
}

/// The shell line that runs exactly `argv`: every argument quoted whole, so nothing in it
/// is read by the shell.
pub(super) fn shell_line(argv: &[String]) -> Result<String, ToolError> {
    shlex::try_join(argv.iter().map(String::as_str)).map_err(|_| {
        ToolError::new(
            "An argument contains a NUL byte, which no command line can carry. Call the tool again without it.",
        )
    })
}

/// A script's parameters as environment variables: each under its own name, an array's
/// items one per line, an absent parameter not set.
pub(super) fn environment(values: &Values) -> Vec<(String, String)> {
    values
        .0
        .iter()
        .filter_map(|(name, value)| {
            let value = value.as_ref()?;
            let text = match value {
                Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join("\n"),
                one => text(one),
            };
            Some((name.clone(), text))
        })
        .collect()
}
