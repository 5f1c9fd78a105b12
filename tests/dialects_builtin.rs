//! Every built-in tool in every provider dialect: a snapshot of the wire form, held to the
//! dialect's rules, and derived from the same canonical schema the runner validates with.
#![cfg(feature = "builtins")]

use pi_tools::Registry;
use pi_tools::dialect::{Dialect, check, tool_schema};
use serde_json::{Map, Value};

const BUILTINS: [&str; 7] = ["bash", "edit", "find", "grep", "ls", "read", "write"];

#[test]
fn every_builtin_in_every_dialect() {
    let registry = Registry::from_inventory().expect("no duplicate tool names");
    for dialect in Dialect::ALL {
        let mut all = Map::new();
        for name in BUILTINS {
            let def = registry.get(name).expect("a built-in is registered");
            let wire = tool_schema(def.as_ref(), dialect)
                .unwrap_or_else(|e| panic!("{name} in {dialect}: {e}"));
            if let Err(problems) = check(dialect, &wire) {
                panic!("{name} in {dialect} breaks the dialect's rules: {problems:#?}");
            }
            all.insert(name.to_owned(), wire);
        }
        insta::assert_json_snapshot!(format!("builtins_{dialect}"), Value::Object(all));
    }
}

#[test]
fn the_canonical_schemas_follow_the_canonical_rules() {
    let registry = Registry::from_inventory().expect("no duplicate tool names");
    for name in BUILTINS {
        let schema = registry
            .get(name)
            .expect("registered")
            .spec()
            .parameters
            .clone();
        assert_eq!(schema["type"], "object", "{name}");
        assert!(
            schema["required"].is_array(),
            "{name}: `required` is always present"
        );
        for banned in ["$schema", "title", "description", "$defs", "definitions"] {
            assert!(schema.get(banned).is_none(), "{name} has a root `{banned}`");
        }
        let text = schema.to_string();
        for banned in ["$ref", "\"format\"", "\"null\""] {
            assert!(!text.contains(banned), "{name} contains {banned}: {text}");
        }
        for (prop, sub) in schema["properties"].as_object().expect("properties") {
            assert!(
                sub.get("description").is_some_and(Value::is_string),
                "{name}.{prop} has no description"
            );
        }
    }
}
