//! Schemas that contradict themselves: an `enum` whose values the `type` beside it refuses
//! (`type: boolean` with `["True", "False"]`), or a `default` outside its `enum`.
//!
//! Such a schema is served as it is (its owner may fix it, and a model may still get part of
//! it right), but every call that follows it is refused, so `pi-tools check` and the mount
//! name each one as a warning with the tool and the JSON path.

use serde_json::Value;

use super::ToolDefinition;

/// One contradiction in a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradiction {
    /// JSON pointer into the schema (`""` is the root).
    pub path: String,
    /// What contradicts what, and how to fix it.
    pub reason: String,
}

/// Every contradiction in `schema`, in document order.
///
/// ```
/// use pi_tools::tool::contradictions::contradictions;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {
///     "flag": {"type": "boolean", "enum": ["True", "False"]}
/// }});
/// let found = contradictions(&schema);
/// assert_eq!(found[0].path, "/properties/flag");
/// ```
pub fn contradictions(schema: &Value) -> Vec<Contradiction> {
    let mut found = Vec::new();
    walk(schema, "", &mut found);
    found
}

fn walk(node: &Value, path: &str, found: &mut Vec<Contradiction>) {
    let Some(object) = node.as_object() else {
        return;
    };
    let types = crate::core::types_of(node);
    if let Some(Value::Array(members)) = object.get("enum") {
        if let Some(types) = &types {
            let refused: Vec<String> = members
                .iter()
                .filter(|m| !types.iter().any(|t| has_type(m, t)))
                .map(Value::to_string)
                .collect();
            if refused.len() == members.len() && !members.is_empty() {
                found.push(Contradiction {
                    path: path.to_owned(),
                    reason: format!(
                        "no value can satisfy this schema: its `type` is {} but every `enum` value ({}) is of another type, so every call is refused; make the type match the values",
                        types.join(" or "),
                        refused.join(", ")
                    ),
                });
            } else if !refused.is_empty() {
                found.push(Contradiction {
                    path: path.to_owned(),
                    reason: format!(
                        "the `enum` values {} are not of its `type` ({}), so they are refused; remove them or widen the type",
                        refused.join(", "),
                        types.join(" or ")
                    ),
                });
            }
        }
        // `default: null` is how generated schemas say "absent" (Python's `= None`): it
        // stands for no value, not for a value outside the enum.
        if let Some(default) = object.get("default")
            && !default.is_null()
            && !members.contains(default)
        {
            found.push(Contradiction {
                path: path.to_owned(),
                reason: format!(
                    "the `default` {default} is not one of the `enum` values, so the default cannot be sent back; make it one of them"
                ),
            });
        }
    }
    if let (Some(types), Some(constant)) = (&types, object.get("const"))
        && !types.iter().any(|t| has_type(constant, t))
    {
        found.push(Contradiction {
            path: path.to_owned(),
            reason: format!(
                "no value can satisfy this schema: its `const` {constant} is not of its `type` ({}); make them agree",
                types.join(" or ")
            ),
        });
    }
    for (key, value) in object {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                for (name, child) in value.as_object().into_iter().flatten() {
                    walk(child, &join(&join(path, key), name), found);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                for (i, child) in value.as_array().into_iter().flatten().enumerate() {
                    walk(child, &join(&join(path, key), &i.to_string()), found);
                }
            }
            "items" | "additionalProperties" | "not" => walk(value, &join(path, key), found),
            _ => {}
        }
    }
}

/// One warning per contradiction in the schemas of `tools`, naming the tool and the path:
/// what `pi-tools check` prints and what a mount logs.
pub fn warnings<'a>(tools: impl IntoIterator<Item = &'a dyn ToolDefinition>) -> Vec<String> {
    let mut lines = Vec::new();
    for tool in tools {
        for found in contradictions(&tool.spec().parameters) {
            let path = if found.path.is_empty() {
                "/"
            } else {
                &found.path
            };
            lines.push(format!(
                "the schema of tool `{}` at `{path}` contradicts itself: {}",
                tool.spec().name,
                found.reason
            ));
        }
    }
    lines
}

/// Whether `value` is of the JSON Schema type `name` (an unknown type name accepts it, so
/// only what is certainly wrong is reported).
fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        ("null" | "boolean" | "string" | "array" | "object" | "number" | "integer", _) => false,
        _ => true,
    }
}

/// Appends one segment to a JSON pointer, escaping `~` and `/`.
fn join(path: &str, segment: &str) -> String {
    format!("{path}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_boolean_with_string_values_and_a_default_outside_its_enum_are_found() {
        let schema = json!({"type": "object", "properties": {
            "flag": {"type": "boolean", "enum": ["True", "False"]},
            "unit": {"type": "string", "enum": ["c", "f"], "default": "k"},
            "list": {"type": "array", "items": {"type": "integer", "enum": [1, "two"]}},
            "fine": {"type": "string", "enum": ["a"], "default": "a"},
            "absent": {"type": "string", "enum": ["a"], "default": null}
        }});
        let found = contradictions(&schema);
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/properties/flag",
                "/properties/unit",
                "/properties/list/items"
            ]
        );
        assert!(
            found[0].reason.contains("no value can satisfy"),
            "{found:?}"
        );
        assert!(found[1].reason.contains("\"k\""), "{found:?}");
        assert!(found[2].reason.contains("\"two\""), "{found:?}");
    }

    #[test]
    fn a_schema_without_a_type_or_an_enum_has_nothing_to_contradict() {
        assert!(contradictions(&json!({"type": "object"})).is_empty());
        assert!(contradictions(&json!({"enum": [1, "a", null]})).is_empty());
        assert!(
            contradictions(&json!({"type": ["string", "null"], "enum": ["a", null]})).is_empty()
        );
    }
}
