//! A mounted server's audio and embedded resources (`media_server.py`): they reach an MCP
//! client of the gateway (`pi-tools mcp`) exactly as the server sent them, beside its text
//! and image, and `pi-tools run` gives them in the result message in MCP's shape. Its
//! resource links reach the client as links it can follow through the gateway.

use std::path::Path;

use serde_json::{Value, json};

use super::mount_support::{Setup, StdioGateway, toml_list};

fn config() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mount/media_server.py");
    let command = vec![
        "python3".to_owned(),
        "-u".to_owned(),
        script.to_str().expect("a UTF-8 path").to_owned(),
    ];
    format!(
        "[tools]\nactive = [\"media__*\"]\n\n[mcp.servers.media]\ncommand = {}\nstartup_timeout_secs = 60\n",
        toml_list(&command)
    )
}

/// The content `media_server.py` answers with.
fn sent() -> Value {
    json!([
        {"type": "text", "text": "one of each:"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="},
        {"type": "resource", "resource": {"uri": "test://notes/a", "mimeType": "text/markdown", "text": "# A\nnotes"}},
        {"type": "resource", "resource": {"uri": "test://files/b.pdf", "mimeType": "application/pdf", "blob": "JVBERi0xLjQK"}}
    ])
}

#[test]
fn audio_and_embedded_resources_pass_through_the_gateway_unchanged() {
    let setup = Setup::new(&config());
    let mut gateway = StdioGateway::start(&setup, &[]);
    let answer = gateway.call(2, "media__media", json!({}));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["content"], sent(), "{answer}");
    assert!(gateway.end_input().success());
}

#[test]
fn a_run_gives_them_in_the_result_message_as_mcp_content() {
    let setup = Setup::new(&config());
    let messages = setup.run_calls(json!([{"id": "1", "name": "media__media", "arguments": {}}]));
    assert_eq!(messages[0]["isError"], false);
    assert_eq!(messages[0]["content"], sent());
}

#[test]
fn a_resource_link_reaches_the_client_as_one_it_reads_through_the_gateway() {
    let setup = Setup::new(&config());
    let mut gateway = StdioGateway::start(&setup, &[]);
    let answer = gateway.call(2, "media__linking", json!({}));
    let uri = "mcp-mount://media/test%3A%2F%2Fnotes%2Fa";
    assert_eq!(
        answer["result"]["content"],
        json!([
            {"type": "text", "text": "the notes are linked"},
            {"type": "text", "text": "[resource link: test://notes/a (a): The notes.]"},
            {"type": "resource_link", "uri": uri, "name": "a", "description": "The notes.", "mimeType": "text/markdown"}
        ]),
        "{answer}"
    );
    let read = gateway.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}}),
    );
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": uri, "mimeType": "text/markdown", "text": "# A\nnotes"}]),
        "{read}"
    );
    assert!(gateway.end_input().success());
}
