//! Traversal of a JSON schema's sub-schemas, shared by the dialect transforms and checks.
//!
//! Only positions that hold schemas are visited (`properties` values, `items`, the members
//! of `anyOf`, …), never data positions such as `enum`, `const` or `default`.

use serde_json::Value;

/// Keywords whose value is one sub-schema.
const SINGLE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];

/// Keywords whose value is a list of sub-schemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Keywords whose value is a map from names to sub-schemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Appends one segment to a JSON pointer, escaping `~` and `/`.
pub(crate) fn join(path: &str, segment: &str) -> String {
    format!("{path}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

/// The direct sub-schemas of `node`, with their JSON pointers.
pub(crate) fn children<'a>(node: &'a Value, path: &str) -> Vec<(String, &'a Value)> {
    let mut out = Vec::new();
    let Some(object) = node.as_object() else {
        return out;
    };
    for (key, value) in object {
        let here = join(path, key);
        if MAP.contains(&key.as_str()) {
            if let Some(map) = value.as_object() {
                out.extend(map.iter().map(|(name, v)| (join(&here, name), v)));
            }
        } else if LIST.contains(&key.as_str()) && value.is_array() {
            if let Some(list) = value.as_array() {
                out.extend(
                    list.iter()
                        .enumerate()
                        .map(|(i, v)| (join(&here, &i.to_string()), v)),
                );
            }
        } else if SINGLE.contains(&key.as_str()) && (value.is_object() || value.is_boolean()) {
            out.push((here, value));
        }
    }
    out
}

/// The direct sub-schemas of `node`, mutably, with their JSON pointers.
pub(crate) fn children_mut<'a>(node: &'a mut Value, path: &str) -> Vec<(String, &'a mut Value)> {
    let mut out = Vec::new();
    let Some(object) = node.as_object_mut() else {
        return out;
    };
    for (key, value) in object.iter_mut() {
        let here = join(path, key);
        if MAP.contains(&key.as_str()) {
            if let Some(map) = value.as_object_mut() {
                out.extend(map.iter_mut().map(|(name, v)| (join(&here, name), v)));
            }
        } else if LIST.contains(&key.as_str()) && value.is_array() {
            if let Some(list) = value.as_array_mut() {
                out.extend(
                    list.iter_mut()
                        .enumerate()
                        .map(|(i, v)| (join(&here, &i.to_string()), v)),
                );
            }
        } else if SINGLE.contains(&key.as_str()) && (value.is_object() || value.is_boolean()) {
            out.push((here, value));
        }
    }
    out
}

/// Calls `visit` on `node` and every schema below it, pre-order.
pub(crate) fn visit_all(node: &Value, path: &str, visit: &mut dyn FnMut(&str, &Value)) {
    visit(path, node);
    for (child_path, child) in children(node, path) {
        visit_all(child, &child_path, visit);
    }
}

/// The type names a node declares (`"type": "x"` or `"type": ["x", "y"]`).
pub(crate) fn types(node: &Value) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a node describes an object (by its type, or by having properties).
pub(crate) fn is_object(node: &Value) -> bool {
    types(node).contains(&"object") || node.get("properties").is_some()
}

/// Whether a node is `{"type": "null"}` (the null branch of a nullable union).
pub(crate) fn is_null_schema(node: &Value) -> bool {
    node.get("type").and_then(Value::as_str) == Some("null")
}
