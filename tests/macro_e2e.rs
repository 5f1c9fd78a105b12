//! A tool declared with `#[tool]` runs through the kernel runner end to end.

use std::sync::Arc;

use pi_tools::{
    CollectingSink, ContentBlock, RunnerConfig, ToolCall, ToolContext, ToolDefinition, ToolError,
    ToolEvent, ToolOutput, ToolResult, ToolSet, execute_tool_calls, tool, wrap,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

// The dependency under another name, as `pi-tools = { package = ..., }` renames would give;
// `crate = "renamed"` routes the generated code through it.
extern crate pi_tools as renamed;

/// Count down from a number, reporting each step.
#[tool(snippet = "Count down", guidelines = ["Count down only from small numbers."])]
async fn countdown(
    ctx: &ToolContext,
    /// Where to start.
    from: u32,
    /// Text to print at zero.
    message: Option<String>,
) -> Result<ToolOutput<Vec<u32>>, ToolError> {
    if from > 10 {
        return Err(ToolError::new("Start from 10 or less.").with_details(json!({"from": from})));
    }
    let mut steps = Vec::new();
    for n in (1..=from).rev() {
        ctx.update(ToolResult::text(format!("{n}")));
        steps.push(n);
    }
    Ok(ToolOutput::text(message.unwrap_or_else(|| "liftoff".to_owned())).with_details(steps))
}

/// Divide two numbers.
#[tool]
async fn divide(a: f64, b: f64) -> Result<f64, String> {
    if b == 0.0 {
        return Err("Cannot divide by zero: pass a non-zero `b`.".to_owned());
    }
    Ok(a / b)
}

/// Repeat a word.
///
/// Use it when a word must appear several times; the
/// separator goes between the copies.
///
/// - `times` copies
/// - joined by `separator`
#[tool(role = explore)]
async fn repeat(
    /// The word.
    word: String,
    /// How many copies.
    #[default = 2]
    times: usize,
    /// What goes between copies.
    #[default = "-"]
    separator: String,
) -> Result<String, ToolError> {
    Ok(vec![word; times].join(&separator))
}

/// Shout a word, through the renamed dependency.
#[tool(crate = "renamed", snippet = "")]
async fn shout(
    ctx: &renamed::ToolContext,
    /// The word.
    word: String,
    /// How many exclamation marks.
    #[default = 1]
    marks: usize,
) -> Result<String, renamed::ToolError> {
    let _ = ctx.call_id();
    Ok(format!("{}{}", word.to_uppercase(), "!".repeat(marks)))
}

fn tools() -> ToolSet {
    ToolSet::new([
        wrap(Arc::new(CountdownTool), None),
        wrap(Arc::new(DivideTool), None),
        wrap(Arc::new(RepeatTool), None),
        wrap(Arc::new(ShoutTool), None),
    ])
}

async fn run(calls: &[ToolCall]) -> (pi_tools::BatchOutcome, Vec<ToolEvent>) {
    let sink = CollectingSink::new();
    let outcome = execute_tool_calls(
        &tools(),
        calls,
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &sink,
    )
    .await;
    (outcome, sink.events())
}

#[tokio::test]
async fn a_successful_call_returns_content_and_details_and_streams_updates() {
    let calls = [ToolCall::new("c1", "countdown", json!({"from": 3}))];
    let (outcome, events) = run(&calls).await;
    let message = &outcome.messages[0];
    assert!(!message.is_error);
    assert_eq!(message.content, vec![ContentBlock::text("liftoff")]);
    assert_eq!(message.details, json!([3, 2, 1]));
    let updates: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::ToolExecutionUpdate {
                partial_result,
                tool_call_id,
                ..
            } => {
                assert_eq!(tool_call_id, "c1");
                Some(partial_result.text_content())
            }
            _ => None,
        })
        .collect();
    assert_eq!(updates, ["3", "2", "1"]);
}

#[tokio::test]
async fn invalid_arguments_are_reported_with_the_tools_field_names() {
    let calls = [ToolCall::new(
        "c1",
        "countdown",
        json!({"message": 5, "from": "many"}),
    )];
    let (outcome, _) = run(&calls).await;
    let message = &outcome.messages[0];
    assert!(message.is_error);
    let text = message.content[0].as_text().unwrap_or_default();
    assert!(
        text.starts_with("Validation failed for tool \"countdown\":"),
        "{text}"
    );
    assert!(text.contains("\n  - from: "), "{text}");
}

#[tokio::test]
async fn a_missing_required_field_is_named() {
    let calls = [ToolCall::new("c1", "divide", json!({"a": 1}))];
    let (outcome, _) = run(&calls).await;
    let text = outcome.messages[0].content[0].as_text().unwrap_or_default();
    assert!(outcome.messages[0].is_error);
    assert!(text.contains("\n  - b: "), "{text}");
}

#[tokio::test]
async fn an_err_becomes_an_error_result_keeping_tool_error_details() {
    let calls = [
        ToolCall::new("c1", "countdown", json!({"from": 11})),
        ToolCall::new("c2", "divide", json!({"a": 1, "b": 0})),
    ];
    let (outcome, _) = run(&calls).await;
    let first = &outcome.messages[0];
    assert!(first.is_error);
    assert_eq!(
        first.content,
        vec![ContentBlock::text("Start from 10 or less.")]
    );
    assert_eq!(first.details, json!({"from": 11}));
    let second = &outcome.messages[1];
    assert!(second.is_error);
    assert_eq!(
        second.content,
        vec![ContentBlock::text(
            "Cannot divide by zero: pass a non-zero `b`."
        )]
    );
}

#[tokio::test]
async fn a_serialisable_ok_value_is_returned_as_json_text() {
    let calls = [ToolCall::new("c1", "divide", json!({"a": 1, "b": 4}))];
    let (outcome, _) = run(&calls).await;
    assert!(!outcome.messages[0].is_error);
    assert_eq!(
        outcome.messages[0].content,
        vec![ContentBlock::text("0.25")]
    );
}

#[tokio::test]
async fn the_original_fn_stays_callable() {
    assert_eq!(divide(6.0, 3.0).await, Ok(2.0));
}

#[test]
fn the_definition_carries_the_attribute_metadata() {
    let tool = CountdownTool;
    assert_eq!(tool.spec().name, "countdown");
    assert_eq!(tool.spec().label, "countdown");
    assert_eq!(
        tool.spec().description,
        "Count down from a number, reporting each step."
    );
    assert_eq!(tool.spec().snippet.as_deref(), Some("Count down"));
    assert_eq!(
        tool.spec().guidelines.clone(),
        ["Count down only from small numbers."]
    );
    assert_eq!(
        &tool.spec().parameters,
        &json!({
            "type": "object",
            "properties": {
                "from": {"type": "integer", "minimum": 0, "description": "Where to start."},
                "message": {"type": "string", "description": "Text to print at zero."}
            },
            "required": ["from"]
        })
    );
    let location = tool.spec().source.expect("a location");
    assert!(location.file.ends_with("macro_e2e.rs"), "{location}");
    // The line of the fn.
    assert_eq!(location.line, 18);
}

#[tokio::test]
async fn an_absent_parameter_with_a_default_reaches_the_fn_as_the_default() {
    let calls = [
        ToolCall::new("c1", "repeat", json!({"word": "ab"})),
        ToolCall::new(
            "c2",
            "repeat",
            json!({"word": "ab", "times": 3, "separator": "+"}),
        ),
        // `null` is absent, as for any optional property.
        ToolCall::new("c3", "repeat", json!({"word": "ab", "times": null})),
    ];
    let (outcome, _) = run(&calls).await;
    let texts: Vec<String> = outcome
        .messages
        .iter()
        .map(|m| {
            assert!(!m.is_error, "{m:?}");
            m.content[0].as_text().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(texts, ["ab-ab", "ab+ab+ab", "ab-ab"]);
}

#[test]
fn a_default_is_in_the_schema_and_the_parameter_is_optional() {
    assert_eq!(
        &RepeatTool.spec().parameters,
        &json!({
            "type": "object",
            "properties": {
                "word": {"type": "string", "description": "The word."},
                "times": {"type": "integer", "minimum": 0, "default": 2, "description": "How many copies."},
                "separator": {"type": "string", "default": "-", "description": "What goes between copies."}
            },
            "required": ["word"]
        })
    );
}

#[test]
fn the_whole_doc_comment_is_the_description_and_its_first_paragraph_the_snippet() {
    assert_eq!(
        RepeatTool.spec().description,
        "Repeat a word.\n\nUse it when a word must appear several times; the separator goes \
         between the copies.\n\n- `times` copies\n- joined by `separator`"
    );
    assert_eq!(RepeatTool.spec().snippet.as_deref(), Some("Repeat a word."));
    assert_eq!(
        DivideTool.spec().snippet.as_deref(),
        Some("Divide two numbers.")
    );
    // `snippet = ""` keeps a tool out of the "Available tools" list.
    assert_eq!(ShoutTool.spec().snippet.as_deref(), Some(""));
    assert_eq!(
        pi_tools::prompt::available_tools(&[Arc::new(ShoutTool), Arc::new(DivideTool)]),
        ["- divide: Divide two numbers."]
    );
}

#[test]
fn the_role_key_sets_the_definitions_role() {
    assert_eq!(RepeatTool.spec().role, pi_tools::ToolRole::Explore);
    assert_eq!(DivideTool.spec().role, pi_tools::ToolRole::General);
}

#[tokio::test]
async fn a_tool_declared_through_a_renamed_crate_runs() {
    let calls = [
        ToolCall::new("c1", "shout", json!({"word": "hey"})),
        ToolCall::new("c2", "shout", json!({"word": "hey", "marks": 3})),
    ];
    let (outcome, _) = run(&calls).await;
    assert_eq!(
        outcome.messages[0].content,
        vec![ContentBlock::text("HEY!")]
    );
    assert_eq!(
        outcome.messages[1].content,
        vec![ContentBlock::text("HEY!!!")]
    );
    assert_eq!(
        ShoutTool.spec().parameters["properties"]["marks"]["default"],
        1
    );
}
