//! The `agent` example against a local scripted server for each protocol: fixed replies call
//! `write`, then `read`, then answer in text; the requests the server received carry the
//! tool schemas in the provider's dialect and each result under its call's id.

#![cfg(feature = "cli")]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Uri, header};
use pi_tools::config::Config;
use pi_tools::dialect::{Dialect, check};
use pi_tools::env::WithEnv;
use pi_tools::toolbox::Toolbox;
use pi_tools::{Extensions, Registry};
use serde_json::{Value, json};

/// What the server answers, in order, and what it was sent.
#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<Value>>,
    /// `(path, the key the client sent, body)` of every request.
    requests: Mutex<Vec<(String, String, Value)>>,
}

async fn answer(
    State(script): State<Arc<Script>>,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> ([(header::HeaderName, &'static str); 1], String) {
    let key = headers
        .get("x-api-key")
        .or_else(|| headers.get(header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = serde_json::from_str(&body).expect("the client sends JSON");
    script
        .requests
        .lock()
        .unwrap()
        .push((uri.path().to_owned(), key, body));
    let reply = script
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .expect("a scripted reply is left");
    (
        [(header::CONTENT_TYPE, "application/json")],
        reply.to_string(),
    )
}

/// The example's executable (this package builds it from the example's source).
fn agent_binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_agent"))
}

/// Serves `replies`, runs the example with `args` in a fresh directory, and returns the
/// requests, the example's standard output and its directory.
pub(super) async fn converse(
    name: &str,
    replies: Vec<Value>,
    env: &[(&str, String)],
    args: &[&str],
) -> (Vec<(String, String, Value)>, String, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("agent")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = Arc::new(Script {
        replies: Mutex::new(replies.into()),
        ..Script::default()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new().fallback(answer).with_state(script.clone());
    let mut command = Command::new(agent_binary());
    command
        .current_dir(&dir)
        .args(args)
        .env("PI_TOOLS_MODEL", "scripted-model");
    // Over https, with a certificate made for this server that the example is told to trust
    // as any program would be: through SSL_CERT_FILE.
    let tls = env.iter().any(|(_, value)| value.starts_with("https://"));
    let server = if tls {
        let (listener, certificate) = super::tls::Listener::new(listener);
        let trusted = dir.with_extension("pem");
        std::fs::write(&trusted, certificate).unwrap();
        command
            .env("SSL_CERT_FILE", &trusted)
            .env_remove("SSL_CERT_DIR");
        tokio::spawn(async move { axum::serve(listener, app).await })
    } else {
        tokio::spawn(async move { axum::serve(listener, app).await })
    };
    for (key, value) in env {
        command.env(key, value.replace("PORT", &port.to_string()));
    }
    let output = tokio::task::spawn_blocking(move || command.output().expect("the example runs"))
        .await
        .unwrap();
    server.abort();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = script.requests.lock().unwrap().clone();
    (requests, stdout, dir)
}

const NOTE: &str = "hello from the agent\n";
const WROTE: &str = "Successfully wrote 21 bytes to notes.txt";

/// The toolbox the example assembles (the built-ins its configuration names; its own
/// `word_count` is registered in its binary only), in `dir`.
fn example_toolbox(dir: &Path) -> Toolbox {
    let registered: Vec<_> = Registry::from_inventory()
        .unwrap()
        .iter()
        .cloned()
        .collect();
    let config = Config::parse(
        "[tools]\nactive = [\"read\", \"write\", \"edit\", \"bash\", \"ls\", \"grep\"]\n",
        "pi-tools.toml",
        &registered,
    )
    .unwrap();
    let env = config.local_env(dir).unwrap();
    Toolbox::new(
        registered,
        &config,
        Extensions::new().with_env(Arc::new(env)),
    )
}

/// Runs the example against `replies` (a write, a read, then text) and checks what every
/// protocol shares: the note is written, three requests went to `path` with `key`, each
/// listing the example's tools in `provider`'s dialect. Returns the request bodies, the
/// example's standard output and its directory.
async fn take_a_note(
    name: &str,
    replies: Vec<Value>,
    env: &[(&str, String)],
    args: &[&str],
    (provider, path, key): (Dialect, &str, &str),
) -> (Vec<Value>, String, PathBuf) {
    let (requests, stdout, dir) = converse(name, replies, env, args).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        NOTE
    );
    assert_eq!(requests.len(), 3);
    let mut bodies = Vec::new();
    for (sent_path, sent_key, body) in requests {
        assert_eq!((sent_path.as_str(), sent_key.as_str()), (path, key));
        assert_tools(&body["tools"], provider, &dir);
        bodies.push(body);
    }
    (bodies, stdout, dir)
}

/// The example's tools for `provider`: the built-ins as its toolbox renders them (bash's
/// description says what the sandbox allows), and the example's own `word_count`, all held
/// to the provider's dialect's rules.
fn assert_tools(tools: &Value, provider: Dialect, dir: &Path) {
    let expected = example_toolbox(dir).schemas(provider).unwrap();
    let tools = tools.as_array().expect("the request lists the tools");
    assert_eq!(tools[..6], expected[..]);
    assert_eq!(tools.len(), 7);
    let bash = &tools[3].to_string();
    assert!(
        bash.contains("may write only in the working directory"),
        "{bash}"
    );
    for tool in tools {
        assert_eq!(check(provider, tool), Ok(()), "{tool}");
    }
}

/// The system prompt the example sends: its toolbox's, whose last tool is its own
/// `word_count` (which has no guidelines).
fn system_prompt(dir: &Path) -> String {
    example_toolbox(dir).prompt().to_string().replacen(
        "\n\nGuidelines:",
        "\n- word_count: Count the words of a text.\n\nGuidelines:",
        1,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_loops_over_chat_completions_until_the_model_answers() {
    chat_completions("openai", "http").await;
}

/// Issue: the example defaulted to the providers' https URLs but was built without TLS.
/// Each protocol again, over https.
#[tokio::test(flavor = "multi_thread")]
async fn the_agent_reaches_https_endpoints_of_every_protocol() {
    chat_completions("openai-https", "https").await;
    anthropic_messages("anthropic-https", "https").await;
    responses("responses-https", "https").await;
}

async fn chat_completions(name: &str, scheme: &str) {
    let completion = |message: Value, finish: &str| {
        json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted-model",
               "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
    };
    let call = |id: &str, name: &str, arguments: Value| {
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
               "function": {"name": name, "arguments": arguments.to_string()}}]})
    };
    let replies = vec![
        completion(
            call(
                "call_w",
                "write",
                json!({"path": "notes.txt", "content": NOTE}),
            ),
            "tool_calls",
        ),
        completion(
            call("call_r", "read", json!({"path": "notes.txt"})),
            "tool_calls",
        ),
        completion(
            json!({"role": "assistant", "content": "The note says hello."}),
            "stop",
        ),
    ];
    let env = [
        ("OPENAI_BASE_URL", format!("{scheme}://localhost:PORT/v1")),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
    ];
    let target = (Dialect::OpenAi, "/v1/chat/completions", "Bearer sk-test");
    let (bodies, stdout, dir) =
        take_a_note(name, replies.clone(), &env, &["Take a note"], target).await;
    for body in &bodies {
        assert_eq!(body["model"], "scripted-model");
    }
    let system = json!({"role": "system", "content": system_prompt(&dir)});
    let user = json!({"role": "user", "content": "Take a note"});
    let assistant = |i: usize| replies[i]["choices"][0]["message"].clone();
    let wrote = json!({"role": "tool", "tool_call_id": "call_w", "content": WROTE});
    let read = json!({"role": "tool", "tool_call_id": "call_r", "content": NOTE});
    assert_eq!(bodies[0]["messages"], json!([system, user]));
    assert_eq!(
        bodies[1]["messages"],
        json!([system, user, assistant(0), wrote])
    );
    assert_eq!(
        bodies[2]["messages"],
        json!([system, user, assistant(0), wrote, assistant(1), read])
    );
    assert!(
        stdout.ends_with("assistant: The note says hello.\n"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_loops_over_anthropic_messages_until_the_model_answers() {
    anthropic_messages("anthropic", "http").await;
}

async fn anthropic_messages(name: &str, scheme: &str) {
    let message = |content: Value, stop: &str| {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "scripted-model",
               "content": content, "stop_reason": stop, "stop_sequence": null,
               "usage": {"input_tokens": 1, "output_tokens": 1}})
    };
    let tool_use = |id: &str, name: &str, input: Value| {
        json!([{"type": "text", "text": "On it."},
               {"type": "tool_use", "id": id, "name": name, "input": input}])
    };
    let replies = vec![
        message(
            tool_use(
                "toolu_w",
                "write",
                json!({"path": "notes.txt", "content": NOTE}),
            ),
            "tool_use",
        ),
        message(
            tool_use("toolu_r", "read", json!({"path": "notes.txt"})),
            "tool_use",
        ),
        message(
            json!([{"type": "text", "text": "The note says hello."}]),
            "end_turn",
        ),
    ];
    let env = [
        ("ANTHROPIC_BASE_URL", format!("{scheme}://localhost:PORT")),
        ("ANTHROPIC_API_KEY", "sk-ant-test".to_owned()),
    ];
    let args = ["--provider", "anthropic", "Take a note"];
    let target = (Dialect::Anthropic, "/v1/messages", "sk-ant-test");
    let (bodies, stdout, dir) = take_a_note(name, replies.clone(), &env, &args, target).await;
    for body in &bodies {
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(body["system"], system_prompt(&dir));
    }
    let user = json!({"role": "user", "content": "Take a note"});
    let assistant = |i: usize| json!({"role": "assistant", "content": replies[i]["content"]});
    let result = |id: &str, text: &str| {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
               "content": [{"type": "text", "text": text}], "is_error": false}]})
    };
    let wrote = result("toolu_w", WROTE);
    let read = result("toolu_r", NOTE);
    assert_eq!(bodies[1]["messages"], json!([user, assistant(0), wrote]));
    assert_eq!(
        bodies[2]["messages"],
        json!([user, assistant(0), wrote, assistant(1), read])
    );
    assert!(
        stdout.ends_with("assistant: The note says hello.\n"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_loops_over_responses_until_the_model_answers() {
    responses("responses", "http").await;
}

async fn responses(name: &str, scheme: &str) {
    let response = |output: Value| {
        json!({"id": "resp_1", "object": "response", "status": "completed", "model": "scripted-model",
               "output": output})
    };
    let call = |id: &str, name: &str, arguments: Value| {
        json!([{"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name,
                "arguments": arguments.to_string(), "status": "completed"}])
    };
    let replies = vec![
        response(call(
            "call_w",
            "write",
            json!({"path": "notes.txt", "content": NOTE}),
        )),
        response(call("call_r", "read", json!({"path": "notes.txt"}))),
        response(
            json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": "The note says hello.", "annotations": []}]}]),
        ),
    ];
    let env = [
        ("OPENAI_BASE_URL", format!("{scheme}://localhost:PORT/v1")),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
    ];
    let args = ["--provider", "openai-responses", "Take a note"];
    let target = (Dialect::OpenAiResponses, "/v1/responses", "Bearer sk-test");
    let (bodies, stdout, dir) = take_a_note(name, replies.clone(), &env, &args, target).await;
    for body in &bodies {
        assert_eq!(body["instructions"], system_prompt(&dir));
        for tool in body["tools"].as_array().unwrap() {
            assert_eq!(
                (&tool["type"], &tool["strict"]),
                (&json!("function"), &json!(true))
            );
        }
    }
    let user = json!({"role": "user", "content": "Take a note"});
    let item = |i: usize| replies[i]["output"][0].clone();
    let output = |id: &str, text: &str| json!({"type": "function_call_output", "call_id": id, "output": text});
    assert_eq!(bodies[0]["input"], json!([user]));
    assert_eq!(
        bodies[2]["input"],
        json!([
            user,
            item(0),
            output("call_w", WROTE),
            item(1),
            output("call_r", NOTE)
        ])
    );
    assert!(
        stdout.ends_with("assistant: The note says hello.\n"),
        "{stdout}"
    );
}
