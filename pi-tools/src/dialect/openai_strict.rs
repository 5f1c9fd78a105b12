//! OpenAI strict mode (structured outputs): closed objects, every property required
//! (optional ones nullable), `anyOf` as the only union, no `default`.

use serde_json::{Map, Value, json};

use super::notes;
use super::visit::{self, children_mut, is_null_schema, is_object, visit_all};
use super::{Dialect, DialectError};

const D: Dialect = Dialect::OpenAiStrict;

/// Keywords strict mode rejects outright.
const FORBIDDEN: &[(&str, &str)] = &[
    (
        "allOf",
        "`allOf` is not allowed in strict mode; merge the combined schemas into one object, or use the openai dialect",
    ),
    (
        "not",
        "`not` is not allowed in strict mode; describe the allowed values positively (e.g. with `enum`), or use the openai dialect",
    ),
    (
        "if",
        "conditional schemas (`if`/`then`/`else`) are not allowed in strict mode; use a tagged enum (`anyOf` of objects) instead, or use the openai dialect",
    ),
];

/// Keywords that make a schema say something (a node with none of them accepts any value).
const CONSTRAINING: &[&str] = &[
    "type",
    "enum",
    "const",
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "properties",
    "items",
];

pub(super) fn transform(canonical: &Value) -> Result<Value, DialectError> {
    let mut out = canonical.clone();
    fix(&mut out, "")?;
    Ok(out)
}

fn fix(node: &mut Value, path: &str) -> Result<(), DialectError> {
    let Some(object) = node.as_object() else {
        return match node {
            Value::Bool(true) => Err(any_value(path)),
            _ => Ok(()),
        };
    };
    if !CONSTRAINING.iter().any(|k| object.contains_key(*k)) {
        return Err(any_value(path));
    }
    for (key, reason) in FORBIDDEN {
        if object.contains_key(*key) {
            return Err(DialectError::new(D, &visit::join(path, key), *reason));
        }
    }
    for (child_path, child) in children_mut(node, path) {
        fix(child, &child_path)?;
    }
    let Some(object) = node.as_object_mut() else {
        return Ok(());
    };
    // Strict mode refuses `default` (the model sends every property there, `null` for
    // "absent"). What `null` then stands for moves into the description, so the model
    // still knows it.
    if let Some(default) = object.remove("default") {
        say_default(object, &default);
    }
    if let Some(one_of) = object.remove("oneOf") {
        if object.contains_key("anyOf") {
            return Err(DialectError::new(
                D,
                path,
                "a schema with both `oneOf` and `anyOf` has no strict-mode form; keep one union",
            ));
        }
        object.insert("anyOf".into(), one_of);
    }
    if object.len() > 1
        && let Some(reference) = object.remove("$ref")
    {
        if object.contains_key("anyOf") {
            return Err(DialectError::new(
                D,
                path,
                "a `$ref` beside an `anyOf` has no strict-mode form; keep one of them",
            ));
        }
        object.insert("anyOf".into(), json!([{"$ref": reference}]));
    }
    if is_object(node) {
        close_object(node, path)?;
    }
    Ok(())
}

/// Ends the node's description with `Default: VALUE.` (see [`notes::value_text`]); a
/// description that already speaks of its default is left as it is.
fn say_default(object: &mut Map<String, Value>, default: &Value) {
    let sentence = format!("Default: {}.", notes::value_text(default));
    notes::append(object, "default", &sentence);
}

fn any_value(path: &str) -> DialectError {
    DialectError::new(
        D,
        path,
        "an arbitrary JSON value (a schema without a type) has no strict-mode form; give it a concrete type, or use the openai dialect",
    )
}

/// `additionalProperties: false`, every property required, the optional ones nullable.
fn close_object(node: &mut Value, path: &str) -> Result<(), DialectError> {
    let Some(object) = node.as_object_mut() else {
        return Ok(());
    };
    match object.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => {
            return Err(DialectError::new(
                D,
                &visit::join(path, "additionalProperties"),
                "a map with arbitrary keys has no strict-mode form; use a list of `{key, value}` objects instead, or use the openai dialect",
            ));
        }
    }
    // In JSON Schema, `properties: {}` declares nothing: it accepts any keys, as a missing
    // `properties` does, so both are the same free-form object. At the root that is a tool
    // that declares no parameters, and closing it says the same; below the root it is a
    // value of arbitrary keys, which strict mode cannot express.
    let declared = object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if !declared && object.get("additionalProperties").is_none() && !path.is_empty() {
        return Err(DialectError::new(
            D,
            path,
            "an object without declared properties (no `properties`, or `properties: {}`) accepts arbitrary keys, which strict mode cannot express; declare its fields, or use the openai dialect",
        ));
    }
    object.insert("additionalProperties".into(), Value::Bool(false));
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let properties = object
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    // The declared order first, then the newly required optional ones.
    let mut all: Vec<Value> = required.iter().cloned().map(Value::String).collect();
    if let Some(properties) = properties.as_object_mut() {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                all.push(Value::String(name.clone()));
                make_nullable(property);
            }
        }
    }
    object.insert("required".into(), Value::Array(all));
    Ok(())
}

/// `T` → `{"anyOf": [T, {"type": "null"}]}`, keeping the description on the outside.
fn make_nullable(property: &mut Value) {
    if accepts_null(property) {
        return;
    }
    if let Some(object) = property.as_object_mut()
        && object.len() <= 2
        && let Some(Value::Array(members)) = object.get_mut("anyOf")
    {
        members.push(json!({"type": "null"}));
        return;
    }
    let mut inner = std::mem::take(property);
    let description = inner.as_object_mut().and_then(|o| o.remove("description"));
    let mut outer = Map::new();
    outer.insert("anyOf".into(), json!([inner, {"type": "null"}]));
    if let Some(description) = description {
        outer.insert("description".into(), description);
    }
    *property = Value::Object(outer);
}

fn accepts_null(node: &Value) -> bool {
    visit::types(node).contains(&"null")
        || node
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(is_null_schema))
}

pub(super) fn check(schema: &Value, root: &str, problems: &mut Vec<String>) {
    if schema.get("anyOf").is_some() {
        problems.push(format!("{root}: a union at the root is not allowed"));
    }
    visit_all(schema, root, &mut |path, node| {
        let Some(object) = node.as_object() else {
            if node == &Value::Bool(true) {
                problems.push(format!("{path}: `true` (any value) is not allowed"));
            }
            return;
        };
        if !CONSTRAINING.iter().any(|k| object.contains_key(*k)) {
            problems.push(format!("{path}: a schema without a type accepts any value"));
        }
        for key in ["oneOf", "allOf", "not", "if", "then", "else"] {
            if object.contains_key(key) {
                problems.push(format!("{path}: `{key}` is not allowed"));
            }
        }
        if object.contains_key("$ref") && object.len() > 1 {
            problems.push(format!("{path}: `$ref` must not have siblings"));
        }
        if is_object(node) {
            if object.get("additionalProperties") != Some(&Value::Bool(false)) {
                problems.push(format!("{path}: needs `additionalProperties: false`"));
            }
            let mut keys: Vec<&str> = object
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let mut required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            keys.sort_unstable();
            required.sort_unstable();
            if keys != required {
                problems.push(format!(
                    "{path}: `required` must list every property ({keys:?}), has {required:?}"
                ));
            }
        }
    });
}
