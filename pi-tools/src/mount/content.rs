//! A server's tool result as ours: text, images, audio and embedded resources as they are
//! (so the gateway serves them on unchanged); a resource link as a link of the result under
//! the gateway's URI for it (`mcp-mount://<server>/…`, which the gateway's `resources/read`
//! reads from the server), so an MCP client gets `resource_link` content it can follow, and
//! as text that says what it is, for a model that reads text only; structured content as
//! ours and in `details` (and as text when there is no other content), `isError` as a
//! failed call; and the check of the structured content against the output schema the
//! server lists.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use super::resources::gateway_uri;
use crate::core::{ContentBlock, EmbeddedResource, ResourceLink, ToolError, ToolResult};

/// Maps `result` of the server mounted as `server` onto our result, or onto an error when
/// the server flagged it as one.
pub(crate) fn map_result(
    mut result: CallToolResult,
    server: &str,
) -> Result<ToolResult, ToolError> {
    let mut content = Vec::with_capacity(result.content.len());
    let mut links = Vec::new();
    for block in &result.content {
        let block = serde_json::to_value(block).unwrap_or(Value::Null);
        if let Some(link) = link_of(&block, server) {
            links.push(link);
        }
        content.push(map_block(&block));
    }
    // Taken, not copied: it may hold a million values.
    let structured = result.structured_content.take();
    if content.is_empty()
        && let Some(structured) = &structured
    {
        content.push(ContentBlock::text(structured.to_string()));
    }
    let details = match &structured {
        Some(structured) => json!({ "structuredContent": structured }),
        None => Value::Null,
    };
    if result.is_error == Some(true) {
        let mut text = ToolResult {
            content,
            ..ToolResult::default()
        }
        .text_content();
        if text.trim().is_empty() {
            text = "The tool reported an error without saying what went wrong.".to_owned();
        }
        let error = ToolError::new(text).with_details(details);
        return Err(links.into_iter().fold(error, ToolError::with_link));
    }
    Ok(ToolResult {
        content,
        details,
        structured_content: structured,
        links,
        ..ToolResult::default()
    })
}

/// A `resource_link` block of the server mounted as `server`, as a link under the gateway's
/// URI; `None` for any other block, or a link without a URI.
fn link_of(block: &Value, server: &str) -> Option<ResourceLink> {
    if block.get("type").and_then(Value::as_str) != Some("resource_link") {
        return None;
    }
    let str_of = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let uri = str_of("uri")?;
    Some(ResourceLink {
        uri: gateway_uri(server, uri),
        name: str_of("name").unwrap_or(uri).to_owned(),
        description: str_of("description").map(str::to_owned),
        mime_type: str_of("mimeType").map(str::to_owned),
        size: block.get("size").and_then(Value::as_u64),
    })
}

/// Whether a successful result of the server's `tool` has the structured content its output
/// schema describes; an error naming the first field that does not match otherwise.
pub(crate) fn check_structured(
    result: &ToolResult,
    validator: &jsonschema::Validator,
    server: &str,
    tool: &str,
) -> Result<(), ToolError> {
    let Some(value) = &result.structured_content else {
        return Err(ToolError::new(format!(
            "The MCP server `{server}` answered its tool `{tool}` without the structured result its output schema promises, so the answer cannot be trusted as typed. Report it to the server's authors; its text was: {}",
            result.text_content()
        )));
    };
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(error) => {
            let path = error.instance_path().to_string();
            let field = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            Err(ToolError::new(format!(
                "The MCP server `{server}` answered its tool `{tool}` with a structured result that does not match its output schema at `{field}`: {error}. Report it to the server's authors; the answer was not used."
            ))
            .with_details(json!({ "structuredContent": value })))
        }
    }
}

/// One MCP content block (as JSON) as ours.
fn map_block(block: &Value) -> ContentBlock {
    let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    match str_of("type") {
        "text" => ContentBlock::text(str_of("text")),
        "image" => ContentBlock::image(str_of("data"), str_of("mimeType")),
        "audio" => ContentBlock::audio(str_of("data"), str_of("mimeType")),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            match serde_json::from_value::<EmbeddedResource>(resource.clone()) {
                Ok(resource) => ContentBlock::resource(resource),
                // Neither text nor bytes: what came, as text.
                Err(_) => ContentBlock::text(block.to_string()),
            }
        }
        "resource_link" => {
            let mut text = format!("[resource link: {}", str_of("uri"));
            if !str_of("name").is_empty() {
                text.push_str(&format!(" ({})", str_of("name")));
            }
            if !str_of("description").is_empty() {
                text.push_str(&format!(": {}", str_of("description")));
            }
            text.push(']');
            ContentBlock::text(text)
        }
        _ => ContentBlock::text(block.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_the_gateways_to_follow_and_text_to_read() {
        let result: CallToolResult = serde_json::from_value(json!({"content": [
            {"type": "text", "text": "made it"},
            {"type": "resource_link", "uri": "test://a b", "name": "a", "mimeType": "text/plain", "size": 12},
            {"type": "resource_link", "uri": "test://c", "name": "c", "description": "the log"}
        ]}))
        .expect("a result");
        let mapped = map_result(result, "docs").expect("a success");
        assert_eq!(
            mapped.links,
            [
                ResourceLink {
                    uri: "mcp-mount://docs/test%3A%2F%2Fa%20b".to_owned(),
                    name: "a".to_owned(),
                    description: None,
                    mime_type: Some("text/plain".to_owned()),
                    size: Some(12),
                },
                ResourceLink {
                    uri: "mcp-mount://docs/test%3A%2F%2Fc".to_owned(),
                    name: "c".to_owned(),
                    description: Some("the log".to_owned()),
                    mime_type: None,
                    size: None,
                },
            ]
        );
        assert_eq!(
            mapped.content,
            [
                ContentBlock::text("made it"),
                ContentBlock::text("[resource link: test://a b (a)]"),
                ContentBlock::text("[resource link: test://c (c): the log]"),
            ]
        );
    }

    #[test]
    fn blocks_keep_their_kind_and_links_become_text() {
        assert_eq!(
            map_block(&json!({"type": "text", "text": "hi"})),
            ContentBlock::text("hi")
        );
        assert_eq!(
            map_block(&json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})),
            ContentBlock::image("AAAA", "image/png")
        );
        assert_eq!(
            map_block(&json!({"type": "resource_link", "uri": "test://a", "name": "a"})),
            ContentBlock::text("[resource link: test://a (a)]")
        );
        assert_eq!(
            map_block(
                &json!({"type": "resource", "resource": {"uri": "test://b", "text": "body"}})
            ),
            ContentBlock::resource(EmbeddedResource::text("test://b", "body"))
        );
        assert_eq!(
            map_block(&json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})),
            ContentBlock::audio("UklGRg==", "audio/wav")
        );
        assert_eq!(
            map_block(&json!({"type": "resource", "resource":
                {"uri": "test://c", "mimeType": "application/pdf", "blob": "AAAA"}})),
            ContentBlock::resource(
                EmbeddedResource::blob("test://c", "AAAA").with_mime_type("application/pdf")
            )
        );
    }
}
