//! A mounted server's typed tool (`typed_server.py`): its `outputSchema` passes through to
//! our listing, its `structuredContent` becomes ours, and one that does not match the schema
//! (or is missing) is an error result naming the field.

use std::path::Path;

use serde_json::{Value, json};

use super::mount_support::{Setup, text_of, toml_list};

fn config() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mount/typed_server.py");
    let command = vec![
        "python3".to_owned(),
        "-u".to_owned(),
        script.to_str().expect("a UTF-8 path").to_owned(),
    ];
    format!(
        "[tools]\nactive = [\"typed__*\"]\n\n[mcp.servers.typed]\ncommand = {}\nstartup_timeout_secs = 60\n",
        toml_list(&command)
    )
}

#[test]
fn the_output_schema_passes_through_and_a_mismatch_is_reported_with_its_field() {
    let setup = Setup::new(&config());
    let (ok, stdout, stderr) = setup.run(&["schema", "--dialect", "mcp"], "");
    assert!(ok, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).expect("a JSON array");
    assert_eq!(
        listed[0]["outputSchema"],
        json!({"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]})
    );

    let messages = setup.run_calls(json!([
        {"id": "1", "name": "typed__measure", "arguments": {}},
        {"id": "2", "name": "typed__measure", "arguments": {"bad": true}},
        {"id": "3", "name": "typed__measure", "arguments": {"none": true}}
    ]));
    assert_eq!(messages[0]["isError"], false);
    assert_eq!(messages[0]["structuredContent"], json!({"lines": 3}));
    assert_eq!(text_of(&messages[0]), "measured");
    assert_eq!(messages[1]["isError"], true);
    assert_eq!(
        text_of(&messages[1]),
        "The MCP server `typed` answered its tool `measure` with a structured result that does not match its output schema at `/lines`: \"many\" is not of type \"integer\". Report it to the server's authors; the answer was not used."
    );
    assert_eq!(messages[2]["isError"], true);
    assert_eq!(
        text_of(&messages[2]),
        "The MCP server `typed` answered its tool `measure` without the structured result its output schema promises, so the answer cannot be trusted as typed. Report it to the server's authors; its text was: measured"
    );
}
