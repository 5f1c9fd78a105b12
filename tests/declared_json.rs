//! Declared tools whose command prints JSON (`output = "json"`): the value is the structured
//! result (checked against `output_schema`, which is the tool's output schema), output that
//! is not JSON or does not match is an error result saying so, and a schema that is not one
//! is reported when the file loads.
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::spawn::feed;

const SCHEMA: &str = r#"{"type": "object", "properties": {"word": {"type": "string"}, "length": {"type": "integer"}}, "required": ["word", "length"]}"#;

fn config() -> String {
    r#"[tools]
active = ["size", "loose", "broken"]

[tool.size]
description = "Measure a word."
command = ["printf", '{{"word": "%s", "length": 3}}', "{word}"]
output = "json"
output_schema = 'SCHEMA'
[tool.size.params.word]
type = "string"

[tool.loose]
description = "Measure a word, badly."
command = ["printf", '{{"word": "%s", "length": "three"}}', "{word}"]
output = "json"
output_schema = 'SCHEMA'
[tool.loose.params.word]
type = "string"

[tool.broken]
description = "Print no JSON."
command = ["printf", "not json"]
output = "json"
"#
    .replace("SCHEMA", SCHEMA)
}

fn pi_tools(dir: &Path, config: &str) -> Command {
    std::fs::write(dir.join("pi-tools.toml"), config).expect("config");
    let mut command = Command::new(env!("CARGO_BIN_EXE_cli-under-test"));
    command
        .current_dir(dir)
        .env_remove("PI_TOOLS_CONFIG")
        .env("NO_COLOR", "1")
        .arg("--config")
        .arg(dir.join("pi-tools.toml"));
    command
}

fn messages(dir: &Path, calls: Value) -> Vec<Value> {
    let mut command = pi_tools(dir, &config());
    command.args(["run", "--json"]);
    let output = feed(command, &calls.to_string());
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message_end")
        .map(|e| e["message"].clone())
        .collect()
}

#[test]
fn json_output_is_the_structured_result_and_bad_output_is_an_error_saying_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let got = messages(
        dir.path(),
        json!([
            {"id": "1", "name": "size", "arguments": {"word": "abc"}},
            {"id": "2", "name": "loose", "arguments": {"word": "abc"}},
            {"id": "3", "name": "broken", "arguments": {}}
        ]),
    );
    assert_eq!(got[0]["isError"], false);
    assert_eq!(
        got[0]["structuredContent"],
        json!({"word": "abc", "length": 3})
    );
    assert_eq!(
        got[0]["content"][0]["text"],
        r#"{"word": "abc", "length": 3}"#
    );
    assert_eq!(got[1]["isError"], true);
    assert_eq!(
        got[1]["content"][0]["text"],
        "The output of loose does not match its output schema at `/length`: \"three\" is not of type \"integer\". Fix the command or the declared output_schema."
    );
    assert_eq!(got[2]["isError"], true);
    assert_eq!(
        got[2]["content"][0]["text"],
        "The output of broken is not the JSON value its declaration promises (expected ident at line 1 column 2); it printed: not json. Fix the command so it prints one JSON value and nothing else."
    );

    let mut command = pi_tools(dir.path(), &config());
    command.args(["schema", "--dialect", "mcp"]);
    let listed: Value = serde_json::from_slice(&feed(command, "").stdout).expect("a JSON listing");
    let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
    assert_eq!(listed[0]["outputSchema"], schema);
    assert_eq!(listed[2].get("outputSchema"), None);
}

#[test]
fn an_output_schema_that_is_not_one_is_reported_when_the_file_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = r#"[tools]
active = ["t", "u"]

[tool.t]
description = "T."
command = ["true"]
output = "json"
output_schema = '{"type": 5}'

[tool.u]
description = "U."
command = ["true"]
output_schema = '{"type": "object"}'
"#;
    let mut command = pi_tools(dir.path(), bad);
    command.arg("check");
    let output = feed(command, "");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    let got: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(got.len(), 2, "{stderr}");
    assert!(
        got[0].contains(":8:17: `output_schema` is not a valid JSON Schema: "),
        "{stderr}"
    );
    assert!(
        got[1].ends_with(":13:17: `output_schema` describes a JSON output: add `output = \"json\"`, or remove `output_schema`"),
        "{stderr}"
    );
}
