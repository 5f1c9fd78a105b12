//! Tools calling tools (`ctx.call_tool`): through the policy (a denial fails the nested call
//! only, an `ask` goes to the same approver), under the caller's cancellation, through the
//! per-file mutation queue, with events under the caller's id, and bounded in depth and
//! number.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_tools::builtins::results::{WriteOutcome, WriteResult};
use pi_tools::config::Config;
use pi_tools::core::BoxFuture;
use pi_tools::env::{ToolContextExt, WithEnv, mutation_key};
use pi_tools::policy::{Approval, ApprovalRequest, Approver};
use pi_tools::toolbox::Toolbox;
use pi_tools::{
    BatchOutcome, CollectingSink, Extensions, MAX_NESTED_CALLS, ToolCall, ToolContext, ToolError,
    ToolEvent, execute_tool_calls, tool,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Write a file through the write tool, and say how it went.
#[tool(name = "nested_write")]
async fn nested_write(ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    let written = ctx
        .call_tool_as::<WriteResult>("write", json!({"path": path, "content": "x"}))
        .await;
    Ok(match written {
        Ok(WriteResult {
            bytes,
            outcome: WriteOutcome::Created,
            ..
        }) => format!("created with {bytes} byte"),
        Ok(other) => format!("unexpected: {other:?}"),
        Err(e) => format!("the write did not happen. {}", e.message()),
    })
}

/// Run a command through bash and return its text.
#[tool(name = "nested_bash")]
async fn nested_bash(ctx: &ToolContext, command: String) -> Result<String, ToolError> {
    let result = ctx.call_tool("bash", json!({"command": command})).await?;
    Ok(result.text_content())
}

/// Append a line to a file itself while an edit of the same file runs as a nested call.
#[tool(name = "nested_edit_beside")]
async fn nested_edit_beside(ctx: &ToolContext, path: String) -> Result<String, ToolError> {
    let env = ctx.env();
    let file = env.cwd().join(&path);
    let key = mutation_key(&*env, &file)
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    let queue = env.mutation_queue().clone();
    let own = queue.run(key, {
        let env = Arc::clone(&env);
        async move {
            let before = env.read_file(&file).await?;
            tokio::time::sleep(Duration::from_millis(150)).await;
            let mut after = before;
            after.extend_from_slice(b"parent\n");
            env.write_file(&file, after).await
        }
    });
    let edit = ctx.call_tool(
        "edit",
        json!({"path": path, "edits": [{"oldText": "start", "newText": "start edited"}]}),
    );
    let (own, edit) = tokio::join!(own, edit);
    own.map_err(|e| ToolError::new(e.to_string()))?;
    Ok(edit?.text_content())
}

/// Call itself one level deeper until refused, and say where.
#[tool(name = "nested_recurse")]
async fn nested_recurse(ctx: &ToolContext, level: u32) -> Result<String, ToolError> {
    match ctx
        .call_tool("nested_recurse", json!({"level": level + 1}))
        .await
    {
        Ok(result) => Ok(result.text_content()),
        Err(e) => Ok(format!("{level}: {}", e.message())),
    }
}

/// Call ls until refused, and say how many calls went through.
#[tool(name = "nested_many")]
async fn nested_many(ctx: &ToolContext) -> Result<String, ToolError> {
    for n in 0.. {
        if let Err(e) = ctx.call_tool("ls", json!({})).await {
            return Ok(format!("{n}: {}", e.message()));
        }
    }
    Ok(String::new())
}

const CONFIG: &str = r#"
[tools]
active = ["bash", "write", "edit", "ls", "nested_write", "nested_bash", "nested_edit_beside", "nested_recurse", "nested_many"]

[sandbox]
mode = "off"

[policy]
default = "allow"

[[policy.rule]]
tool = "write"
path = "secrets/**"
decision = "deny"
reason = "Secrets stay unwritten."

[[policy.rule]]
tool = "write"
path = "asked/**"
decision = "ask"
"#;

fn toolbox(cwd: &Path) -> Toolbox {
    let registry = pi_tools::Registry::from_inventory().expect("the tools register");
    let registered: Vec<_> = registry.iter().cloned().collect();
    let config = Config::parse(CONFIG, "pi-tools.toml", &registered).expect("valid");
    let env = config.local_env(cwd).expect("the environment builds");
    Toolbox::new(
        registered,
        &config,
        Extensions::new().with_env(Arc::new(env)),
    )
}

async fn run(
    toolbox: &Toolbox,
    calls: &[ToolCall],
    cancel: &CancellationToken,
) -> (BatchOutcome, Vec<ToolEvent>) {
    let sink = CollectingSink::new();
    let outcome = execute_tool_calls(
        toolbox.tool_set(),
        calls,
        &toolbox.runner_config(),
        cancel,
        &sink,
    )
    .await;
    (outcome, sink.events())
}

#[tokio::test]
async fn a_nested_call_the_policy_denies_fails_alone_and_the_caller_says_so() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let toolbox = toolbox(dir.path());
    let (outcome, events) = run(
        &toolbox,
        &[
            ToolCall::new("1", "nested_write", json!({"path": "secrets/key"})),
            ToolCall::new("2", "nested_write", json!({"path": "notes.txt"})),
        ],
        &CancellationToken::new(),
    )
    .await;
    let denied = &outcome.messages[0];
    assert!(!denied.is_error, "the caller goes on");
    assert_eq!(
        denied.text_content(),
        "the write did not happen. The call of write failed: The policy denies this call, so nothing ran: this call is covered by the policy rule at pi-tools.toml:11:1 (tool = write, path = secrets/**). Its reason: Secrets stay unwritten. Do not retry it in another form: do what the policy allows instead, or ask the user to do this step themselves."
    );
    assert!(!dir.path().join("secrets").exists());
    assert_eq!(outcome.messages[1].text_content(), "created with 1 byte");
    assert!(dir.path().join("notes.txt").exists());
    // The nested calls' events, under their callers' ids; no transcript message of theirs.
    let nested: Vec<(String, String, String)> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::ToolExecutionNested {
                parent_tool_call_id,
                event,
            } => Some((
                parent_tool_call_id.clone(),
                event.kind().to_owned(),
                event.tool_call_id().to_owned(),
            )),
            _ => None,
        })
        .collect();
    for parent in ["1", "2"] {
        let mine: Vec<_> = nested.iter().filter(|n| n.0 == parent).cloned().collect();
        let id = format!("{parent}.1");
        assert_eq!(
            mine,
            [
                (
                    parent.to_owned(),
                    "tool_execution_start".to_owned(),
                    id.clone()
                ),
                (parent.to_owned(), "tool_execution_end".to_owned(), id)
            ]
        );
    }
    assert_eq!(outcome.messages.len(), 2);
    let wire = serde_json::to_value(&events[events.len() - 1]).expect("serialises");
    assert_eq!(wire["type"], "message_end");
}

/// Denies, and records what it was asked.
struct Declining(Mutex<Vec<String>>);

impl Approver for Declining {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Approval> {
        self.0
            .lock()
            .expect("lock")
            .push(format!("{} {}", request.tool, request.args["path"]));
        Box::pin(async { Approval::Deny(Some("not now".to_owned())) })
    }
}

#[tokio::test]
async fn an_ask_of_a_nested_call_goes_to_the_same_approver() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let approver = Arc::new(Declining(Mutex::new(Vec::new())));
    let toolbox = toolbox(dir.path()).with_approver(approver.clone());
    let (outcome, _) = run(
        &toolbox,
        &[ToolCall::new(
            "1",
            "nested_write",
            json!({"path": "asked/a"}),
        )],
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(*approver.0.lock().expect("lock"), ["write \"asked/a\""]);
    assert_eq!(
        outcome.messages[0].text_content(),
        "the write did not happen. The call of write failed: This call needs a person's approval: this call is covered by the policy rule at pi-tools.toml:17:1 (tool = write, path = asked/**). The person asked declined, so nothing ran. They said: not now Do not retry it in another form: do what the policy allows instead, or ask the user to do this step themselves."
    );
    assert!(!dir.path().join("asked").exists());
}

#[tokio::test]
async fn cancelling_the_caller_cancels_the_nested_call() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let toolbox = toolbox(dir.path());
    let cancel = CancellationToken::new();
    let later = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        later.cancel();
    });
    let started = Instant::now();
    let (outcome, _) = run(
        &toolbox,
        &[ToolCall::new(
            "1",
            "nested_bash",
            json!({"command": "sleep 30; touch late"}),
        )],
        &cancel,
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(outcome.messages[0].is_error);
    assert!(
        outcome.messages[0]
            .text_content()
            .starts_with("The call of bash failed: "),
        "{}",
        outcome.messages[0].text_content()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!dir.path().join("late").exists());
}

#[tokio::test]
async fn a_nested_edit_and_its_callers_own_change_of_the_file_are_serialised() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("f.txt"), "start\n").expect("a file");
    let toolbox = toolbox(dir.path());
    let (outcome, _) = run(
        &toolbox,
        &[ToolCall::new(
            "1",
            "nested_edit_beside",
            json!({"path": "f.txt"}),
        )],
        &CancellationToken::new(),
    )
    .await;
    assert!(
        !outcome.messages[0].is_error,
        "{}",
        outcome.messages[0].text_content()
    );
    // The caller's change went first (it asked first) and the edit saw it: neither is lost.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).expect("the file"),
        "start edited\nparent\n"
    );
}

#[tokio::test]
async fn nesting_depth_and_calls_per_call_are_bounded_with_clear_refusals() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let toolbox = toolbox(dir.path());
    let (outcome, _) = run(
        &toolbox,
        &[
            ToolCall::new("1", "nested_recurse", json!({"level": 0})),
            ToolCall::new("2", "nested_many", json!({})),
        ],
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(
        outcome.messages[0].text_content(),
        "4: Tool nested_recurse was not called: tools may call tools only 4 levels below the model's call, and this call is that deep. Do this part of the work in the calling tool, or call nested_recurse from a tool nearer the model."
    );
    assert_eq!(
        outcome.messages[1].text_content(),
        format!(
            "{MAX_NESTED_CALLS}: Tool ls was not called: one call may make at most {MAX_NESTED_CALLS} nested calls, and this one has made them all. Split the work over several calls."
        )
    );
}
