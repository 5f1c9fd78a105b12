//! A prompt that asks the client before it gives its messages (`McpPrompts::get_asking`
//! with a `PromptContext`), in process: a 2025-11-25 session's client gets
//! `elicitation/create` while `prompts/get` waits; a 2026-07-28 client gets an
//! input-required result whose signed `requestState` brings its answer back to the prompt
//! once, and a tampered, replayed, foreign or misapplied state is refused with a sentence.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_tools::mcp::{
    McpPromptArgument, McpPromptInfo, McpPromptMessage, McpPrompts, McpTool, McpTools,
    PromptContext,
};
use pi_tools::{Answer, BoxFuture, Question, RunnerConfig};
use serde_json::{Map, Value, json};
use support::mcp::RawPipe;

use super::mcp_tool_asks::Asking;

/// The form the prompt asks with.
fn context_form() -> Value {
    json!({
        "type": "object",
        "properties": {"context": {"type": "string"}},
        "required": ["context"]
    })
}

/// One prompt, `brief` (an optional `topic`), that asks the person what context to use,
/// counting how often its messages were made.
struct Brief {
    runs: Arc<AtomicUsize>,
}

impl McpPrompts for Brief {
    fn list(&self) -> Vec<McpPromptInfo> {
        vec![McpPromptInfo::new("brief").with_argument(McpPromptArgument::new("topic"))]
    }

    fn get_asking<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Map<String, Value>,
        ctx: &'a PromptContext,
    ) -> BoxFuture<'a, Option<Result<Vec<McpPromptMessage>, String>>> {
        Box::pin(async move {
            if name != "brief" {
                return None;
            }
            self.runs.fetch_add(1, Ordering::SeqCst);
            let question = Question::new("What context should the brief use?", context_form())
                .with_id("user_context");
            let context = match ctx.ask(question).await {
                Ok(Answer::Accept(content)) => {
                    content["context"].as_str().unwrap_or("?").to_owned()
                }
                Ok(_) => "none".to_owned(),
                Err(why) => return Some(Err(why)),
            };
            let topic = arguments
                .get("topic")
                .and_then(Value::as_str)
                .unwrap_or("anything");
            Some(Ok(vec![McpPromptMessage::user(format!(
                "Brief me on {topic}, in the context of {context}."
            ))]))
        })
    }
}

/// The prompt `brief`, and the tool `greet` that asks too.
fn served(runs: &Arc<AtomicUsize>) -> McpTools {
    let tool_runs = Arc::new(AtomicUsize::new(0));
    [McpTool::new(Asking::tool("greet", &tool_runs))]
        .into_iter()
        .collect::<McpTools>()
        .with_prompts(Brief {
            runs: Arc::clone(runs),
        })
}

fn pipe(runs: &Arc<AtomicUsize>) -> RawPipe {
    RawPipe::start(served(runs), RunnerConfig::default())
}

/// Opens a 2025-11-25 session whose client declares `capabilities`.
async fn open_session(pipe: &mut RawPipe, capabilities: Value) {
    pipe.send(json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "prompt-asks", "version": "0"}
        }
    }))
    .await;
    assert!(pipe.recv().await["result"].is_object());
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

fn messages_of(text: &str) -> Value {
    json!([{"role": "user", "content": {"type": "text", "text": text}}])
}

#[tokio::test]
async fn a_prompt_asks_a_2025_client_by_request_while_prompts_get_waits() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = pipe(&runs);
    open_session(&mut pipe, json!({"elicitation": {}})).await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
        "params": {"name": "brief", "arguments": {"topic": "tides"}}}))
        .await;
    let asked = pipe.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    // Beside what the protocol library adds (`_meta.progressToken`).
    let mut params = asked["params"].clone();
    params.as_object_mut().expect("params").remove("_meta");
    assert_eq!(
        params,
        json!({
            "mode": "form",
            "message": "What context should the brief use?",
            "requestedSchema": context_form(),
        })
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result":
        {"action": "accept", "content": {"context": "sailing"}}}))
        .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(
        answer["result"]["messages"],
        messages_of("Brief me on tides, in the context of sailing.")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_2025_client_without_elicitation_is_not_asked_and_told_why() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = pipe(&runs);
    open_session(&mut pipe, json!({})).await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
        "params": {"name": "brief"}}))
        .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "The MCP client cannot be asked: it did not declare the `elicitation` capability when it connected (`initialize`). Use a client that offers elicitation, or put what it would ask for into the arguments."
    );
}

/// A 2026-07-28 request of `method` by a client declaring `capabilities`, with `params`.
fn request_2026(id: i64, method: &str, capabilities: Value, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "prompt-asks", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn get_2026(id: i64, extra: Value) -> Value {
    let mut params = json!({"name": "brief", "arguments": {"topic": "tides"}});
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    request_2026(id, "prompts/get", json!({"elicitation": {}}), params)
}

fn answered(content: Value, state: &str) -> Value {
    json!({
        "inputResponses": {"user_context": {"action": "accept", "content": content}},
        "requestState": state,
    })
}

fn refusal(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    answer["error"]["message"]
        .as_str()
        .expect("a message")
        .to_owned()
}

/// The `inputRequests` and `requestState` of an input-required result.
fn input_required(answer: &Value) -> (Value, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    (result["inputRequests"].clone(), state)
}

const AGAIN: &str =
    "Get the prompt again without `requestState` and `inputResponses` to be asked anew.";

#[tokio::test]
async fn a_2026_prompt_question_is_a_result_and_its_signed_state_is_taken_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = pipe(&runs);

    pipe.send(get_2026(1, json!({}))).await;
    let (requests, state) = input_required(&pipe.recv().await);
    assert_eq!(
        requests,
        json!({"user_context": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What context should the brief use?",
                "requestedSchema": context_form(),
            },
        }})
    );

    // Tampered: refused.
    let mut tampered = state.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    pipe.send(get_2026(
        2,
        answered(json!({"context": "sailing"}), &tampered),
    ))
    .await;
    assert_eq!(
        refusal(&pipe.recv().await),
        format!(
            "The `requestState` was not made by this server process: it was altered, or it comes from another server or from before a restart, so nothing ran. {AGAIN}"
        )
    );

    // The same state with other arguments: refused.
    let mut other = get_2026(3, answered(json!({"context": "sailing"}), &state));
    other["params"]["arguments"] = json!({"topic": "winds"});
    pipe.send(other).await;
    assert_eq!(
        refusal(&pipe.recv().await),
        format!(
            "The `requestState` was given for another call (the prompt `brief` with other arguments), and an answer holds only for the exact call it was asked about, so nothing ran. {AGAIN}"
        )
    );

    // The answer: the prompt's messages are made again, with it.
    pipe.send(get_2026(4, answered(json!({"context": "sailing"}), &state)))
        .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(
        answer["result"]["messages"],
        messages_of("Brief me on tides, in the context of sailing.")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // Replayed: refused, the prompt not made again.
    pipe.send(get_2026(5, answered(json!({"context": "storms"}), &state)))
        .await;
    assert_eq!(
        refusal(&pipe.recv().await),
        format!(
            "The `requestState` was already used: an answer runs its call once, and that call was run (or refused) already, so nothing ran now. {AGAIN}"
        )
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_tools_state_is_refused_for_a_prompt() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = pipe(&runs);
    let call = json!({"name": "greet", "arguments": {}});
    pipe.send(request_2026(
        1,
        "tools/call",
        json!({"elicitation": {}}),
        call,
    ))
    .await;
    let (_, state) = input_required(&pipe.recv().await);
    pipe.send(get_2026(2, answered(json!({"context": "sailing"}), &state)))
        .await;
    let message = refusal(&pipe.recv().await);
    assert!(
        message.starts_with("The `requestState` was given for another call (the tool `greet`"),
        "{message}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the prompt was not made");
}

#[tokio::test]
async fn a_2026_request_without_elicitation_gets_the_missing_capability_error() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = pipe(&runs);
    pipe.send(request_2026(
        1,
        "prompts/get",
        json!({}),
        json!({"name": "brief"}),
    ))
    .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );
    let message = answer["error"]["message"].as_str().expect("a message");
    assert!(
        message.starts_with("The prompt needs the client's `elicitation` capability"),
        "{message}"
    );
}
