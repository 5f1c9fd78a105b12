//! A call's result message in MCP's shape: `CallToolResult { content, structuredContent?,
//! isError }`.

use rmcp::model::{CallToolResult, ContentBlock as McpContent};

use crate::core::{ContentBlock, ToolResultMessage};

/// Text blocks become text content, images become image content (base64 data and MIME
/// type), and the files the result points at `resource_link` content after them; `isError` is the runner's verdict. A typed result is `structuredContent`, beside
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

fn content(block: ContentBlock) -> McpContent {
    match block {
        ContentBlock::Text { text } => McpContent::text(text),
        ContentBlock::Image { data, mime_type } => McpContent::image(data, mime_type),
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
