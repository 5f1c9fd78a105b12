//! The public errors a program may return from `main` with `?` print their sentence, not a
//! struct dump: each one's `Debug` is its `Display`.

use pi_tools::dialect::{Dialect, transform};
use pi_tools::provider::read_reply;
use pi_tools::tool::RegistryError;
use serde_json::json;

/// What `main` prints for an error it returns is its `Debug`.
fn prints_its_sentence<E: std::fmt::Debug + std::fmt::Display>(error: E) {
    assert_eq!(format!("{error:?}"), error.to_string());
    assert!(!format!("{error:?}").contains(" { "), "{error:?}");
}

#[test]
fn a_reply_error_prints_its_sentence() {
    let error = read_reply(Dialect::Anthropic, b"{not json").expect_err("broken JSON");
    prints_its_sentence(error);
}

#[test]
fn a_dialect_error_prints_its_sentence() {
    // Gemini has no `$ref` to a definition that refers to itself.
    let schema = json!({
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
    });
    let error = transform(&schema, Dialect::Gemini).expect_err("a recursive schema");
    prints_its_sentence(error);
}

#[test]
fn a_registry_error_prints_its_sentence() {
    prints_its_sentence(RegistryError::DuplicateName {
        name: "greet".into(),
        first: "src/a.rs:1".into(),
        second: "src/b.rs:2".into(),
    });
}

#[cfg(feature = "mount")]
#[test]
fn a_mount_error_prints_its_sentence() {
    prints_its_sentence(pi_tools::mount::MountError(
        "the server `x` cannot start".into(),
    ));
}

#[cfg(feature = "mcp")]
#[test]
fn an_mcp_error_prints_its_sentence() {
    prints_its_sentence(pi_tools::mcp::McpError::SchemaNotAnObject { tool: "t".into() });
}
