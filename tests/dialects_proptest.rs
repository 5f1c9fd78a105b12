//! Properties of the dialects and validation over random schemas drawn from the subset every
//! dialect accepts (objects with declared properties, arrays, strings with formats and enums,
//! integer and number enums, booleans, defaults, descriptions):
//! - every dialect renders every such schema, and its output keeps the dialect's rules
//!   ([`pi_tools::dialect::check`]);
//! - a value generated to satisfy the schema is never refused by validation (unknown
//!   properties refused too), and comes back unchanged;
//! - the same value as Gemini sends it (enum numbers as strings) is read back as the value.
//!
//! `PROPTEST_CASES` raises the number of cases (the default keeps the suite fast). With
//! `PI_TOOLS_DIALECT_SAMPLES=FILE`, every dialect's output of every case is also written to
//! FILE, a JSON object a line (`dialect`, `tool`), for the providers' own SDK types to check
//! (`tests/python/dialect_samples.py`, run by `scripts/python-sdk.sh`).

use pi_tools::ArgumentValidator;
use pi_tools::ToolResult;
use pi_tools::dialect::{Dialect, check, tool_schema};
use pi_tools::tool::{ToolSpec, from_fn};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// A leaf schema: a string (plain, with a format, or an enum), an integer (plain, bounded,
/// or an enum), a number (plain or an enum), or a boolean; some with a description or a
/// default.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string"})),
        Just(json!({"type": "string", "format": "date", "description": "A day"})),
        Just(json!({"type": "string", "minLength": 1, "default": "x"})),
        prop::collection::btree_set("[a-z]{1,6}", 1..4).prop_map(
            |values| json!({"type": "string", "enum": values.into_iter().collect::<Vec<_>>()})
        ),
        Just(json!({"type": "integer"})),
        Just(json!({"type": "integer", "minimum": 0, "default": 3})),
        prop::collection::btree_set(-5i64..50, 1..4).prop_map(
            |values| json!({"type": "integer", "enum": values.into_iter().collect::<Vec<_>>()})
        ),
        prop::collection::btree_set(-5i64..50, 1..3).prop_map(|values| {
            json!({"enum": values.into_iter().map(|v| json!(v as f64 / 2.0)).collect::<Vec<_>>()})
        }),
        Just(json!({"type": "number", "description": "How much"})),
        Just(json!({"type": "boolean"})),
    ]
}

/// An object schema with 1 to 4 declared properties, some required.
fn object(inner: impl Strategy<Value = Value> + Clone) -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-z][a-z_]{0,7}", (inner, any::<bool>()), 1..5).prop_map(
        |fields| {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for (name, (schema, is_required)) in fields {
                if is_required {
                    required.push(Value::String(name.clone()));
                }
                properties.insert(name, schema);
            }
            json!({"type": "object", "properties": properties, "required": required})
        },
    )
}

/// A parameter schema: leaves, arrays and objects nested up to three levels.
fn parameters() -> impl Strategy<Value = Value> {
    let nested = leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            inner
                .clone()
                .prop_map(|items| json!({"type": "array", "items": items})),
            object(inner),
        ]
    });
    object(nested)
}

/// A small deterministic generator, so a value follows its schema without a strategy of its
/// own.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A value `schema` accepts: every required property, some optional ones.
fn value_for(schema: &Value, rng: &mut Rng) -> Value {
    if let Some(Value::Array(members)) = schema.get("enum") {
        return members[rng.below(members.len())].clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                if required.contains(&name.as_str()) || rng.below(2) == 0 {
                    out.insert(name.clone(), value_for(property, rng));
                }
            }
            Value::Object(out)
        }
        Some("array") => Value::Array(
            (0..rng.below(3))
                .map(|_| value_for(&schema["items"], rng))
                .collect(),
        ),
        Some("string") if schema.get("format").is_some() => json!("2024-02-29"),
        Some("string") => json!(format!("s{}", rng.below(100))),
        Some("integer") => json!(rng.below(100)),
        Some("number") => json!(rng.below(100) as f64 + 0.25),
        Some("boolean") => json!(rng.below(2) == 0),
        _ => Value::Null,
    }
}

/// `value` as Gemini sends it for `schema`: the members of enums of numbers as strings.
fn gemini_spelling(schema: &Value, value: &Value) -> Value {
    if let Some(Value::Array(members)) = schema.get("enum")
        && members.iter().any(Value::is_number)
    {
        return Value::String(value.to_string());
    }
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), gemini_spelling(&schema["properties"][k], v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| gemini_spelling(&schema["items"], v))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Appends a dialect's output to the samples file, when one is named.
fn sample(dialect: Dialect, wire: &Value) {
    use std::io::Write;
    let Some(path) = std::env::var_os("PI_TOOLS_DIALECT_SAMPLES") else {
        return;
    };
    let line = json!({"dialect": dialect.as_str(), "tool": wire}).to_string();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the samples file opens");
    writeln!(file, "{line}").expect("the sample is written");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(128)
    ))]

    #[test]
    fn every_dialect_renders_the_accepted_subset_by_its_rules(schema in parameters()) {
        let spec = ToolSpec::new("t", "A tool.", schema.clone());
        let tool = from_fn(spec, |_, _| async { Ok(ToolResult::text("ok")) });
        for dialect in Dialect::ALL {
            let wire = tool_schema(tool.as_ref(), dialect);
            prop_assert!(wire.is_ok(), "{dialect}: {:?}\n{schema}", wire.err());
            if let Ok(wire) = wire {
                let checked = check(dialect, &wire);
                prop_assert!(checked.is_ok(), "{dialect}: {checked:?}\n{wire}");
                sample(dialect, &wire);
            }
        }
    }

    #[test]
    fn valid_values_are_never_refused_and_gemini_spellings_read_back(
        schema in parameters(),
        seed in 1u64..u64::MAX,
    ) {
        let validator = ArgumentValidator::new(&schema)
            .expect("the schema compiles")
            .rejecting_unknown_properties(true);
        let value = value_for(&schema, &mut Rng(seed));
        let checked = validator.validate("t", value.clone());
        prop_assert_eq!(checked.as_ref(), Ok(&value), "{}", schema);
        let spelled = gemini_spelling(&schema, &value);
        let read = validator.validate("t", spelled.clone());
        prop_assert_eq!(read.as_ref(), Ok(&value), "{} sent as {}", schema, spelled);
    }
}
