//! Anthropic's `input_schema`: an object at the root with no union there, and no type
//! arrays anywhere (nullable becomes `anyOf`).

use serde_json::{Map, Value, json};

use super::DialectError;
use super::visit::{children_mut, visit_all};

pub(super) fn transform(canonical: &Value) -> Result<Value, DialectError> {
    let mut out = canonical.clone();
    split_type_arrays(&mut out, "");
    Ok(out)
}

/// `{"type": ["string", "null"], …}` → `{"anyOf": [{"type": "string", …}, {"type": "null"}]}`.
fn split_type_arrays(node: &mut Value, path: &str) {
    for (child_path, child) in children_mut(node, path) {
        split_type_arrays(child, &child_path);
    }
    let Some(object) = node.as_object_mut() else {
        return;
    };
    let Some(Value::Array(types)) = object.get("type").cloned() else {
        return;
    };
    object.remove("type");
    let description = object.remove("description");
    let rest = std::mem::take(object);
    let branches: Vec<Value> = types
        .iter()
        .map(|t| {
            if t == "null" {
                json!({"type": "null"})
            } else {
                let mut branch = rest.clone();
                branch.insert("type".into(), t.clone());
                Value::Object(branch)
            }
        })
        .collect();
    let mut replaced = Map::new();
    if branches.len() == 1 {
        if let Some(Value::Object(single)) = branches.into_iter().next() {
            replaced = single;
        }
    } else {
        replaced.insert("anyOf".into(), Value::Array(branches));
    }
    if let Some(description) = description {
        replaced.insert("description".into(), description);
    }
    *object = replaced;
}

pub(super) fn check(schema: &Value, root: &str, problems: &mut Vec<String>) {
    for key in ["oneOf", "anyOf", "allOf"] {
        if schema.get(key).is_some() {
            problems.push(format!("{root}: `{key}` is not allowed at the root"));
        }
    }
    visit_all(schema, root, &mut |path, node| {
        if node.get("type").is_some_and(Value::is_array) {
            problems.push(format!("{path}: type arrays are not allowed"));
        }
    });
}
