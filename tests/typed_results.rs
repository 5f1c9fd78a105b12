//! A `#[tool]` fn returning a typed value: its type is the tool's output schema, and the
//! value is the call's structured result beside its text.

use std::sync::Arc;

use pi_tools::{
    CollectingSink, ContentBlock, RunnerConfig, ToolCall, ToolDefinition, ToolError, ToolOutput,
    ToolSet, execute_tool_calls, tool, wrap,
};
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// How a division went.
#[derive(Debug, PartialEq, Serialize, schemars::JsonSchema)]
struct Quotient {
    /// The whole part.
    whole: i64,
    /// What is left over, when anything is.
    remainder: Option<i64>,
}

/// Divide two whole numbers.
#[tool]
async fn long_divide(a: i64, b: i64) -> Result<Quotient, ToolError> {
    if b == 0 {
        return Err(ToolError::new(
            "Cannot divide by zero: pass a non-zero `b`.",
        ));
    }
    let remainder = a % b;
    Ok(Quotient {
        whole: a / b,
        remainder: (remainder != 0).then_some(remainder),
    })
}

fn say_quotient(q: &Quotient) -> String {
    match q.remainder {
        Some(r) => format!("{} remainder {r}", q.whole),
        None => format!("{} exactly", q.whole),
    }
}

/// Divide two whole numbers, in words.
#[tool(text = say_quotient)]
async fn say_divide(a: i64, b: i64) -> Result<Quotient, ToolError> {
    long_divide(a, b).await
}

/// A count, declared for a tool that writes its own content beside it.
#[derive(Serialize, schemars::JsonSchema)]
struct Count {
    /// How many.
    n: u32,
}

/// Count to a number, with a text of its own.
#[tool(output = Count)]
async fn count_to(n: u32) -> Result<ToolOutput, ToolError> {
    ToolOutput::text(format!("counted to {n}")).with_structured(&Count { n })
}

fn tools() -> ToolSet {
    ToolSet::new([
        wrap(Arc::new(LongDivideTool), None),
        wrap(Arc::new(SayDivideTool), None),
        wrap(Arc::new(CountToTool), None),
    ])
}

async fn run(calls: &[ToolCall]) -> pi_tools::BatchOutcome {
    execute_tool_calls(
        &tools(),
        calls,
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &CollectingSink::new(),
    )
    .await
}

#[test]
fn the_return_type_is_the_output_schema_with_its_doc_comments() {
    assert_eq!(
        LongDivideTool.spec().output_schema,
        Some(json!({
            "description": "How a division went.",
            "type": "object",
            "properties": {
                "whole": {"type": "integer", "description": "The whole part."},
                "remainder": {
                    "type": ["integer", "null"],
                    "description": "What is left over, when anything is."
                }
            },
            "required": ["whole"]
        }))
    );
    assert_eq!(
        CountToTool.spec().output_schema,
        Some(json!({
            "description": "A count, declared for a tool that writes its own content beside it.",
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0, "description": "How many."}},
            "required": ["n"]
        }))
    );
    assert_eq!(
        tools()
            .get("long_divide")
            .and_then(|t| t.output_schema().cloned()),
        LongDivideTool.spec().output_schema
    );
}

#[tokio::test]
async fn a_typed_value_is_the_structured_result_and_compact_json_text() {
    let outcome = run(&[
        ToolCall::new("c1", "long_divide", json!({"a": 7, "b": 2})),
        ToolCall::new("c2", "long_divide", json!({"a": 8, "b": 2})),
    ])
    .await;
    let first = &outcome.messages[0];
    assert!(!first.is_error);
    assert_eq!(
        first.content,
        vec![ContentBlock::text(r#"{"whole":3,"remainder":1}"#)]
    );
    assert_eq!(
        first.structured_content,
        Some(json!({"whole": 3, "remainder": 1}))
    );
    // `None` is written as `null`, which the output schema allows.
    assert_eq!(
        outcome.messages[1].structured_content,
        Some(json!({"whole": 4, "remainder": null}))
    );
    let schema = LongDivideTool
        .spec()
        .output_schema
        .clone()
        .unwrap_or(Value::Null);
    let validator = jsonschema::validator_for(&schema).expect("the output schema compiles");
    for message in &outcome.messages {
        let value = message.structured_content.clone().unwrap_or(Value::Null);
        assert!(validator.is_valid(&value), "{value}");
    }
}

#[tokio::test]
async fn the_transcript_message_carries_the_value() {
    let outcome = run(&[ToolCall::new("c1", "long_divide", json!({"a": 7, "b": 2}))]).await;
    let wire = serde_json::to_value(&outcome.messages[0]).expect("a message serialises");
    assert_eq!(
        wire["structuredContent"],
        json!({"whole": 3, "remainder": 1})
    );
    let back: pi_tools::ToolResultMessage =
        serde_json::from_value(wire).expect("the message reads back");
    assert_eq!(back, outcome.messages[0]);
}

#[tokio::test]
async fn text_renders_the_value_for_the_model_and_output_declares_a_schema() {
    let outcome = run(&[
        ToolCall::new("c1", "say_divide", json!({"a": 7, "b": 2})),
        ToolCall::new("c2", "count_to", json!({"n": 3})),
    ])
    .await;
    assert_eq!(outcome.messages[0].text_content(), "3 remainder 1");
    assert_eq!(
        outcome.messages[0].structured_content,
        Some(json!({"whole": 3, "remainder": 1}))
    );
    assert_eq!(outcome.messages[1].text_content(), "counted to 3");
    assert_eq!(
        outcome.messages[1].structured_content,
        Some(json!({"n": 3}))
    );
}

#[tokio::test]
async fn an_error_has_no_structured_result_and_the_fn_stays_callable() {
    let outcome = run(&[ToolCall::new("c1", "long_divide", json!({"a": 7, "b": 0}))]).await;
    assert!(outcome.messages[0].is_error);
    assert_eq!(outcome.messages[0].structured_content, None);
    assert_eq!(
        long_divide(7, 2).await,
        Ok(Quotient {
            whole: 3,
            remainder: Some(1)
        })
    );
}

/// Say something.
#[tool]
async fn plain_text() -> Result<String, ToolError> {
    Ok("text".into())
}

#[test]
fn a_tool_returning_content_has_no_output_schema() {
    assert_eq!(PlainTextTool.spec().output_schema, None);
}
