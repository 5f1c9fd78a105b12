//! A tool's own questions over MCP, in process: `ctx.ask` and `ctx.sample` reach a 2025-11-25
//! client as `elicitation/create` and `sampling/createMessage` requests (rmcp's client
//! answers them here), and a 2026-07-28 client as input-required results whose signed
//! `requestState` brings the answers back to the tool when it runs again.
#![cfg(feature = "mcp")]
#![expect(
    deprecated,
    reason = "sampling is marked deprecated by a future protocol revision (SEP-2577), not yet gone"
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_tools::mcp::{McpTool, McpTools};
use pi_tools::{
    AgentTool, Answer, BoxFuture, Question, RunnerConfig, SamplingRequest, ToolContext, ToolError,
    ToolResult,
};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    Role, SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use support::mcp::RawPipe;

/// The form the tools ask with.
fn name_form(field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field]
    })
}

/// A tool that asks the person one question (`greet`), two in turn (`survey`), or the
/// client's model (`haiku`), counting its runs.
pub(crate) struct Asking {
    name: &'static str,
    runs: Arc<AtomicUsize>,
    schema: Value,
}

impl Asking {
    pub(crate) fn tool(name: &'static str, runs: &Arc<AtomicUsize>) -> Arc<dyn AgentTool> {
        Arc::new(Asking {
            name,
            runs: Arc::clone(runs),
            schema: json!({"type": "object", "properties": {}}),
        })
    }
}

fn text_of(answer: Answer, field: &str) -> String {
    match answer {
        Answer::Accept(content) => content[field].as_str().unwrap_or("?").to_owned(),
        Answer::Decline => "(declined)".to_owned(),
        Answer::Cancel => "(cancelled)".to_owned(),
    }
}

impl AgentTool for Asking {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "Asks its client."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute(
        &self,
        _args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            let text = match self.name {
                "greet" => {
                    let name = ctx
                        .ask(Question::new("What is your name?", name_form("name")))
                        .await?;
                    format!("Hello, {}!", text_of(name, "name"))
                }
                "survey" => {
                    let name = ctx
                        .ask(Question::new("Step 1: your name?", name_form("name")))
                        .await?;
                    let color = ctx
                        .ask(Question::new("Step 2: your color?", name_form("color")))
                        .await?;
                    format!(
                        "{} likes {}.",
                        text_of(name, "name"),
                        text_of(color, "color")
                    )
                }
                "fickle" => {
                    // A question that differs on each run: the rule it breaks is refused.
                    let run = self.runs.load(Ordering::SeqCst);
                    let message = format!("Run {run}: your name?");
                    let name = ctx.ask(Question::new(message, name_form("name"))).await?;
                    format!("Hello, {}!", text_of(name, "name"))
                }
                "where" => {
                    let roots = ctx.client_roots().await?;
                    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
                    format!("Roots: {}", uris.join(", "))
                }
                _ => {
                    let sampled = ctx
                        .sample(SamplingRequest::new("Write a haiku.", 60))
                        .await?;
                    format!("{} wrote: {}", sampled.model, sampled.text)
                }
            };
            Ok(ToolResult::text(text))
        })
    }
}

fn served(runs: &Arc<AtomicUsize>) -> McpTools {
    ["greet", "survey", "haiku"]
        .into_iter()
        .map(|name| McpTool::new(Asking::tool(name, runs)))
        .collect()
}

/// A 2025-11-25 client that declares elicitation and sampling (or nothing), answering from
/// a script and recording what it was asked.
#[derive(Clone)]
struct Client {
    declares: bool,
    answers: Arc<Mutex<Vec<ElicitResult>>>,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl Client {
    fn new(declares: bool, answers: Vec<ElicitResult>) -> Self {
        Client {
            declares,
            answers: Arc::new(Mutex::new(answers)),
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<Value> {
        self.asked.lock().expect("lock").clone()
    }
}

impl ClientHandler for Client {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let request = serde_json::to_value(request).expect("serialises");
        self.asked.lock().expect("lock").push(request);
        Ok(self.answers.lock().expect("lock").remove(0))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        let request = serde_json::to_value(params).expect("serialises");
        self.asked.lock().expect("lock").push(request);
        Ok(CreateMessageResult::new(
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text("Old pond, a frog."),
            ),
            "test-model".to_owned(),
        ))
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = match self.declares {
            true => serde_json::from_value(json!({"elicitation": {}, "sampling": {}}))
                .expect("capabilities"),
            false => ClientCapabilities::default(),
        };
        ClientConfig::new(capabilities, Implementation::new("asked", "1"))
    }
}

async fn connect_client(
    runs: &Arc<AtomicUsize>,
    client: Client,
) -> RunningService<RoleClient, Client> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(pi_tools::mcp::serve_split(
        served(runs),
        RunnerConfig::default(),
        read,
        write,
    ));
    client
        .serve(client_io)
        .await
        .expect("the server answers initialize")
}

/// The text and error flag of calling `tool` in a 2025-11-25 session.
async fn call_in_session(
    client: &RunningService<RoleClient, Client>,
    tool: &str,
) -> (String, bool) {
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()))
        .await
        .expect("tools/call answers");
    let content = serde_json::to_value(&result.content).expect("serialises");
    (
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
        result.is_error == Some(true),
    )
}

#[tokio::test]
async fn a_tool_asks_a_2025_client_and_gets_each_answer_back() {
    let runs = Arc::new(AtomicUsize::new(0));
    let client = Client::new(
        true,
        vec![
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})),
            ElicitResult::new(ElicitationAction::Decline),
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Bo"})),
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"color": "red"})),
        ],
    );
    let session = connect_client(&runs, client.clone()).await;

    assert_eq!(
        call_in_session(&session, "greet").await,
        ("Hello, Ada!".to_owned(), false)
    );
    assert_eq!(
        client.asked()[0],
        json!({
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": name_form("name"),
        })
    );
    assert_eq!(
        call_in_session(&session, "greet").await,
        ("Hello, (declined)!".to_owned(), false)
    );
    // Two questions in one run: a session needs no re-run.
    assert_eq!(
        call_in_session(&session, "survey").await,
        ("Bo likes red.".to_owned(), false)
    );
    assert_eq!(runs.load(Ordering::SeqCst), 3);

    assert_eq!(
        call_in_session(&session, "haiku").await,
        ("test-model wrote: Old pond, a frog.".to_owned(), false)
    );
    assert_eq!(
        client.asked()[4],
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Write a haiku."}}],
            "maxTokens": 60,
        })
    );
}

#[tokio::test]
async fn a_2025_client_without_the_capabilities_is_not_asked_and_the_tool_is_told_why() {
    let runs = Arc::new(AtomicUsize::new(0));
    let client = Client::new(false, Vec::new());
    let session = connect_client(&runs, client.clone()).await;
    assert_eq!(
        call_in_session(&session, "greet").await,
        (
            "The MCP client cannot be asked: it did not declare the `elicitation` capability when it connected (`initialize`). Use a client that offers elicitation, or put what it would ask for into the arguments.".to_owned(),
            true
        )
    );
    assert_eq!(
        call_in_session(&session, "haiku").await,
        (
            "The MCP client cannot be asked: it did not declare the `sampling` capability when it connected (`initialize`). Use a client that offers sampling, or put what it would ask for into the arguments.".to_owned(),
            true
        )
    );
    assert!(client.asked().is_empty());
}

/// A 2026-07-28 `tools/call` of `tool` by a client declaring `capabilities`, with `extra`
/// parameters (`inputResponses`, `requestState`).
fn call_2026(id: i64, tool: &str, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "asks-test", "version": "0"},
        },
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            params[k] = v;
        }
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn asking() -> Value {
    json!({"elicitation": {}, "sampling": {}})
}

/// The `inputRequests` and `requestState` of an input-required result.
fn input_required(answer: &Value) -> (Value, String) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    (result["inputRequests"].clone(), state)
}

fn answered(key: &str, content: Value, state: &str) -> Value {
    json!({
        "inputResponses": {key: {"action": "accept", "content": content}},
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

fn text(answer: &Value) -> &str {
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .expect("text")
}

#[tokio::test]
async fn a_2026_tool_question_is_a_result_and_the_retry_brings_the_answer_to_the_tool_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = RawPipe::start(served(&runs), RunnerConfig::default());

    pipe.send(call_2026(1, "greet", asking(), json!({}))).await;
    let (requests, state) = input_required(&pipe.recv().await);
    assert_eq!(
        requests,
        json!({"elicitation-1": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "What is your name?", "requestedSchema": name_form("name")},
        }})
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the tool ran up to its question"
    );

    // Tampered: refused, the tool not run.
    let mut tampered = state.clone().into_bytes();
    let at = tampered.len() / 2;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    pipe.send(call_2026(
        2,
        "greet",
        asking(),
        answered("elicitation-1", json!({"name": "Ada"}), &tampered),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert_eq!(
        message,
        "The `requestState` was not made by this server process: it was altered, or it comes from another server or from before a restart, so nothing ran. Call the tool again without `requestState` and `inputResponses` to be asked anew."
    );

    // An answer under another key than the question's: refused.
    pipe.send(call_2026(
        3,
        "greet",
        asking(),
        answered("user_name", json!({"name": "Ada"}), &state),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert_eq!(
        message,
        "The `inputResponses` hold no answer to `elicitation-1` (elicitation/create), which this round asked, so nothing ran. Answer every question of the round under its key, with the `requestState` as it came. Call the tool again without `requestState` and `inputResponses` to be asked anew."
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "nothing ran for a refusal");

    // The answer: the tool runs again and gets it.
    pipe.send(call_2026(
        4,
        "greet",
        asking(),
        answered("elicitation-1", json!({"name": "Ada"}), &state),
    ))
    .await;
    assert_eq!(text(&pipe.recv().await), "Hello, Ada!");
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // Replayed: refused.
    pipe.send(call_2026(
        5,
        "greet",
        asking(),
        answered("elicitation-1", json!({"name": "Eve"}), &state),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert_eq!(
        message,
        "The `requestState` was already used: an answer runs its call once, and that call was run (or refused) already, so nothing ran now. Call the tool again without `requestState` and `inputResponses` to be asked anew."
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // A state of `greet` given to `survey`: refused.
    pipe.send(call_2026(6, "greet", asking(), json!({}))).await;
    let (_, state) = input_required(&pipe.recv().await);
    pipe.send(call_2026(
        7,
        "survey",
        asking(),
        answered("elicitation-1", json!({"name": "Ada"}), &state),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert!(
        message.starts_with("The `requestState` was given for another call (the tool `greet`"),
        "{message}"
    );
}

#[tokio::test]
async fn a_2026_tool_of_two_questions_runs_three_times_and_gets_both_answers() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = RawPipe::start(served(&runs), RunnerConfig::default());

    pipe.send(call_2026(1, "survey", asking(), json!({}))).await;
    let (requests, first) = input_required(&pipe.recv().await);
    assert_eq!(
        requests["elicitation-1"]["params"]["message"],
        "Step 1: your name?"
    );
    pipe.send(call_2026(
        2,
        "survey",
        asking(),
        answered("elicitation-1", json!({"name": "Ada"}), &first),
    ))
    .await;
    let (requests, second) = input_required(&pipe.recv().await);
    assert_eq!(
        requests
            .as_object()
            .map(|r| r.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["elicitation-2".to_owned()]),
        "only the new question is asked"
    );
    assert_eq!(
        requests["elicitation-2"]["params"]["message"],
        "Step 2: your color?"
    );
    assert_ne!(first, second);
    pipe.send(call_2026(
        3,
        "survey",
        asking(),
        answered("elicitation-2", json!({"color": "teal"}), &second),
    ))
    .await;
    assert_eq!(text(&pipe.recv().await), "Ada likes teal.");
    assert_eq!(runs.load(Ordering::SeqCst), 3, "one run per round");

    // An answer carried to the next state cannot be changed by the client.
    let mut changed = second.clone().into_bytes();
    let at = changed.len() / 3;
    changed[at] = if changed[at] == b'x' { b'y' } else { b'x' };
    let changed = String::from_utf8(changed).expect("ascii");
    pipe.send(call_2026(
        4,
        "survey",
        asking(),
        answered("elicitation-2", json!({"color": "red"}), &changed),
    ))
    .await;
    assert!(refusal(&pipe.recv().await).contains("not made by this server process"));
}

#[tokio::test]
async fn a_2026_tool_asks_the_clients_model_and_gets_its_message() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = RawPipe::start(served(&runs), RunnerConfig::default());

    pipe.send(call_2026(1, "haiku", asking(), json!({}))).await;
    let (requests, state) = input_required(&pipe.recv().await);
    assert_eq!(
        requests,
        json!({"sampling-1": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Write a haiku."}}],
                "maxTokens": 60,
            },
        }})
    );
    let sampled = json!({
        "inputResponses": {"sampling-1": {
            "role": "assistant",
            "content": {"type": "text", "text": "Old pond, a frog."},
            "model": "test-model",
            "stopReason": "endTurn",
        }},
        "requestState": state,
    });
    pipe.send(call_2026(2, "haiku", asking(), sampled)).await;
    assert_eq!(
        text(&pipe.recv().await),
        "test-model wrote: Old pond, a frog."
    );

    // An elicitation result given as the model's message: refused, saying what it must be.
    pipe.send(call_2026(3, "haiku", asking(), json!({}))).await;
    let (_, state) = input_required(&pipe.recv().await);
    pipe.send(call_2026(
        4,
        "haiku",
        asking(),
        answered("sampling-1", json!({"x": 1}), &state),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert!(
        message.starts_with("The answer to `sampling-1` is not a sampling/createMessage result"),
        "{message}"
    );
}

#[tokio::test]
async fn a_2026_client_without_the_capability_gets_missing_capability_naming_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = RawPipe::start(served(&runs), RunnerConfig::default());

    pipe.send(call_2026(1, "haiku", json!({"elicitation": {}}), json!({})))
        .await;
    let refused = pipe.recv().await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    assert_eq!(
        refused["error"]["message"],
        "The tool needs the client's `sampling` capability, which this request did not declare in `_meta` (`io.modelcontextprotocol/clientCapabilities`), so it could not finish. Declare it and call again. The tool said: The MCP client cannot be asked: it did not declare the `sampling` capability in its request's `_meta` (`io.modelcontextprotocol/clientCapabilities`). Use a client that offers sampling, or put what it would ask for into the arguments."
    );

    pipe.send(call_2026(2, "greet", json!({}), json!({}))).await;
    let refused = pipe.recv().await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );
}

/// A server of `greet` (counting its runs in `runs`) whose policy asks the person before
/// each call of it.
fn greet_the_policy_asks_about(runs: &Arc<AtomicUsize>) -> RawPipe {
    use pi_tools::config::Config;
    use pi_tools::toolbox::Toolbox;

    let registered = vec![pi_tools::from_agent_tool(Asking::tool("greet", runs))];
    let toml = "[tools]\nactive = [\"greet\"]\n[[policy.rule]]\ntool = \"greet\"\ndecision = \"ask\"\nreason = \"Greetings are personal.\"\n";
    let config = Config::parse(toml, "pi-tools.toml", &registered).expect("valid");
    let toolbox = Toolbox::new(registered, &config, Default::default());
    RawPipe::start(McpTools::from(&toolbox), toolbox.runner_config())
}

#[tokio::test]
async fn a_2026_call_the_policy_asks_about_is_not_asked_about_again_when_the_tool_asks_next() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = greet_the_policy_asks_about(&runs);

    // Round 1: the policy's question; the tool has not run.
    pipe.send(call_2026(1, "greet", asking(), json!({}))).await;
    let (requests, state) = input_required(&pipe.recv().await);
    let (key, _) = requests
        .as_object()
        .and_then(|r| r.iter().next())
        .expect("one question");
    assert!(key.starts_with("approve-"), "{requests}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // Round 2: allowed; the tool runs and asks its own question.
    pipe.send(call_2026(
        2,
        "greet",
        asking(),
        answered(key, json!({"answer": "allow_once"}), &state),
    ))
    .await;
    let (requests, state) = input_required(&pipe.recv().await);
    assert_eq!(
        requests["elicitation-1"]["params"]["message"],
        "What is your name?"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Round 3: the tool's answer; the person's approval holds for this call, not asked again.
    pipe.send(call_2026(
        3,
        "greet",
        asking(),
        answered("elicitation-1", json!({"name": "Ada"}), &state),
    ))
    .await;
    assert_eq!(text(&pipe.recv().await), "Hello, Ada!");
    assert_eq!(runs.load(Ordering::SeqCst), 2);

    // A new call is asked about again.
    pipe.send(call_2026(4, "greet", asking(), json!({}))).await;
    let (requests, _) = input_required(&pipe.recv().await);
    assert!(
        requests
            .as_object()
            .is_some_and(|r| r.keys().all(|k| k.starts_with("approve-"))),
        "{requests}"
    );
}

#[tokio::test]
async fn a_2026_tool_gets_the_roots_the_server_already_asked_for_without_a_question_of_its_own() {
    use pi_tools::env::local::LocalEnv;
    use pi_tools::session::{ClientRoots, Session, WithSession};

    let runs = Arc::new(AtomicUsize::new(0));
    let work = tempfile::tempdir().expect("a directory");
    let root = work.path().to_path_buf();
    let follow = ClientRoots::new(|roots| {
        Ok(Arc::new(LocalEnv::new(roots[0].clone())) as Arc<dyn pi_tools::env::ExecutionEnv>)
    });
    let session = Session::new(Arc::new(LocalEnv::new(&root))).with_client_roots(follow);
    let config = RunnerConfig::default().with_session(Arc::new(session));
    let tools: McpTools = [McpTool::new(Asking::tool("where", &runs))]
        .into_iter()
        .collect();
    let mut pipe = RawPipe::start(tools, config);

    let declared = json!({"roots": {}});
    pipe.send(call_2026(1, "where", declared.clone(), json!({})))
        .await;
    let (requests, state) = input_required(&pipe.recv().await);
    assert_eq!(
        requests,
        json!({"roots": {"method": "roots/list"}}),
        "the server asks first"
    );
    let uri = format!("file://{}", root.display());
    let listed = json!({
        "inputResponses": {"roots": {"roots": [{"uri": uri}]}},
        "requestState": state,
    });
    pipe.send(call_2026(2, "where", declared, listed)).await;
    assert_eq!(text(&pipe.recv().await), format!("Roots: {uri}"));
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the tool ran once, asking nothing more"
    );
}

#[tokio::test]
async fn a_2026_answer_is_not_given_to_a_question_the_tool_changed_between_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tools: McpTools = [McpTool::new(Asking::tool("fickle", &runs))]
        .into_iter()
        .collect();
    let mut pipe = RawPipe::start(tools, RunnerConfig::default());

    pipe.send(call_2026(1, "fickle", asking(), json!({}))).await;
    let (requests, state) = input_required(&pipe.recv().await);
    assert_eq!(
        requests["elicitation-1"]["params"]["message"],
        "Run 1: your name?"
    );
    pipe.send(call_2026(
        2,
        "fickle",
        asking(),
        answered("elicitation-1", json!({"name": "Ada"}), &state),
    ))
    .await;
    assert_eq!(
        refusal(&pipe.recv().await),
        "The answer under `elicitation-1` was given to another question than the one the tool asks now (a tool must ask the same questions in the same order on every run), so it was not taken. Call the tool again without `requestState` and `inputResponses` to be asked anew."
    );
}

#[tokio::test]
async fn a_2026_answer_sent_without_a_state_answers_the_tools_question_of_its_key_and_no_other() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = RawPipe::start(served(&runs), RunnerConfig::default());

    // Answered before it was asked, beside a key no question has: the answer is taken and
    // the other ignored (SEP-2322), and the tool runs once.
    pipe.send(call_2026(
        1,
        "greet",
        asking(),
        json!({"inputResponses": {
            "elicitation-1": {"action": "accept", "content": {"name": "Ada"}},
            "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
        }}),
    ))
    .await;
    assert_eq!(text(&pipe.recv().await), "Hello, Ada!");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Under a key no question has: the question is asked for, not refused.
    pipe.send(call_2026(
        2,
        "greet",
        asking(),
        json!({"inputResponses": {"wrong_key": {"action": "accept", "content": {"data": "wrong"}}}}),
    ))
    .await;
    let (requests, _) = input_required(&pipe.recv().await);
    assert_eq!(
        requests["elicitation-1"]["params"]["message"],
        "What is your name?"
    );

    // An answer of the wrong shape under the question's key is refused with the shape.
    pipe.send(call_2026(
        3,
        "greet",
        asking(),
        json!({"inputResponses": {"elicitation-1": {"roots": []}}}),
    ))
    .await;
    let message = refusal(&pipe.recv().await);
    assert!(
        message.starts_with("The answer to `elicitation-1` is not a elicitation/create result ("),
        "{message}"
    );
}

#[tokio::test]
async fn a_2026_answer_sent_without_a_state_never_answers_the_policy() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut pipe = greet_the_policy_asks_about(&runs);

    // The client answers the policy's question it guesses and the tool's: the policy's
    // answer holds only under the server's signed state, so the person is asked.
    pipe.send(call_2026(1, "greet", asking(), json!({}))).await;
    let (requests, _) = input_required(&pipe.recv().await);
    let key = requests
        .as_object()
        .and_then(|r| r.keys().next())
        .expect("a question")
        .clone();
    assert!(key.starts_with("approve-"), "{requests}");
    pipe.send(call_2026(
        2,
        "greet",
        asking(),
        json!({"inputResponses": {
            key.clone(): {"action": "accept", "content": {"decision": "allow_once"}},
            "elicitation-1": {"action": "accept", "content": {"name": "Ada"}},
        }}),
    ))
    .await;
    let (requests, _) = input_required(&pipe.recv().await);
    let keys: Vec<&String> = requests.as_object().expect("requests").keys().collect();
    assert_eq!(keys.len(), 1, "{requests}");
    assert!(keys[0].starts_with("approve-"), "{requests}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "nothing ran before the person allowed it"
    );
}
