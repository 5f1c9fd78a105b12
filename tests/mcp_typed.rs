//! A tool with a typed result over MCP: `tools/list` gives its `outputSchema`, `tools/call`
//! its `structuredContent` beside the text block.
#![cfg(feature = "mcp")]

use std::sync::Arc;

use pi_tools::dialect::{Dialect, tool_schema};
use pi_tools::mcp::{McpTool, McpTools};
use pi_tools::{RunnerConfig, ToolDefinition, ToolError, tool, wrap};
use rmcp::model::CallToolRequestParams;
use serde::Serialize;
use serde_json::{Value, json};
use support::mcp::connect;

/// The size of a text.
#[derive(Serialize, schemars::JsonSchema)]
struct Size {
    /// Lines in it.
    lines: usize,
    /// Its longest line, when it has any.
    longest: Option<String>,
}

/// Measure a text.
#[tool(read_only)]
async fn measure(
    /// The text.
    text: String,
) -> Result<Size, ToolError> {
    if text.is_empty() {
        return Err(ToolError::new(
            "The text is empty: pass some text to measure.",
        ));
    }
    Ok(Size {
        lines: text.lines().count(),
        longest: text.lines().max_by_key(|l| l.len()).map(str::to_owned),
    })
}

fn served() -> McpTools {
    let def: Arc<dyn ToolDefinition> = Arc::new(MeasureTool);
    [McpTool::with_definition(
        wrap(Arc::clone(&def), None),
        def.as_ref(),
    )]
    .into_iter()
    .collect()
}

fn params(text: &str) -> CallToolRequestParams {
    let mut arguments = serde_json::Map::new();
    arguments.insert("text".into(), json!(text));
    CallToolRequestParams::new("measure").with_arguments(arguments)
}

#[tokio::test]
async fn tools_list_gives_the_output_schema_as_the_mcp_dialect_does() {
    let session = connect(served(), RunnerConfig::default()).await;
    let listed = session
        .client
        .list_all_tools()
        .await
        .expect("tools/list answers");
    let listed = serde_json::to_value(&listed[0]).expect("a tool serialises");
    assert_eq!(
        listed["outputSchema"],
        json!({
            "description": "The size of a text.",
            "type": "object",
            "properties": {
                "lines": {"type": "integer", "minimum": 0, "description": "Lines in it."},
                "longest": {
                    "type": ["string", "null"],
                    "description": "Its longest line, when it has any."
                }
            },
            "required": ["lines"]
        })
    );
    let dialect = tool_schema(&MeasureTool, Dialect::Mcp).expect("an object schema");
    assert_eq!(listed, dialect);
    assert_eq!(pi_tools::dialect::check(Dialect::Mcp, &dialect), Ok(()));
}

#[tokio::test]
async fn tools_call_gives_structured_content_beside_the_text_and_an_error_none() {
    let session = connect(served(), RunnerConfig::default()).await;
    let result = session
        .client
        .call_tool(params("ab\nc"))
        .await
        .expect("tools/call answers");
    let wire = serde_json::to_value(&result).expect("a result serialises");
    assert_eq!(wire["isError"], json!(false));
    assert_eq!(
        wire["structuredContent"],
        json!({"lines": 2, "longest": "ab"})
    );
    assert_eq!(
        wire["content"],
        json!([{"type": "text", "text": r#"{"lines":2,"longest":"ab"}"#}])
    );
    let failed = session
        .client
        .call_tool(params(""))
        .await
        .expect("tools/call answers");
    let wire = serde_json::to_value(&failed).expect("a result serialises");
    assert_eq!(wire["isError"], json!(true));
    assert_eq!(wire.get("structuredContent"), None::<&Value>);
}
