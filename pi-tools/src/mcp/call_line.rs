//! The one message a session sends over and over, `tools/call`, read straight into its type.
//!
//! The protocol library reads a message through an untagged enum of flattened structs:
//! serde buffers the line and tries each shape in turn, which was about a fifth of the
//! server's time per call. A `tools/call` request in its usual shape (`jsonrpc`, `id`,
//! `method`, and `params` with `name`, `arguments` and `_meta`, nothing else) is read here
//! in one pass into the same message the library would build; any other line, or any
//! surprise in this one (another member, a duplicate, a wrong type), goes the library's
//! way, so what is accepted or refused, and how, does not change.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonObject,
    RequestId, RequestMetaObject,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: Params,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<JsonObject>,
}

/// `text` as a `tools/call` request, when it is one in the usual shape; `None` for
/// anything else (read it with the protocol library).
pub(super) fn read_call(text: &str) -> Option<ClientJsonRpcMessage> {
    let call: Call<'_> = serde_json::from_str(text).ok()?;
    if call.jsonrpc != "2.0" || call.method != "tools/call" {
        return None;
    }
    let mut params = CallToolRequestParams::new(call.params.name);
    params.arguments = call.params.arguments;
    let mut request = CallToolRequest::new(params);
    // Where the library puts `_meta` (the progress token): in the request's extensions.
    if let Some(meta) = call.params.meta {
        request.extensions.insert(RequestMetaObject::from(meta));
    }
    Some(ClientJsonRpcMessage::request(
        ClientRequest::CallToolRequest(request),
        call.id,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's reading of `text`.
    fn slow(text: &str) -> Option<ClientJsonRpcMessage> {
        serde_json::from_str(text).ok()
    }

    /// The request's meta object, where the library keeps it.
    fn meta(message: &ClientJsonRpcMessage) -> Option<JsonObject> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let ClientRequest::CallToolRequest(call) = &request.request else {
            return None;
        };
        call.extensions
            .get::<RequestMetaObject>()
            .map(|m| m.0.0.clone())
    }

    #[test]
    fn a_usual_call_reads_as_the_library_reads_it() {
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"read"}}"#,
            r#"{"params":{"arguments":null,"name":"ls"},"method":"tools/call","id":0,"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"ls"},"_meta":{"progressToken":"p7","x":[1,2]}}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"b\u0061sh","arguments":{}}}"#,
        ] {
            let fast = read_call(text).expect("the fast path reads a usual call");
            let slow = slow(text).expect("the library reads it");
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&slow).unwrap(),
                "{text}"
            );
            assert_eq!(meta(&fast), meta(&slow), "{text}");
        }
    }

    #[test]
    fn anything_unusual_is_left_to_the_library() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}]"#,
        ] {
            assert!(read_call(text).is_none(), "{text}");
        }
    }
}
