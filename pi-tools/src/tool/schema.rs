//! The canonical parameter schema: one JSON Schema 2020-12 object per tool, free of the
//! constructs providers disagree about, from which every provider dialect is derived.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The canonical schema of `T` (the arguments of a tool).
///
/// schemars generates it with subschemas inlined and no meta-schema; [`canonicalize`] then
/// removes what schemars cannot be told to leave out.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Args {
///     /// Path to the file.
///     path: String,
///     limit: Option<u32>,
/// }
/// let schema = pi_tools::tool::schema::canonical_schema::<Args>();
/// assert_eq!(
///     schema,
///     serde_json::json!({
///         "type": "object",
///         "properties": {
///             "path": {"type": "string", "description": "Path to the file."},
///             "limit": {"type": "integer", "minimum": 0}
///         },
///         "required": ["path"]
///     })
/// );
/// ```
pub fn canonical_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    canonicalize(generator.into_root_schema_for::<T>().to_value())
}

/// Rewrites a schema into the canonical form:
/// - no `$schema`, and no `title` or `description` on the root (the tool's description
///   carries that);
/// - `$ref`s into `$defs` inlined, except those that take part in a recursion, which stay as
///   references to the remaining `$defs`;
/// - a property that is not required loses the `null` schemars adds for `Option<T>`
///   (`["T", "null"]` becomes `"T"`, `anyOf: [T, {"type": "null"}]` becomes `T`);
/// - `format` dropped from integers and numbers (`uint64`, `int32`, `double`, …);
/// - the root always lists `required`, empty when nothing is.
pub fn canonicalize(schema: Value) -> Value {
    canonicalize_with(schema, Optional::NotRequired)
}

/// The schema of a tool's structured result of type `T` (its output schema): the canonical
/// form of [`canonicalize`], with two differences that follow from a value being written
/// rather than read. The root keeps `T`'s doc comment as its `description` (no tool
/// description stands in for it), and an `Option` field keeps its `null` (serde writes
/// `None` as `null` unless told to skip it, and the value must validate against its own
/// schema).
///
/// ```
/// /// How a division went.
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Quotient {
///     /// The result.
///     value: f64,
///     remainder: Option<i64>,
/// }
/// let schema = pi_tools::tool::schema::output_schema::<Quotient>();
/// assert_eq!(
///     schema,
///     serde_json::json!({
///         "description": "How a division went.",
///         "type": "object",
///         "properties": {
///             "value": {"type": "number", "description": "The result."},
///             "remainder": {"type": ["integer", "null"]}
///         },
///         "required": ["value"]
///     })
/// );
/// ```
pub fn output_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>().to_value();
    let description = schema.get("description").cloned();
    let mut schema = canonicalize_with(schema, Optional::KeepsNull);
    if let (Some(description), Value::Object(root)) = (description, &mut schema) {
        let mut with = Map::new();
        with.insert("description".to_owned(), description);
        with.extend(std::mem::take(root));
        *root = with;
    }
    schema
}

/// What canonicalisation does with the `null` of a property that is not required.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Optional {
    /// Drops it: an absent argument is how a model leaves a parameter out.
    NotRequired,
    /// Keeps it: a written `None` is `null`.
    KeepsNull,
}

fn canonicalize_with(schema: Value, optional: Optional) -> Value {
    let Value::Object(mut root) = schema else {
        return schema;
    };
    root.remove("$schema");
    root.remove("title");
    root.remove("description");
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let mut kept = Map::new();
    let mut root = Value::Object(root);
    inline_refs(&mut root, &defs, &mut Vec::new(), &mut kept);
    // Definitions kept for recursion may themselves refer to others; `Null` marks one that
    // is referred to but not yet resolved.
    while let Some(name) = kept
        .iter()
        .find(|(_, v)| v.is_null())
        .map(|(k, _)| k.clone())
    {
        let mut def = defs.get(&name).cloned().unwrap_or(Value::Bool(true));
        let mut more = Map::new();
        inline_refs(&mut def, &defs, &mut vec![name.clone()], &mut more);
        kept.insert(name, def);
        for key in more.keys() {
            kept.entry(key.clone()).or_insert(Value::Null);
        }
    }
    tidy(&mut root, optional);
    for def in kept.values_mut() {
        tidy(def, optional);
    }
    let Value::Object(mut root) = root else {
        return root;
    };
    if root.get("type").and_then(Value::as_str) == Some("object") && !root.contains_key("required")
    {
        root.insert("required".to_owned(), Value::Array(Vec::new()));
    }
    if !kept.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(kept));
    }
    Value::Object(root)
}

/// Replaces every `{"$ref": "#/$defs/X", ...}` with the definition of `X` (siblings of the
/// reference win over the definition's keys), unless `X` is already being inlined further up
/// (a recursion): then the reference stays and `X` is recorded in `kept`.
fn inline_refs(
    value: &mut Value,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
    kept: &mut Map<String, Value>,
) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .map(str::to_owned)
            {
                if stack.contains(&name) {
                    kept.entry(name).or_insert(Value::Null);
                    return;
                }
                if let Some(Value::Object(def)) = defs.get(&name) {
                    map.remove("$ref");
                    for (k, v) in def {
                        map.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                    stack.push(name);
                    for v in map.values_mut() {
                        inline_refs(v, defs, stack, kept);
                    }
                    stack.pop();
                    return;
                }
            }
            for v in map.values_mut() {
                inline_refs(v, defs, stack, kept);
            }
        }
        Value::Array(items) => {
            for v in items {
                inline_refs(v, defs, stack, kept);
            }
        }
        _ => {}
    }
}

/// Drops number formats and (unless `optional` keeps it) the `null` alternative of optional
/// properties, everywhere.
fn tidy(value: &mut Value, optional: Optional) {
    match value {
        Value::Object(map) => {
            let is_numeric =
                |t: &Value| t.as_str().is_some_and(|t| t == "integer" || t == "number");
            let numeric = match map.get("type") {
                Some(Value::Array(types)) => types.iter().any(is_numeric),
                Some(t) => is_numeric(t),
                None => false,
            };
            if numeric {
                map.remove("format");
            }
            let required: Vec<String> = match map.get("required") {
                Some(Value::Array(r)) => r
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            };
            if let Some(Value::Object(props)) = map.get_mut("properties")
                && optional == Optional::NotRequired
            {
                for (name, prop) in props.iter_mut() {
                    if !required.contains(name) {
                        strip_null(prop);
                    }
                }
            }
            for v in map.values_mut() {
                tidy(v, optional);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| tidy(v, optional)),
        _ => {}
    }
}

/// `{"type": ["T", "null"]}` → `{"type": "T"}`; `{"anyOf": [S, {"type": "null"}]}` → `S`
/// (keeping the outer keys such as `description`); a `null` default is dropped as well.
fn strip_null(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Array(types)) = map.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if rest.len() < types.len() {
            let new = if rest.len() == 1 {
                rest[0].clone()
            } else {
                Value::Array(rest)
            };
            map.insert("type".to_owned(), new);
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
        }
    }
    if let Some(Value::Array(alts)) = map.get("anyOf") {
        let rest: Vec<Value> = alts
            .iter()
            .filter(|s| !is_null_schema(s))
            .cloned()
            .collect();
        if rest.len() == 1 && alts.len() == 2 {
            let inner = rest.into_iter().next().unwrap_or(Value::Null);
            map.remove("anyOf");
            if let Value::Object(inner) = inner {
                for (k, v) in inner {
                    map.entry(k).or_insert(v);
                }
            }
        }
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
}
