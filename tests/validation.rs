//! Argument coercion and validation (BEHAVIOUR.md §2).

use pi_tools::{ArgumentValidator, coerce_arguments};
use serde_json::{Value, json};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "label": {"type": "string"},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer"}},
                "required": []
            },
            "maybe": {"type": "string"}
        },
        "required": ["count"]
    })
}

fn validate(args: Value) -> Result<Value, String> {
    ArgumentValidator::new(&schema())
        .expect("schema compiles")
        .validate("demo", args)
}

#[test]
fn numeric_strings_become_numbers() {
    assert_eq!(validate(json!({"count": "5"})), Ok(json!({"count": 5})));
    assert_eq!(
        validate(json!({"count": 1, "ratio": "0.25"})),
        Ok(json!({"count": 1, "ratio": 0.25}))
    );
    assert_eq!(validate(json!({"count": " 42 "})), Ok(json!({"count": 42})));
}

#[test]
fn boolean_strings_become_booleans() {
    assert_eq!(
        validate(json!({"count": 1, "flag": "true"})),
        Ok(json!({"count": 1, "flag": true}))
    );
    assert_eq!(
        validate(json!({"count": 1, "flag": "false"})),
        Ok(json!({"count": 1, "flag": false}))
    );
}

#[test]
fn numbers_and_booleans_become_strings() {
    assert_eq!(
        validate(json!({"count": 1, "label": 12})),
        Ok(json!({"count": 1, "label": "12"}))
    );
    assert_eq!(
        validate(json!({"count": 1, "label": true})),
        Ok(json!({"count": 1, "label": "true"}))
    );
}

#[test]
fn array_items_are_coerced() {
    assert_eq!(
        validate(json!({"count": 1, "ids": ["1", 2]})),
        Ok(json!({"count": 1, "ids": [1, 2]}))
    );
}

#[test]
fn json_encoded_arrays_and_objects_are_parsed() {
    assert_eq!(
        validate(json!({"count": 1, "ids": "[1,2]"})),
        Ok(json!({"count": 1, "ids": [1, 2]}))
    );
    assert_eq!(
        validate(json!({"count": 1, "ids": "[\"3\"]"})),
        Ok(json!({"count": 1, "ids": [3]}))
    );
    assert_eq!(
        validate(json!({"count": 1, "opts": "{\"depth\": \"2\"}"})),
        Ok(json!({"count": 1, "opts": {"depth": 2}}))
    );
}

#[test]
fn null_for_an_optional_parameter_means_absent() {
    assert_eq!(
        validate(json!({"count": 1, "maybe": null, "opts": null})),
        Ok(json!({"count": 1}))
    );
}

#[test]
fn null_for_a_required_parameter_is_an_error() {
    let err = validate(json!({"count": null})).unwrap_err();
    assert!(
        err.contains("  - count: null is not of type \"integer\""),
        "{err}"
    );
}

#[test]
fn lossy_coercion_is_refused() {
    let err = validate(json!({"count": "3.5"})).unwrap_err();
    assert_eq!(
        err,
        "Validation failed for tool \"demo\":\n  - count: \"3.5\" is not of type \"integer\"\n\nReceived arguments:\n{\n  \"count\": \"3.5\"\n}"
    );
    // An integral float string is not lossy.
    assert_eq!(validate(json!({"count": "3.0"})), Ok(json!({"count": 3})));
}

#[test]
fn every_violation_is_listed_with_dotted_paths() {
    let err =
        validate(json!({"ratio": "abc", "ids": [1, "x"], "opts": {"depth": "deep"}})).unwrap_err();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "Validation failed for tool \"demo\":");
    let mut violations: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("  - "))
        .collect();
    violations.sort();
    assert_eq!(
        violations,
        [
            "  - count: \"count\" is a required property",
            "  - ids.1: \"x\" is not of type \"integer\"",
            "  - opts.depth: \"deep\" is not of type \"integer\"",
            "  - ratio: \"abc\" is not of type \"number\"",
        ]
    );
    assert!(
        // In the order the model sent them.
        err.contains("\n\nReceived arguments:\n{\n  \"ratio\": \"abc\",\n  \"ids\": ["),
        "{err}"
    );
}

#[test]
fn root_level_violations_say_root() {
    let v = ArgumentValidator::new(&json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": [],
        "additionalProperties": false
    }))
    .unwrap();
    let err = v.validate("strict", json!({"b": 1})).unwrap_err();
    assert!(
        err.starts_with("Validation failed for tool \"strict\":\n  - root: "),
        "{err}"
    );
}

#[test]
fn missing_arguments_are_an_empty_object() {
    let v = ArgumentValidator::new(&json!({
        "type": "object", "properties": {"a": {"type": "string"}}, "required": []
    }))
    .unwrap();
    assert_eq!(v.validate("t", Value::Null), Ok(json!({})));
}

#[test]
fn a_json_string_for_the_whole_arguments_is_parsed() {
    assert_eq!(
        validate(json!("{\"count\": \"2\"}")),
        Ok(json!({"count": 2}))
    );
}

#[test]
fn coercion_follows_union_branches() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}}
        },
        "required": []
    });
    assert_eq!(
        coerce_arguments(&schema, json!({"n": "4", "tags": [1, true]})),
        json!({"n": 4, "tags": ["1", "true"]})
    );
    // null is allowed by the schema itself, so it is kept.
    assert_eq!(
        coerce_arguments(&schema, json!({"n": null})),
        json!({"n": null})
    );
}

#[test]
fn values_of_the_right_type_are_untouched() {
    let args = json!({"count": 3, "label": "x", "ids": [1], "flag": true});
    assert_eq!(validate(args.clone()), Ok(args));
}

#[test]
fn an_invalid_schema_is_reported() {
    let err = ArgumentValidator::new(&json!({"type": 12})).unwrap_err();
    assert!(
        err.starts_with("the parameter schema is not a valid JSON schema"),
        "{err}"
    );
}

/// What `#[tool]` gives an enum parameter: schemars' `enum` for plain variants, and a
/// `oneOf` of `const`s when the variants are documented.
fn unit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "scale": {"oneOf": [
                {"type": "string", "const": "small", "description": "A little."},
                {"type": "string", "const": "large", "description": "A lot."}
            ]},
            "mode": {"type": "string", "enum": ["auto", "Auto", "manual"]},
            "units": {"type": "array", "items": {"type": "string", "enum": ["m", "km"]}}
        },
        "required": []
    })
}

fn validate_units(args: Value) -> Result<Value, String> {
    ArgumentValidator::new(&unit_schema())
        .expect("schema compiles")
        .validate("weather", args)
}

#[test]
fn an_enum_string_that_matches_one_value_ignoring_case_or_spaces_is_that_value() {
    assert_eq!(
        validate_units(json!({"unit": "Fahrenheit"})),
        Ok(json!({"unit": "fahrenheit"}))
    );
    assert_eq!(
        validate_units(json!({"unit": " celsius\n"})),
        Ok(json!({"unit": "celsius"}))
    );
    assert_eq!(
        validate_units(json!({"scale": "LARGE"})),
        Ok(json!({"scale": "large"}))
    );
    assert_eq!(
        validate_units(json!({"units": ["KM", " m"]})),
        Ok(json!({"units": ["km", "m"]}))
    );
    // An exact match after trimming wins over matches that ignore case.
    assert_eq!(
        validate_units(json!({"mode": " Auto "})),
        Ok(json!({"mode": "Auto"}))
    );
    assert_eq!(
        coerce_arguments(&unit_schema(), json!({"unit": "CELSIUS", "scale": "Small"})),
        json!({"unit": "celsius", "scale": "small"})
    );
}

#[test]
fn an_enum_string_that_matches_none_or_several_values_is_refused_listing_them() {
    assert_eq!(
        validate_units(json!({"unit": "kelvin", "scale": "medium"})),
        Err("Validation failed for tool \"weather\":\n  \
             - unit: \"kelvin\" is not one of the allowed values: \"celsius\", \"fahrenheit\"\n  \
             - scale: \"medium\" is not one of the allowed values: \"small\", \"large\"\n\n\
             Received arguments:\n{\n  \"unit\": \"kelvin\",\n  \"scale\": \"medium\"\n}"
            .to_owned())
    );
    assert_eq!(
        validate_units(json!({"mode": "AUTO"})),
        Err("Validation failed for tool \"weather\":\n  \
             - mode: \"AUTO\" is not one of the allowed values: \"auto\", \"Auto\", \"manual\" \
             (\"AUTO\" matches \"auto\" and \"Auto\" when case is ignored; give one of them \
             exactly)\n\nReceived arguments:\n{\n  \"mode\": \"AUTO\"\n}"
            .to_owned())
    );
}

#[test]
fn a_boolean_becomes_the_one_string_enum_member_that_spells_it() {
    let schema = json!({
        "type": "object",
        "properties": {
            "flag": {"type": "string", "enum": ["True", "False"]},
            "twice": {"type": "string", "enum": ["TRUE", "True"]}
        },
        "required": []
    });
    let validator = ArgumentValidator::new(&schema).expect("schema compiles");
    assert_eq!(
        validator.validate("t", json!({"flag": true})),
        Ok(json!({"flag": "True"}))
    );
    // Two members spell `true` in some case: no guess, and the value is shown as sent.
    let error = validator
        .validate("t", json!({"twice": true}))
        .expect_err("ambiguous");
    assert!(error.contains("twice: true is not one of"), "{error}");
}

#[test]
fn empty_properties_accept_any_keys_like_missing_properties() {
    let schema = json!({
        "type": "object",
        "properties": {
            "open": {"type": "object", "properties": {}},
            "closed": {"type": "object", "properties": {}, "additionalProperties": false}
        },
        "required": []
    });
    let validator = ArgumentValidator::new(&schema)
        .expect("schema compiles")
        .rejecting_unknown_properties(true);
    assert!(validator.validate("t", json!({"open": {"k": 1}})).is_ok());
    let error = validator
        .validate("t", json!({"closed": {"k": 1}}))
        .expect_err("closed");
    assert!(error.contains("`closed` takes no properties"), "{error}");
    let root = ArgumentValidator::new(
        &json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .expect("schema compiles")
    .rejecting_unknown_properties(true);
    let error = root.validate("t", json!({"k": 1})).expect_err("closed");
    assert!(error.contains("this tool takes no parameters"), "{error}");
}
