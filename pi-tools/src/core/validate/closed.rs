//! The parameter schema closed where a property it does not declare is an error: the
//! objects that `unknown_properties` checks (the root, and below it through `properties` and
//! `items`) get `additionalProperties: false` unless they welcome other keys. A call whose
//! arguments this schema accepts is valid and has no unknown property, so one pass of the
//! compiled validator settles the common case; only a call it refuses is walked again to say
//! what is wrong (the closest name, the coercions), as before.

use serde_json::Value;

/// `schema` closed as `unknown_properties` reads it, or `None` when the two could disagree:
/// `prefixItems` (whose elements `items` does not cover in JSON Schema, while
/// `unknown_properties` walks every element with `items`).
pub(super) fn closed_schema(schema: &Value) -> Option<Value> {
    if has_key(schema, "prefixItems") {
        return None;
    }
    let mut closed = schema.clone();
    close(&mut closed);
    Some(closed)
}

/// Closes `schema` and the schemas of its declared properties and items, as
/// `unknown_properties` would walk a value through them.
fn close(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for property in properties.values_mut() {
            close(property);
        }
    }
    if let Some(items) = object.get_mut("items") {
        close(items);
    }
    let Some(Value::Object(properties)) = object.get("properties") else {
        return;
    };
    // The same test as `unknown_properties`: `properties: {}` declares nothing, so any key is
    // welcome unless `additionalProperties: false` closes the object already.
    let additional = object.get("additionalProperties");
    let open = object.contains_key("patternProperties")
        || properties.is_empty()
        || additional.is_some_and(|a| a != &Value::Bool(false));
    if !open {
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
}

/// Whether `key` is a key of an object anywhere in `value`.
fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map.contains_key(key) || map.values().any(|v| has_key(v, key)),
        Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::unknown_properties;
    use super::*;

    /// What the closed schema's validator says of `args` is what the long way says: valid and
    /// no unknown property.
    fn agree(schema: Value, cases: &[Value]) {
        let plain = jsonschema::options().build(&schema).expect("a schema");
        let closed = jsonschema::options()
            .build(&closed_schema(&schema).expect("closed"))
            .expect("the closed schema compiles");
        for args in cases {
            let mut unknown = Vec::new();
            unknown_properties(&schema, args, "", &mut unknown);
            let long_way = unknown.is_empty() && plain.is_valid(args);
            assert_eq!(
                closed.is_valid(args),
                long_way,
                "{schema} with {args}: {unknown:?}"
            );
        }
    }

    #[test]
    fn nested_objects_and_arrays_of_objects_are_closed_where_the_walk_looks() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                    "required": ["old"]
                }},
                "meta": {"type": "object", "properties": {"a": {"type": "integer"}}}
            },
            "required": ["path"]
        });
        agree(
            schema,
            &[
                json!({"path": "a"}),
                json!({"path": "a", "file": "b"}),
                json!({"path": "a", "edits": [{"old": "x", "new": "y"}]}),
                json!({"path": "a", "edits": [{"old": "x", "neu": "y"}]}),
                json!({"path": "a", "edits": [{"new": "y"}]}),
                json!({"path": "a", "meta": {"a": 1}}),
                json!({"path": "a", "meta": {"b": 1}}),
                json!({"path": 1}),
                json!({}),
            ],
        );
    }

    #[test]
    fn objects_that_welcome_other_keys_stay_open() {
        for open in [
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true}),
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}}),
            json!({"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {}}}),
            json!({"type": "object", "properties": {}}),
            json!({"type": "object"}),
        ] {
            agree(
                open,
                &[
                    json!({"a": 1}),
                    json!({"b": 2}),
                    json!({"x1": "s"}),
                    json!({}),
                ],
            );
        }
        agree(
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            &[json!({}), json!({"a": 1})],
        );
    }

    #[test]
    fn keys_declared_only_in_a_branch_or_a_reference_are_unknown_both_ways() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/inner"}},
            "anyOf": [{"properties": {"b": {"type": "string"}}}],
            "$defs": {"inner": {"type": "object", "properties": {"c": {}}}}
        });
        agree(
            schema,
            &[
                json!({"a": {"c": 1}}),
                json!({"a": {"d": 1}}),
                json!({"b": "s"}),
                json!({"a": {}}),
            ],
        );
    }

    #[test]
    fn prefix_items_keep_the_long_way() {
        let schema = json!({"type": "array", "prefixItems": [{"type": "object"}],
                            "items": {"type": "object", "properties": {"a": {}}}});
        assert_eq!(closed_schema(&schema), None);
    }
}
