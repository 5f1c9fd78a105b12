//! Provider dialects over a set of tricky canonical schemas: snapshots of every dialect's
//! wire form (or its error), each output held to its dialect's rules by the walkers, and the
//! exact errors for what a dialect cannot express.

use pi_tools::dialect::{Dialect, DialectError, check, tool_schema, transform};
use serde_json::{Map, Value, json};
use support::FakeTool;

fn point() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to look at"},
            "line": {"type": "integer", "minimum": 0}
        },
        "required": ["path"]
    })
}

/// The tricky argument types, written as the canonical form SCHEMA.md defines.
fn fixtures() -> Vec<(&'static str, Value)> {
    vec![
        (
            "nested_struct",
            json!({
                "type": "object",
                "properties": {
                    "target": point(),
                    "note": {"type": "string", "description": "Free text"}
                },
                "required": ["target"]
            }),
        ),
        (
            "vec_of_struct",
            json!({
                "type": "object",
                "properties": {
                    "edits": {
                        "type": "array",
                        "description": "Replacements to apply in order",
                        "items": {
                            "type": "object",
                            "properties": {
                                "oldText": {"type": "string"},
                                "newText": {"type": "string"}
                            },
                            "required": ["oldText", "newText"]
                        }
                    }
                },
                "required": ["edits"]
            }),
        ),
        (
            "unit_enum",
            json!({
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["fast", "thorough"], "description": "How hard to try"}
                },
                "required": []
            }),
        ),
        (
            "tagged_enum",
            json!({
                "type": "object",
                "properties": {
                    "shape": {
                        "oneOf": [
                            {
                                "type": "object",
                                "description": "A circle",
                                "properties": {
                                    "kind": {"type": "string", "const": "circle"},
                                    "radius": {"type": "number"}
                                },
                                "required": ["kind", "radius"]
                            },
                            {
                                "type": "object",
                                "description": "A square",
                                "properties": {
                                    "kind": {"type": "string", "const": "square"},
                                    "side": {"type": "number"}
                                },
                                "required": ["kind", "side"]
                            }
                        ]
                    }
                },
                "required": ["shape"]
            }),
        ),
        (
            "map",
            json!({
                "type": "object",
                "properties": {
                    "env": {
                        "type": "object",
                        "description": "Extra environment variables",
                        "additionalProperties": {"type": "string"}
                    }
                },
                "required": ["env"]
            }),
        ),
        (
            "optional_struct",
            json!({
                "type": "object",
                "properties": {
                    "options": {
                        "type": "object",
                        "description": "Tuning knobs",
                        "properties": {"verbose": {"type": "boolean", "default": false}},
                        "required": []
                    }
                },
                "required": []
            }),
        ),
        (
            "recursive",
            json!({
                "type": "object",
                "properties": {"tree": {"$ref": "#/$defs/Node", "description": "The root node"}},
                "required": ["tree"],
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                        },
                        "required": ["name", "children"]
                    }
                }
            }),
        ),
        (
            "root_tagged_enum",
            json!({
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"op": {"type": "string", "const": "get"}, "key": {"type": "string"}},
                        "required": ["op", "key"]
                    },
                    {
                        "type": "object",
                        "properties": {"op": {"type": "string", "const": "clear"}},
                        "required": ["op"]
                    }
                ]
            }),
        ),
    ]
}

fn tool(name: &str, parameters: Value) -> FakeTool {
    FakeTool::new(name)
        .description("Does something tricky.")
        .parameters(parameters)
}

/// Every dialect's wire form of a fixture (or its error text), each checked by its walker.
fn all_dialects(def: &FakeTool) -> Value {
    let mut out = Map::new();
    for dialect in Dialect::ALL {
        let rendered = match tool_schema(def, dialect) {
            Ok(wire) => {
                if let Err(problems) = check(dialect, &wire) {
                    panic!(
                        "{dialect} output of {} breaks its rules: {problems:#?}",
                        def.spec.name
                    );
                }
                wire
            }
            Err(e) => json!({"error": e.to_string()}),
        };
        out.insert(dialect.to_string(), rendered);
    }
    Value::Object(out)
}

#[test]
fn snapshots_of_every_dialect_over_tricky_types() {
    for (name, schema) in fixtures() {
        let def = tool(name, schema);
        insta::assert_json_snapshot!(name, all_dialects(&def));
    }
}

#[test]
fn mcp_and_openai_carry_the_canonical_schema_unchanged() {
    for (name, schema) in fixtures()
        .into_iter()
        .filter(|(n, _)| *n != "root_tagged_enum")
    {
        let def = tool(name, schema.clone());
        let mcp = tool_schema(&def, Dialect::Mcp).expect("mcp expresses everything");
        assert_eq!(mcp["inputSchema"], schema);
        let openai = tool_schema(&def, Dialect::OpenAi).expect("openai expresses everything");
        assert_eq!(openai["function"]["parameters"], schema);
    }
}

#[test]
fn strict_makes_optional_properties_required_and_nullable() {
    let out = transform(&fixtures()[0].1, Dialect::OpenAiStrict).expect("nested struct");
    assert_eq!(out["required"], json!(["target", "note"]));
    assert_eq!(
        out["properties"]["note"],
        json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Free text"})
    );
    assert_eq!(out["additionalProperties"], json!(false));
    let target = &out["properties"]["target"];
    assert_eq!(target["additionalProperties"], json!(false));
    assert_eq!(target["required"], json!(["path", "line"]));
    assert_eq!(
        target["properties"]["line"],
        json!({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]})
    );
}

/// Issue: strict mode drops `default`, and the model, which sends `null` for "absent",
/// could not know what `null` stands for. The description says it.
#[test]
fn strict_says_a_dropped_default_in_the_description() {
    let schema = json!({
        "type": "object",
        "properties": {
            "to": {"$ref": "#/$defs/Unit", "description": "The unit to convert to", "default": "celsius"},
            "digits": {"type": "integer", "description": "Digits after the point.", "default": 2},
            "exact": {"type": "boolean", "default": false},
            "dir": {"type": "string", "default": "."},
            "limit": {"type": "integer", "description": "At most this many (default: 10).", "default": 10}
        },
        "$defs": {"Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}
    });
    let out = transform(&schema, Dialect::OpenAiStrict).expect("expressible");
    assert_eq!(
        out["properties"]["to"],
        json!({"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}],
               "description": "The unit to convert to. Default: celsius."})
    );
    assert_eq!(
        out["properties"]["digits"],
        json!({"anyOf": [{"type": "integer"}, {"type": "null"}],
               "description": "Digits after the point. Default: 2."})
    );
    assert_eq!(
        out["properties"]["exact"]["description"],
        json!("Default: false.")
    );
    assert_eq!(
        out["properties"]["dir"]["description"],
        json!("Default: \".\".")
    );
    // A description that says its default already is not told twice.
    assert_eq!(
        out["properties"]["limit"]["description"],
        json!("At most this many (default: 10).")
    );
    // The dialects that keep `default` keep the description as it was.
    let plain = transform(&schema, Dialect::OpenAi).expect("expressible");
    assert_eq!(
        plain["properties"]["to"]["description"],
        json!("The unit to convert to")
    );
}

#[test]
fn strict_turns_one_of_into_any_of_and_ref_siblings_into_a_wrapper() {
    let out = transform(&fixtures()[3].1, Dialect::OpenAiStrict).expect("tagged enum");
    assert!(out["properties"]["shape"].get("oneOf").is_none());
    assert_eq!(
        out["properties"]["shape"]["anyOf"].as_array().map(Vec::len),
        Some(2)
    );
    let out = transform(&fixtures()[6].1, Dialect::OpenAiStrict).expect("recursive");
    assert_eq!(
        out["properties"]["tree"],
        json!({"anyOf": [{"$ref": "#/$defs/Node"}], "description": "The root node"})
    );
    assert_eq!(out["$defs"]["Node"]["additionalProperties"], json!(false));
}

fn error(schema: &Value, dialect: Dialect) -> DialectError {
    match transform(schema, dialect) {
        Ok(out) => panic!("{dialect} should refuse, produced {out:#}"),
        Err(e) => e,
    }
}

#[test]
fn a_map_is_an_error_in_openai_strict_and_gemini_naming_the_path() {
    let map = &fixtures()[4].1;
    for dialect in [Dialect::OpenAiStrict, Dialect::Gemini] {
        let e = error(map, dialect);
        assert_eq!(e.path, "/properties/env/additionalProperties");
        assert_eq!(e.dialect, dialect);
        assert!(e.reason.contains("a map with arbitrary keys"), "{e}");
    }
    let def = tool("setenv", map.clone());
    let e = tool_schema(&def, Dialect::OpenAiStrict).expect_err("a map is not strict");
    assert_eq!(
        e.to_string(),
        "the schema of tool `setenv` cannot be expressed in the openai-strict dialect at \
         `/properties/env/additionalProperties`: a map with arbitrary keys has no strict-mode \
         form; use a list of `{key, value}` objects instead, or use the openai dialect"
    );
}

#[test]
fn a_root_tagged_enum_is_an_error_in_every_dialect() {
    let root = &fixtures()[7].1;
    let e = error(root, Dialect::Anthropic);
    assert_eq!(e.path, "");
    assert!(e.reason.contains("a union (`oneOf`) at the root"), "{e}");
    assert!(
        e.to_string()
            .contains("in the anthropic dialect at `/`: a union"),
        "{e}"
    );
    for dialect in Dialect::ALL {
        assert_eq!(error(root, dialect).path, "");
    }
}

#[test]
fn recursion_is_an_error_in_gemini_at_the_recursive_reference() {
    let e = error(&fixtures()[6].1, Dialect::Gemini);
    assert_eq!(e.path, "/properties/tree/properties/children/items");
    assert!(e.reason.starts_with("`Node` refers to itself"), "{e}");
}

#[test]
fn gemini_inlines_non_recursive_references_and_rewrites_keywords() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Leaf", "description": "first"},
            "b": {"$ref": "#/$defs/Leaf"},
            "c": {"type": ["integer", "null"], "format": "uint32"},
            "d": {"type": "string", "const": "only"},
            "e": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": [], "additionalProperties": false}
        },
        "required": ["a"],
        "$defs": {"Leaf": {"type": "string", "description": "a leaf", "minLength": 1}}
    });
    let out = transform(&schema, Dialect::Gemini).expect("no recursion");
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "description": "first", "minLength": 1},
                "b": {"type": "string", "description": "a leaf", "minLength": 1},
                "c": {"type": "integer", "nullable": true},
                "d": {"type": "string", "enum": ["only"]},
                "e": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": []}
            },
            "required": ["a"]
        })
    );
}

#[test]
fn anthropic_splits_type_arrays_into_any_of() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": ["integer", "null"], "minimum": 1, "description": "count"}},
        "required": []
    });
    let out = transform(&schema, Dialect::Anthropic).expect("expressible");
    assert_eq!(
        out["properties"]["n"],
        json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "description": "count"})
    );
}

#[test]
fn strict_refuses_values_of_any_type_and_open_objects() {
    let any = json!({"type": "object", "properties": {"v": {"description": "anything"}}, "required": ["v"]});
    let e = error(&any, Dialect::OpenAiStrict);
    assert_eq!(e.path, "/properties/v");
    assert!(e.reason.starts_with("an arbitrary JSON value"), "{e}");
    let open =
        json!({"type": "object", "properties": {"o": {"type": "object"}}, "required": ["o"]});
    let e = error(&open, Dialect::OpenAiStrict);
    assert_eq!(e.path, "/properties/o");
    let all_of = json!({"type": "object", "properties": {"o": {"allOf": [{"type": "string"}]}}, "required": []});
    assert_eq!(
        error(&all_of, Dialect::OpenAiStrict).path,
        "/properties/o/allOf"
    );
}

#[test]
fn walkers_catch_rule_violations() {
    let strict = json!({
        "type": "function",
        "function": {
            "name": "t", "description": "d", "strict": true,
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"oneOf": [{"type": "string"}]}},
                "required": ["a"]
            }
        }
    });
    let problems = check(Dialect::OpenAiStrict, &strict).expect_err("violations");
    assert_eq!(
        problems,
        vec![
            "/function/parameters: needs `additionalProperties: false`".to_owned(),
            "/function/parameters: `required` must list every property ([\"a\", \"b\"]), has [\"a\"]".to_owned(),
            "/function/parameters/properties/b: `oneOf` is not allowed".to_owned(),
        ]
    );
    let gemini = json!({
        "name": "t", "description": "d",
        "parameters": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"type": ["string", "null"]}}, "$defs": {}}
    });
    let problems = check(Dialect::Gemini, &gemini).expect_err("violations");
    assert_eq!(
        problems,
        vec![
            "/parameters: `$defs` is outside the OpenAPI subset".to_owned(),
            "/parameters/properties/a: `$ref` is outside the OpenAPI subset".to_owned(),
            "/parameters/properties/b: type arrays are not allowed".to_owned(),
        ]
    );
    let anthropic = json!({"name": "t", "input_schema": {"anyOf": [{"type": "object"}]}});
    let problems = check(Dialect::Anthropic, &anthropic).expect_err("violations");
    assert_eq!(
        problems,
        vec![
            "/description: missing or not a string".to_owned(),
            "/input_schema: the root must be `\"type\": \"object\"`".to_owned(),
            "/input_schema: `anyOf` is not allowed at the root".to_owned(),
        ]
    );
}

#[test]
fn mcp_carries_title_and_annotations() {
    let read = FakeTool::new("read").label("Read file").read_only();
    let wire = tool_schema(&read, Dialect::Mcp).expect("mcp");
    assert_eq!(
        wire,
        json!({
            "name": "read",
            "title": "Read file",
            "description": "The read tool.",
            "inputSchema": {"type": "object", "properties": {}, "required": []},
            "annotations": {"readOnlyHint": true}
        })
    );
    let write = FakeTool::new("write").destructive();
    let wire = tool_schema(&write, Dialect::Mcp).expect("mcp");
    assert_eq!(
        wire["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
    // A tool with no label of its own is titled by its name.
    assert_eq!(wire["title"], "write");
    let plain = FakeTool::new("plain");
    assert!(
        tool_schema(&plain, Dialect::Mcp)
            .expect("mcp")
            .get("annotations")
            .is_none()
    );
}

#[test]
fn dialect_names_round_trip() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
    }
    assert_eq!(
        "claude".parse::<Dialect>(),
        Err(
            "unknown dialect `claude`: use one of mcp, openai, openai-strict, openai-responses, anthropic, gemini"
                .to_owned()
        )
    );
}

#[test]
fn gemini_folds_a_null_branch_into_nullable_and_spells_number_enums_as_strings() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "count"},
            "level": {"type": "integer", "enum": [1, 2]},
            "mixed": {"enum": [1, "a"]}
        },
        "required": []
    });
    // A mix of strings and numbers has no string spelling.
    let e = error(&schema, Dialect::Gemini);
    assert_eq!(e.path, "/properties/mixed/enum");
    let mut schema = schema;
    if let Some(properties) = schema["properties"].as_object_mut() {
        properties.remove("mixed");
    }
    let out = transform(&schema, Dialect::Gemini).expect("expressible");
    assert_eq!(
        out["properties"]["n"],
        json!({"type": "integer", "nullable": true, "description": "count"})
    );
    // Numbers become strings the validator reads back as numbers, and the model is told.
    assert_eq!(
        out["properties"]["level"],
        json!({
            "type": "string",
            "enum": ["1", "2"],
            "description": "One of the numbers 1, 2, sent as a string; it is read as the number."
        })
    );
}
