//! The protocol library's refusal of a request whose `Mcp-Method`, `Mcp-Name` or
//! `Mcp-Param-*` header does not say what its body says (`-32020`, HTTP 400) names the
//! header but not the fix: it is made a sentence that says what the request must carry.
//! Every other response passes as it is.

use axum::body::{Body, HttpBody, to_bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::Value;

/// The code of a header that does not match the body (SEP-2243).
const HEADER_MISMATCH: i64 = -32020;

/// The most of a refusal's body read to explain it; the library's are a few hundred bytes.
const MOST: usize = 64 * 1024;

/// What a request must carry, said after the library's own words.
const FIX: &str = "The request was not run. Over HTTP a 2026-07-28 request must carry `Mcp-Method` with its method, `Mcp-Name` with the tool, prompt or resource its body names, and an `Mcp-Param-<Name>` header for each argument the tool's schema marks with `x-mcp-header`, each with the value in the body (a value that is not plain ASCII as `=?base64?<Base64>?=`); send them so.";

/// `response`, with a header mismatch's message explained.
pub(crate) async fn explained(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if response.status() != StatusCode::BAD_REQUEST || !is_json {
        return response;
    }
    // Read only a body known to be small: one of unknown or larger size cannot be the
    // library's refusal, and passes untouched (a body read in part could not be given on).
    if response
        .body()
        .size_hint()
        .upper()
        .is_none_or(|n| n > MOST as u64)
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MOST).await else {
        // Its size was known and within the bound, so only a failing body comes here.
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    };
    let mut message: Value = match serde_json::from_slice(&bytes) {
        Ok(message) => message,
        Err(_) => return Response::from_parts(parts, Body::from(bytes)),
    };
    let error = &mut message["error"];
    if error["code"].as_i64() != Some(HEADER_MISMATCH) {
        return Response::from_parts(parts, Body::from(bytes));
    }
    let said = error["message"].as_str().unwrap_or_default();
    error["message"] = Value::String(sentence(said));
    let body = serde_json::to_vec(&message).unwrap_or_else(|_| bytes.to_vec());
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The library's words as a sentence, then [`FIX`].
fn sentence(said: &str) -> String {
    let said = said.trim().trim_end_matches('.');
    if said.is_empty() {
        return format!("A header does not match the request's body. {FIX}");
    }
    let mut chars = said.chars();
    let first = chars.next().map(|c| c.to_uppercase().to_string());
    format!("{}{}. {FIX}", first.unwrap_or_default(), chars.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_header_mismatch_says_what_to_send_and_the_rest_passes() {
        let refusal = |code: i64, message: &str| {
            Response::builder()
                .status(StatusCode::BAD_REQUEST)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(
                    serde_json::json!({"jsonrpc": "2.0", "id": 7, "error": {"code": code, "message": message}})
                        .to_string(),
                ))
                .expect("a response")
        };
        let read = |response: Response| async move {
            let bytes = to_bytes(response.into_body(), MOST).await.expect("a body");
            serde_json::from_slice::<Value>(&bytes).expect("JSON")
        };
        let out = read(
            explained(refusal(
                -32020,
                "missing required Mcp-Name header for `tools/call`",
            ))
            .await,
        )
        .await;
        assert_eq!(
            out["error"]["message"],
            format!("Missing required Mcp-Name header for `tools/call`. {FIX}")
        );
        assert_eq!(
            (out["id"].as_i64(), out["error"]["code"].as_i64()),
            (Some(7), Some(-32020))
        );
        let out = read(explained(refusal(-32600, "bad request")).await).await;
        assert_eq!(out["error"]["message"], "bad request");
    }
}
