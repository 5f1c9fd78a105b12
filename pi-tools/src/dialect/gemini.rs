//! Gemini function declarations: the OpenAPI 3.0 subset Gemini accepts. References are
//! inlined (recursion cannot be), `const` becomes a one-value `enum`, type arrays become
//! `nullable`, and keywords outside the subset are dropped.

use serde_json::{Map, Value, json};

use super::notes;
use super::visit::{self, children_mut, is_null_schema, visit_all};
use super::{Dialect, DialectError};

const D: Dialect = Dialect::Gemini;

/// The schema keywords Gemini accepts; others are dropped (they only narrow or annotate).
const ALLOWED: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The formats Gemini understands; others are dropped.
const FORMATS: &[&str] = &["date-time", "enum", "int32", "int64", "float", "double"];

pub(super) fn transform(canonical: &Value) -> Result<Value, DialectError> {
    let mut out = canonical.clone();
    let defs = out
        .as_object_mut()
        .map(|root| {
            let mut defs = Map::new();
            for key in ["$defs", "definitions"] {
                if let Some(Value::Object(map)) = root.remove(key) {
                    defs.extend(map);
                }
            }
            defs
        })
        .unwrap_or_default();
    inline_refs(&mut out, "", &defs, &mut Vec::new())?;
    fix(&mut out, "")?;
    Ok(out)
}

/// Replaces every `$ref` by its definition; a reference back into a definition being
/// expanded (a recursive type) has no finite inline form.
fn inline_refs(
    node: &mut Value,
    path: &str,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
) -> Result<(), DialectError> {
    let depth = stack.len();
    while let Some(reference) = node.get("$ref").and_then(Value::as_str).map(str::to_owned) {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"));
        let Some(name) = name else {
            let reason = if reference == "#" {
                "a reference to the root schema is a recursive type, which Gemini cannot express; bound the nesting with separate types".to_owned()
            } else {
                format!(
                    "the reference `{reference}` points outside the schema's definitions; inline it"
                )
            };
            return Err(DialectError::new(D, path, reason));
        };
        if stack.iter().any(|s| s == name) {
            return Err(DialectError::new(
                D,
                path,
                format!(
                    "`{name}` refers to itself (a recursive type), which Gemini cannot express; bound the nesting with separate types, or use another dialect"
                ),
            ));
        }
        let Some(Value::Object(target)) = defs.get(name) else {
            return Err(DialectError::new(
                D,
                path,
                format!("the reference `{reference}` names no definition; add it to `$defs`"),
            ));
        };
        let mut merged = target.clone();
        if let Some(object) = node.as_object() {
            for (key, value) in object {
                if key != "$ref" {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
        *node = Value::Object(merged);
        stack.push(name.to_owned());
    }
    for (child_path, child) in children_mut(node, path) {
        inline_refs(child, &child_path, defs, stack)?;
    }
    stack.truncate(depth);
    Ok(())
}

fn fix(node: &mut Value, path: &str) -> Result<(), DialectError> {
    // Closed or open objects are all Gemini has; only a schema for the extra keys (a map)
    // says something it cannot.
    if let Some(object) = node.as_object_mut() {
        match object.remove("additionalProperties") {
            None | Some(Value::Bool(_)) => {}
            Some(_) => {
                return Err(DialectError::new(
                    D,
                    &visit::join(path, "additionalProperties"),
                    "a map with arbitrary keys has no Gemini form; use a list of `{key, value}` objects instead",
                ));
            }
        }
    }
    for (child_path, child) in children_mut(node, path) {
        fix(child, &child_path)?;
    }
    let Some(object) = node.as_object_mut() else {
        return Err(DialectError::new(
            D,
            path,
            "a boolean schema has no OpenAPI form; give the value a concrete type",
        ));
    };
    for key in ["allOf", "not", "if"] {
        if object.contains_key(key) {
            return Err(DialectError::new(
                D,
                &visit::join(path, key),
                format!("`{key}` has no Gemini form; describe the value with one schema"),
            ));
        }
    }
    if let Some(one_of) = object.remove("oneOf") {
        object.insert("anyOf".into(), one_of);
    }
    if let Some(value) = object.remove("const") {
        object.insert("enum".into(), json!([value]));
    }
    let mut nullable = false;
    if let Some(Value::Array(types)) = object.get("type").cloned() {
        nullable = types.iter().any(|t| t == "null");
        let concrete: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
        match concrete.as_slice() {
            [single] => {
                object.insert("type".into(), single.clone());
            }
            _ => {
                return Err(DialectError::new(
                    D,
                    path,
                    "a value of several types has no Gemini form; use a tagged enum or one type",
                ));
            }
        }
    }
    if let Some(Value::Array(members)) = object.get_mut("anyOf") {
        let before = members.len();
        members.retain(|m| !is_null_schema(m));
        nullable |= members.len() != before;
        // `anyOf: [T, null]` is just a nullable `T`.
        if members.len() == 1
            && !object.contains_key("type")
            && let Some(Value::Object(single)) = object
                .remove("anyOf")
                .and_then(|m| m.as_array().and_then(|m| m.first().cloned()))
        {
            for (key, value) in single {
                object.entry(key).or_insert(value);
            }
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        let before = values.len();
        values.retain(|v| !v.is_null());
        nullable |= values.len() != before;
        if values.iter().any(|v| !v.is_string()) {
            enum_as_strings(object, path)?;
        }
        object
            .entry("type")
            .or_insert_with(|| Value::String("string".into()));
    }
    if nullable {
        object.insert("nullable".into(), Value::Bool(true));
    }
    // What Gemini drops, the model still reads, as strict mode does for `default`.
    if let Some(Value::String(format)) = object.get("format")
        && !FORMATS.contains(&format.as_str())
    {
        // A number's width (`uint32`) tells the model nothing the type does not; a string's
        // format (`date`, `email`) does.
        let width = format.starts_with("int") || format.starts_with("uint");
        let sentence = format!(
            "Format: {}.",
            notes::value_text(&Value::String(format.clone()))
        );
        object.remove("format");
        if !width {
            notes::append(object, "format", &sentence);
        }
    }
    if object.get("optional") == Some(&Value::Bool(true)) {
        notes::append(object, "optional", "Optional.");
    }
    object.retain(|key, _| ALLOWED.contains(&key.as_str()));
    Ok(())
}

/// Gemini enums hold only strings. An enum of numbers or booleans is the same enum spelled
/// as strings (`[1, 2]` → `["1", "2"]`, typed `string`), which loses nothing: validation
/// reads `"2"` back as the number `2` (the canonical schema still says which), and the
/// description says so. A mix of strings and other values has no such spelling.
fn enum_as_strings(object: &mut Map<String, Value>, path: &str) -> Result<(), DialectError> {
    let Some(Value::Array(values)) = object.get("enum") else {
        return Ok(());
    };
    if !values.iter().all(|v| v.is_number() || v.is_boolean()) {
        return Err(DialectError::new(
            D,
            &visit::join(path, "enum"),
            "Gemini enums hold only strings, and this one mixes strings with other values; use string values (e.g. serde renames), or another dialect",
        ));
    }
    let spelled: Vec<Value> = values
        .iter()
        .map(|v| Value::String(v.to_string()))
        .collect();
    let listed: Vec<String> = values.iter().map(Value::to_string).collect();
    let kind = if values.iter().all(Value::is_boolean) {
        "boolean"
    } else {
        "number"
    };
    object.insert("enum".into(), Value::Array(spelled));
    object.insert("type".into(), Value::String("string".into()));
    object.remove("format");
    object.remove("minimum");
    object.remove("maximum");
    notes::append(
        object,
        "sent as a string",
        &format!(
            "One of the {kind}s {}, sent as a string; it is read as the {kind}.",
            listed.join(", ")
        ),
    );
    Ok(())
}

pub(super) fn check(schema: &Value, root: &str, problems: &mut Vec<String>) {
    visit_all(schema, root, &mut |path, node| {
        let Some(object) = node.as_object() else {
            problems.push(format!("{path}: boolean schemas are not allowed"));
            return;
        };
        for key in object.keys() {
            if !ALLOWED.contains(&key.as_str()) {
                problems.push(format!("{path}: `{key}` is outside the OpenAPI subset"));
            }
        }
        if object.get("type").is_some_and(Value::is_array) {
            problems.push(format!("{path}: type arrays are not allowed"));
        }
        if object
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|v| !v.is_string()))
        {
            problems.push(format!("{path}: enum values must be strings"));
        }
        if object
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(is_null_schema))
        {
            problems.push(format!("{path}: null belongs in `nullable`, not `anyOf`"));
        }
    });
}
