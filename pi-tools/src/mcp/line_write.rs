//! What the stdio transport writes itself: a message as one line, and an error answer of
//! its own for a line it cannot pass on.

use std::io;

use rmcp::model::{NumberOrString, RequestId, ServerJsonRpcMessage};
use serde_json::{Value, json};

/// JSON-RPC's codes for a line that is not JSON, and for JSON that is not a request.
pub(super) const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for an error of the server itself.
pub(super) const INTERNAL_ERROR: i64 = -32603;

/// One message as a line. An error answer without an id gets `"id": null`, as JSON-RPC
/// requires (the protocol library leaves the member out).
pub(super) fn serialize(message: &ServerJsonRpcMessage) -> io::Result<Vec<u8>> {
    let mut line = match message {
        ServerJsonRpcMessage::Error(e) if e.id.is_none() => {
            let mut value = serde_json::to_value(message).map_err(io::Error::other)?;
            if let Value::Object(map) = &mut value {
                map.insert("id".to_owned(), Value::Null);
            }
            serde_json::to_vec(&value)
        }
        _ => serde_json::to_vec(message),
    }
    .map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// An error answer written by the transport itself.
pub(super) fn error_line(id: Option<&RequestId>, code: i64, message: &str) -> Vec<u8> {
    let id = id.map_or(Value::Null, |id| match id {
        NumberOrString::Number(n) => json!(n),
        NumberOrString::String(s) => json!(s.as_ref()),
    });
    let mut line = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}
