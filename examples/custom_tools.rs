//! Two custom tools declared with `#[tool]`, found through the registry and run as one batch
//! of model tool calls.
//!
//! Run with `cargo run --example custom_tools`.

use std::sync::Arc;

use pi_tools::{
    CollectingSink, Registry, RunnerConfig, ToolCall, ToolContext, ToolError, ToolEvent,
    ToolOutput, ToolResult, ToolSet, execute_tool_calls, tool, wrap,
};
use serde::Serialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Count the words of a text.
#[tool(snippet = "Count the words of a text", read_only)]
async fn word_count(
    /// The text to count.
    text: String,
) -> Result<WordCount, ToolError> {
    Ok(WordCount {
        words: text.split_whitespace().count(),
        chars: text.chars().count(),
    })
}

/// How long a text is (the tool's output schema; the model reads it as compact JSON).
#[derive(Serialize, pi_tools::schemars::JsonSchema)]
#[schemars(crate = "pi_tools::schemars")]
struct WordCount {
    /// Words, separated by whitespace.
    words: usize,
    /// Characters (Unicode scalar values).
    chars: usize,
}

/// Repeat a text a number of times, reporting progress.
#[tool(guidelines = ["Repeat at most 5 times."])]
async fn repeat(
    ctx: &ToolContext,
    /// The text to repeat.
    text: String,
    /// How many times (1 to 5).
    times: u32,
    /// What to put between the repetitions (default: a space).
    separator: Option<String>,
) -> Result<ToolOutput<serde_json::Value>, ToolError> {
    if !(1..=5).contains(&times) {
        return Err(ToolError::new(format!(
            "`times` must be between 1 and 5, not {times}: call repeat again with a smaller number."
        )));
    }
    let mut parts = Vec::new();
    for i in 0..times {
        parts.push(text.clone());
        ctx.update(ToolResult::text(format!("{}/{times}", i + 1)));
    }
    let out = parts.join(separator.as_deref().unwrap_or(" "));
    Ok(ToolOutput::text(out).with_details(json!({ "times": times })))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::from_inventory()?;
    println!(
        "registered tools: {:?}",
        registry.names().collect::<Vec<_>>()
    );
    let tools = ToolSet::new(registry.iter().map(|def| wrap(Arc::clone(def), None)));

    let calls = [
        ToolCall::new(
            "call_1",
            "word_count",
            json!({"text": "the quick brown fox"}),
        ),
        ToolCall::new(
            "call_2",
            "repeat",
            json!({"text": "hi", "times": "3", "separator": "-"}),
        ),
        ToolCall::new("call_3", "repeat", json!({"text": "hi", "times": 9})),
        ToolCall::new("call_4", "repeat", json!({"times": 2})),
    ];
    let sink = CollectingSink::new();
    let outcome = execute_tool_calls(
        &tools,
        &calls,
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &sink,
    )
    .await;

    let updates = sink
        .events()
        .iter()
        .filter(|e| matches!(e, ToolEvent::ToolExecutionUpdate { .. }))
        .count();
    println!("progress updates: {updates}");
    for message in &outcome.messages {
        let text: Vec<&str> = message.content.iter().filter_map(|b| b.as_text()).collect();
        let status = if message.is_error { "error" } else { "ok" };
        println!(
            "--- {} ({}, {status})\n{}",
            message.tool_call_id,
            message.tool_name,
            text.join("\n")
        );
    }
    Ok(())
}
