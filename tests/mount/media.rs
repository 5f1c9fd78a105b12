//! A mounted server's audio and embedded resources (`media_server.py`): they reach an MCP
//! client of the gateway (`pi-tools mcp`) exactly as the server sent them, beside its text
//! and image, and `pi-tools run` gives them in the result message in MCP's shape.

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
