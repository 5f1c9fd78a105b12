//! A call's result message in MCP's shape: `CallToolResult { content, structuredContent?,
//! isError }`.

use rmcp::model::{CallToolResult, ContentBlock as McpContent, ResourceContents};

use crate::core::{ContentBlock, ResourceBody, ToolResultMessage};

/// Each block becomes MCP content of its kind (text, image, audio, an embedded resource,
/// base64 data as it is), and the files the result points at `resource_link` content after them; `isError` is the runner's verdict. A typed result is `structuredContent`, beside
/// its text block (which the MCP specification asks for, for clients that read only
/// content); an error result has none, since it does not match the output schema.
/// `details` stay behind: they are for this program's user interfaces.
pub(crate) fn call_tool_result(message: ToolResultMessage) -> CallToolResult {
    let mut content: Vec<McpContent> = message.result.content.into_iter().map(content).collect();
    content.extend(
        message
            .result
            .links
            .into_iter()
            .map(super::resource_files::link_content),
    );
    if message.is_error {
        CallToolResult::error(content)
    } else {
        let mut result = CallToolResult::success(content);
        result.structured_content = message.result.structured_content;
        result
    }
}

/// A block as MCP content of its own kind: MCP carries every kind there is.
fn content(block: ContentBlock) -> McpContent {
    match block {
        ContentBlock::Text { text } => McpContent::text(text),
        ContentBlock::Image { data, mime_type } => McpContent::image(data, mime_type),
        ContentBlock::Audio { data, mime_type } => McpContent::audio(data, mime_type),
        ContentBlock::Resource { resource } => {
            let contents = match resource.body {
                ResourceBody::Text { text } => ResourceContents::TextResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text,
                    meta: None,
                },
                ResourceBody::Blob { blob } => ResourceContents::BlobResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    blob,
                    meta: None,
                },
            };
            McpContent::resource(contents)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::core::ToolResult;

    fn message(content: Vec<ContentBlock>, is_error: bool) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "1".into(),
            tool_name: "t".into(),
            result: ToolResult {
                content,
                details: json!({"hidden": true}),
                ..ToolResult::default()
            },
            is_error,
            timestamp: 0,
        }
    }

    #[test]
    fn text_and_images_keep_their_order_and_the_error_flag_is_kept() {
        let result = call_tool_result(message(
            vec![
                ContentBlock::text("a picture:"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ],
            false,
        ));
        let wire = serde_json::to_value(&result).expect("a result serialises");
        assert_eq!(
            wire["content"],
            json!([
                {"type": "text", "text": "a picture:"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            ])
        );
        assert_eq!(wire["isError"], json!(false));
        assert_eq!(wire.get("structuredContent"), None::<&Value>);

        let failed = call_tool_result(message(vec![ContentBlock::text("no")], true));
        assert_eq!(failed.is_error, Some(true));
    }

    #[test]
    fn audio_and_embedded_resources_are_mcp_content_of_their_kind() {
        use crate::core::EmbeddedResource;
        let result = call_tool_result(message(
            vec![
                ContentBlock::audio("UklGRg==", "audio/wav"),
                ContentBlock::resource(
                    EmbeddedResource::text("test://a", "{}").with_mime_type("application/json"),
                ),
                ContentBlock::resource(EmbeddedResource::blob("test://b", "AAAA")),
            ],
            false,
        ));
        let wire = serde_json::to_value(&result).expect("a result serialises");
        assert_eq!(
            wire["content"],
            json!([
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource", "resource":
                    {"uri": "test://a", "mimeType": "application/json", "text": "{}"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AAAA"}}
            ])
        );
    }

    #[test]
    fn a_typed_result_is_structured_content_beside_its_text_and_an_error_has_none() {
        let mut typed = message(vec![ContentBlock::text(r#"{"n":1}"#)], false);
        typed.result.structured_content = Some(json!({"n": 1}));
        let wire = serde_json::to_value(call_tool_result(typed.clone())).expect("serialises");
        assert_eq!(wire["structuredContent"], json!({"n": 1}));
        assert_eq!(
            wire["content"],
            json!([{"type": "text", "text": "{\"n\":1}"}])
        );
        typed.is_error = true;
        let wire = serde_json::to_value(call_tool_result(typed)).expect("serialises");
        assert_eq!(wire.get("structuredContent"), None::<&Value>);
    }
}
