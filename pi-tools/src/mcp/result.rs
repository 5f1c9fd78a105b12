//! A call's result message in MCP's shape: `CallToolResult { content, isError }`.

use rmcp::model::{CallToolResult, ContentBlock as McpContent};

use crate::core::{ContentBlock, ToolResultMessage};

/// Text blocks become text content, images become image content (base64 data and MIME
/// type); `isError` is the runner's verdict. `details` stay behind: MCP results are what the
/// model reads, and structured content is not offered.
pub(crate) fn call_tool_result(message: ToolResultMessage) -> CallToolResult {
    let content = message.result.content.into_iter().map(content).collect();
    if message.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
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
}
