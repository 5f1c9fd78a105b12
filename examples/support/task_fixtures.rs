//! The conformance suite's fixture tools for the tasks extension (SEP-2663), each declared
//! with `#[tool]` and served with the task support its scenario names (see [`serve`]).

use std::time::Duration;

use pi_tools::mcp::{McpTool, TaskSupport};
use pi_tools::{Answer, Question, ToolContext, ToolError, tool};
use serde_json::json;

/// Says hello to `name`; a quick tool that is never a task.
#[tool]
async fn greet(
    /// Who to greet.
    name: String,
) -> Result<String, ToolError> {
    Ok(format!("Hello, {name}!"))
}

/// Works for `seconds` seconds, then says it is done; a call that runs long becomes a task,
/// and cancelling the task stops the work.
#[tool]
async fn slow_compute(
    /// How long to work, in seconds (0: at once).
    seconds: u64,
    /// A name for the result.
    label: Option<String>,
) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let label = label.unwrap_or_else(|| "result".to_owned());
    Ok(format!("Computed {label} in {seconds} s."))
}

/// Works for a second, then fails: a tool's error, which a task gives as its completed
/// result with `isError`.
#[tool]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new(
        "The job failed after a second of work, as this fixture always does.",
    ))
}

/// Needs the client's roots, so a request that did not declare the roots capability ends in
/// a protocol error (`-32021`), which a task gives as `failed` with that error.
#[tool]
async fn protocol_error_job(ctx: &ToolContext) -> Result<String, ToolError> {
    let roots = ctx.client_roots().await?;
    Ok(format!("The client works in {} roots.", roots.len()))
}

/// Asks the person to confirm the deletion of `filename`, and waits for the answer (the
/// fixture deletes nothing).
#[tool]
async fn confirm_delete(
    ctx: &ToolContext,
    /// The file to delete.
    filename: String,
) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Delete it?"}},
        "required": ["confirm"]
    });
    let question = Question::new(format!("Delete {filename}?"), form).with_id("confirm");
    Ok(match ctx.ask(question).await? {
        Answer::Accept(content) if content["confirm"] == true => format!("Deleted {filename}."),
        _ => format!("{filename} was kept: the person did not confirm."),
    })
}

/// Asks two questions at once, so both wait for their answers together.
#[tool]
async fn multi_input(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = || {
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        })
    };
    let first = ctx.ask(Question::new("The first name?", form()).with_id("first"));
    let second = ctx.ask(Question::new("The second name?", form()).with_id("second"));
    let (first, second) = tokio::join!(first, second);
    Ok(format!("Got {} and {}.", name(&first?), name(&second?)))
}

/// Asks the person's name (key `user_name`), then greets them; it runs only as a task, so
/// its result is a task's even though the question came first.
#[tool]
async fn test_tool_with_task(ctx: &ToolContext) -> Result<String, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    });
    let question = Question::new("What is your name?", form).with_id("user_name");
    Ok(format!("Hello, {}!", name(&ctx.ask(question).await?)))
}

/// The `name` of an accepted answer, or what the person did instead.
fn name(answer: &Answer) -> String {
    match answer {
        Answer::Accept(content) => content["name"].as_str().unwrap_or("(no name)").to_owned(),
        Answer::Decline => "(declined)".to_owned(),
        Answer::Cancel => "(cancelled)".to_owned(),
    }
}

/// `tool` as the server serves it: a tasks fixture with its task support (the questions of
/// `confirm_delete` and `multi_input` are their task's from the start); `None` for a tool
/// that is none of them.
pub fn serve(tool: McpTool) -> Option<McpTool> {
    Some(match tool.tool.name() {
        "greet" => tool.task_support(TaskSupport::Forbidden),
        "slow_compute" => tool.task_support(TaskSupport::Optional),
        "failing_job" | "protocol_error_job" | "test_tool_with_task" => {
            tool.task_support(TaskSupport::Required)
        }
        "confirm_delete" | "multi_input" => tool
            .task_support(TaskSupport::Optional)
            .task_after(Duration::ZERO),
        _ => return None,
    })
}
