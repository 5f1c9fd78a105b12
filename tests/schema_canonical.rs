//! The canonical schema of representative argument types, and the agreement between what
//! serde produces and what the schema accepts.

use pi_tools::ArgumentValidator;
use pi_tools::tool::schema::{canonical_schema, canonicalize};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A point on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Position {
    /// Line number (1-indexed).
    line: u32,
    /// Column (1-indexed).
    column: u32,
}

/// How to apply the edit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Strategy {
    Exact,
    Fuzzy,
}

/// One replacement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Replacement {
    /// Text to find.
    #[serde(rename = "oldText")]
    old_text: String,
    /// Text to put instead.
    #[serde(rename = "newText")]
    new_text: String,
    /// Where to start looking.
    at: Option<Position>,
}

fn default_retries() -> u8 {
    3
}

/// The arguments (this title and description never reach the schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct EditArgs {
    /// The file to edit.
    path: String,
    /// The replacements, applied in order.
    edits: Vec<Replacement>,
    /// Matching strategy.
    strategy: Strategy,
    /// The position to report.
    anchor: Option<Position>,
    /// How often to retry.
    #[serde(default = "default_retries")]
    retries: u8,
    /// Offset of the first byte.
    offset: Option<i64>,
    /// Scale factor.
    #[serde(default)]
    scale: f64,
}

#[test]
fn the_canonical_schema_of_a_representative_struct() {
    insta::assert_json_snapshot!("edit_args", canonical_schema::<EditArgs>());
}

#[test]
fn the_canonical_schema_has_no_refs_formats_nulls_or_root_title() {
    let schema = canonical_schema::<EditArgs>();
    let text = schema.to_string();
    for banned in [
        "$ref",
        "$defs",
        "$schema",
        "\"format\"",
        "\"null\"",
        "anyOf",
    ] {
        assert!(!text.contains(banned), "{banned} in {text}");
    }
    assert!(schema.get("title").is_none());
    assert!(schema.get("description").is_none());
    assert_eq!(
        schema["required"],
        json!(["path", "edits", "strategy"]),
        "optional and defaulted fields are not required"
    );
    assert_eq!(schema["properties"]["anchor"]["type"], json!("object"));
    assert_eq!(
        schema["properties"]["offset"],
        json!({"type": "integer", "description": "Offset of the first byte."})
    );
}

#[derive(Deserialize, JsonSchema)]
struct NoRequired {
    #[expect(dead_code, reason = "only its schema is looked at")]
    verbose: Option<bool>,
}

#[test]
fn required_is_present_even_when_empty() {
    assert_eq!(
        canonical_schema::<NoRequired>(),
        json!({"type": "object", "properties": {"verbose": {"type": "boolean"}}, "required": []})
    );
}

/// A directory tree.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
struct TreeArgs {
    root: Tree,
}

#[test]
fn recursive_types_keep_their_definition() {
    let schema = canonical_schema::<TreeArgs>();
    assert!(
        schema.to_string().contains(r##""$ref":"#/$defs/Tree""##),
        "{schema}"
    );
    assert_eq!(
        schema["$defs"]["Tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Tree"})
    );
    let validator = ArgumentValidator::new(&schema).expect("a valid schema");
    let sample = TreeArgs {
        root: Tree {
            name: "a".into(),
            children: vec![Tree {
                name: "b".into(),
                children: vec![],
            }],
        },
    };
    let value = serde_json::to_value(&sample).expect("serialisable");
    assert_eq!(validator.validate("tree", value.clone()), Ok(value));
    assert!(
        validator
            .validate(
                "tree",
                json!({"root": {"name": "a", "children": [{"name": 1}]}})
            )
            .is_err()
    );
}

#[test]
fn canonicalize_strips_null_type_arrays_of_optional_properties_only() {
    let input = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "X",
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": ["string", "null"]},
            "c": {"anyOf": [{"type": "object"}, {"type": "null"}], "description": "C."}
        },
        "required": ["b"]
    });
    assert_eq!(
        canonicalize(input),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": ["string", "null"]},
                "c": {"type": "object", "description": "C."}
            },
            "required": ["b"]
        })
    );
}

fn samples() -> Vec<EditArgs> {
    vec![
        EditArgs {
            path: "src/lib.rs".into(),
            edits: vec![Replacement {
                old_text: "a".into(),
                new_text: "b".into(),
                at: Some(Position { line: 1, column: 2 }),
            }],
            strategy: Strategy::Fuzzy,
            anchor: None,
            retries: 0,
            offset: Some(-4),
            scale: 1.5,
        },
        EditArgs {
            path: String::new(),
            edits: vec![],
            strategy: Strategy::Exact,
            anchor: Some(Position { line: 9, column: 9 }),
            retries: 255,
            offset: None,
            scale: 0.0,
        },
    ]
}

#[test]
fn what_serde_produces_validates_and_what_validates_deserializes() {
    let validator =
        ArgumentValidator::new(&canonical_schema::<EditArgs>()).expect("a valid schema");
    for sample in samples() {
        let value = serde_json::to_value(&sample).expect("serialisable");
        let validated = validator
            .validate("edit", value)
            .expect("serde output validates");
        let back: EditArgs =
            serde_json::from_value(validated).expect("validated JSON deserializes");
        assert_eq!(back, sample);
    }
    // Minimal input: optional fields absent or null, defaults applied by serde.
    for input in [
        json!({"path": "a", "edits": [], "strategy": "exact"}),
        json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}], "strategy": "fuzzy", "anchor": null, "offset": null}),
    ] {
        let validated = validator.validate("edit", input).expect("validates");
        let args: EditArgs = serde_json::from_value(validated).expect("deserializes");
        assert_eq!(args.retries, 3);
        assert_eq!(args.anchor, None);
    }
    // What the schema rejects, serde would reject too.
    for bad in [
        json!({"path": "a", "edits": [], "strategy": "loose"}),
        json!({"path": "a", "edits": [{"oldText": "x"}], "strategy": "exact"}),
        json!({"path": "a", "edits": [], "strategy": "exact", "retries": 300}),
    ] {
        assert!(validator.validate("edit", bad.clone()).is_err(), "{bad}");
        assert!(
            serde_json::from_value::<EditArgs>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}
