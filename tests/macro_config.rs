//! `config = Type`: the generated `ToolConfigSpec` loads a section (rejecting unknown keys by
//! name) and `wrap` hands the value, or the default, to the tool's `#[config]` parameter.

use std::sync::Arc;

use pi_tools::{
    ContentBlock, NoopSink, RunnerConfig, ToolCall, ToolDefinition, ToolError, ToolSet,
    execute_tool_calls, tool, wrap,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
struct GreetConfig {
    /// What to greet with.
    #[serde(default)]
    greeting: Option<String>,
    /// Shout.
    #[serde(default)]
    loud: bool,
}

/// Greet someone.
#[tool(config = GreetConfig)]
async fn greet(#[config] config: &GreetConfig, who: String) -> Result<String, ToolError> {
    let text = format!("{} {who}", config.greeting.as_deref().unwrap_or("hello"));
    Ok(if config.loud {
        text.to_uppercase()
    } else {
        text
    })
}

async fn run_with(config: Option<Arc<dyn std::any::Any + Send + Sync>>) -> Vec<ContentBlock> {
    let tools = ToolSet::new([wrap(Arc::new(GreetTool), config)]);
    let calls = [ToolCall::new("c1", "greet", json!({"who": "ada"}))];
    let outcome = execute_tool_calls(
        &tools,
        &calls,
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    assert!(!outcome.messages[0].is_error, "{:?}", outcome.messages[0]);
    outcome.messages[0].content.clone()
}

#[tokio::test]
async fn without_a_section_the_default_config_is_used() {
    assert_eq!(run_with(None).await, vec![ContentBlock::text("hello ada")]);
}

#[tokio::test]
async fn a_loaded_section_reaches_the_tool() {
    let spec = GreetTool.spec().config.expect("a config spec");
    let loaded = (spec.load)(json!({"greeting": "hi", "loud": true})).expect("valid section");
    assert_eq!(
        run_with(Some(loaded)).await,
        vec![ContentBlock::text("HI ADA")]
    );
}

#[test]
fn an_unknown_key_is_rejected_by_name() {
    let spec = GreetTool.spec().config.expect("a config spec");
    let err = (spec.load)(json!({"greting": "hi"})).expect_err("unknown key");
    assert_eq!(
        err,
        "unknown key `greting`: expected one of `greeting`, `loud`"
    );
    let err = (spec.load)(json!({"loud": "yes"})).expect_err("wrong type");
    assert!(err.contains("invalid type"), "{err}");
}

#[test]
fn the_config_schema_is_canonical() {
    let spec = GreetTool.spec().config.expect("a config spec");
    assert_eq!(
        (spec.schema)(),
        json!({
            "type": "object",
            "properties": {
                "greeting": {"type": "string", "description": "What to greet with.", },
                "loud": {"type": "boolean", "description": "Shout.", "default": false}
            },
            "required": []
        })
    );
}
