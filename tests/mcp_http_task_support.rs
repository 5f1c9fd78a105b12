//! A tool's task support over Streamable HTTP, in process, for 2026-07-28 requests:
//! `tools/list` names what a tool declared, a tool that runs only as a task is refused
//! (`-32021`) without the extension and answered with a task even when it ends at once, a
//! tool that is never a task is answered with its result however long it runs, and a
//! question asked in a task is the task's (`input_required`) until `tasks/update` answers
//! it, while the tool waits instead of running again.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pi_tools::mcp::{HttpOptions, McpTool, McpTools, TaskSupport, serve_http};
use pi_tools::{AgentTool, BoxFuture, RunnerConfig, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::mcp_tool_asks::Asking;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Sleeps `ms` milliseconds, then says so; counts its runs.
struct Sleeper {
    name: &'static str,
    runs: Arc<AtomicUsize>,
    schema: Value,
}

impl Sleeper {
    fn tool(name: &'static str, runs: &Arc<AtomicUsize>) -> Arc<dyn AgentTool> {
        Arc::new(Sleeper {
            name,
            runs: Arc::clone(runs),
            schema: json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
        })
    }
}

impl AgentTool for Sleeper {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "Sleeps, then says so."
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute(
        &self,
        args: Value,
        _ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolResult, ToolError>> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(ToolResult::text(format!("Slept {ms} ms.")))
        })
    }
}

/// The runs of each tool served.
#[derive(Default)]
struct Runs {
    greet: Arc<AtomicUsize>,
    build: Arc<AtomicUsize>,
    quick: Arc<AtomicUsize>,
}

/// A server whose calls become tasks after 100 ms: `greet` asks the person's name and is a
/// task from the start, `build` runs only as a task, `quick` never is one, `plain` declares
/// nothing. Its `/mcp` URL and the token that stops it.
async fn start(runs: &Runs) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let tools: McpTools = [
        McpTool::new(Asking::tool("greet", &runs.greet))
            .task_support(TaskSupport::Optional)
            .task_after(Duration::ZERO),
        McpTool::new(Sleeper::tool("build", &runs.build)).task_support(TaskSupport::Required),
        McpTool::new(Sleeper::tool("quick", &runs.quick)).task_support(TaskSupport::Forbidden),
        McpTool::new(Sleeper::tool("plain", &Arc::default())),
    ]
    .into_iter()
    .collect::<McpTools>()
    .with_task_after(Duration::from_millis(100));
    let stop = CancellationToken::new();
    tokio::spawn(serve_http(
        tools,
        RunnerConfig::default,
        listener,
        HttpOptions::default(),
        stop.clone(),
    ));
    (url, stop)
}

/// A 2026-07-28 client declaring `capabilities`.
struct Client {
    http: reqwest::Client,
    url: String,
    capabilities: Value,
}

impl Client {
    fn new(url: &str, capabilities: Value) -> Self {
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        Client {
            http: reqwest::Client::new(),
            url: url.to_owned(),
            capabilities,
        }
    }

    /// The JSON-RPC answer to `method` with `params`.
    async fn rpc(&self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "task-support", "version": "0"}
        });
        let name = params
            .get("name")
            .or_else(|| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", method);
        if let Some(name) = name {
            request = request.header("Mcp-Name", name);
        }
        let text = tokio::time::timeout(Duration::from_secs(10), async {
            request
                .body(body.to_string())
                .send()
                .await
                .expect("sent")
                .text()
                .await
                .expect("a body")
        })
        .await
        .expect("the server answers in time");
        text.lines()
            .map(|line| line.strip_prefix("data:").unwrap_or(line).trim())
            .filter(|line| line.starts_with('{'))
            .map(|line| serde_json::from_str::<Value>(line).expect("a JSON message"))
            .find(|message| message["id"] == 1)
            .unwrap_or_else(|| panic!("an answer to {method}: {text}"))
    }

    /// `tasks/get` of `task` until its status is `until` or it ended; that answer.
    async fn poll(&self, task: &str, until: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.rpc("tasks/get", json!({"taskId": task})).await;
            let status = got["result"]["status"].as_str().unwrap_or_default();
            if status == until || ["completed", "failed", "cancelled"].contains(&status) {
                return got;
            }
            assert!(tokio::time::Instant::now() < deadline, "{got}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

#[tokio::test]
async fn tools_list_names_the_declared_task_support() {
    let runs = Runs::default();
    let (url, stop) = start(&runs).await;
    let client = Client::new(&url, json!({}));
    let listed = client.rpc("tools/list", json!({})).await;
    let support: Vec<(String, Value)> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            (name, tool["_meta"][TASKS]["taskSupport"].clone())
        })
        .collect();
    assert_eq!(
        support,
        [
            ("greet".to_owned(), json!("optional")),
            ("build".to_owned(), json!("required")),
            ("quick".to_owned(), json!("forbidden")),
            // Declared nothing: served as optional, and not named.
            ("plain".to_owned(), Value::Null),
        ]
    );
    stop.cancel();
}

#[tokio::test]
async fn a_required_task_tool_is_refused_without_the_extension_and_a_task_with_it() {
    let runs = Runs::default();
    let (url, stop) = start(&runs).await;
    let without = Client::new(&url, json!({}));
    let refused = without
        .rpc(
            "tools/call",
            json!({"name": "build", "arguments": {"ms": 0}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("The tool `build` runs only as a task")),
        "{refused}"
    );
    assert_eq!(
        runs.build.load(Ordering::SeqCst),
        0,
        "refused before it ran"
    );
    // Nor can such a client reach a task.
    let gated = without.rpc("tasks/get", json!({"taskId": "task-1"})).await;
    assert_eq!(gated["error"]["code"], -32021, "{gated}");

    // With it: a task even for a call that ends at once, already completed.
    let client = Client::new(&url, with_tasks());
    let created = client
        .rpc(
            "tools/call",
            json!({"name": "build", "arguments": {"ms": 0}}),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(created["result"]["status"], "completed", "{created}");
    let task = created["result"]["taskId"].as_str().expect("a task id");
    let got = client.rpc("tasks/get", json!({"taskId": task})).await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert_eq!(got["result"]["result"]["content"][0]["text"], "Slept 0 ms.");
    assert_eq!(runs.build.load(Ordering::SeqCst), 1);
    stop.cancel();
}

#[tokio::test]
async fn a_forbidden_task_tool_is_answered_with_its_result_however_long_it_runs() {
    let runs = Runs::default();
    let (url, stop) = start(&runs).await;
    let client = Client::new(&url, with_tasks());
    // Six times the server's time before a call becomes a task.
    let answered = client
        .rpc(
            "tools/call",
            json!({"name": "quick", "arguments": {"ms": 600}}),
        )
        .await;
    assert_eq!(answered["result"]["resultType"], "complete", "{answered}");
    assert_eq!(answered["result"]["content"][0]["text"], "Slept 600 ms.");
    assert!(answered["result"].get("taskId").is_none(), "{answered}");
    // An undeclared tool is served as optional: as long, it is a task.
    let created = client
        .rpc(
            "tools/call",
            json!({"name": "plain", "arguments": {"ms": 600}}),
        )
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    stop.cancel();
}

#[tokio::test]
async fn tasks_update_answers_a_question_the_task_waits_on() {
    let runs = Runs::default();
    let (url, stop) = start(&runs).await;
    let client = Client::new(&url, with_tasks());
    let created = client
        .rpc("tools/call", json!({"name": "greet", "arguments": {}}))
        .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();

    let waiting = client.poll(&task, "input_required").await;
    assert_eq!(waiting["result"]["status"], "input_required", "{waiting}");
    let requests = &waiting["result"]["inputRequests"];
    assert_eq!(
        requests
            .as_object()
            .map(|r| r.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["elicitation-1".to_owned()]),
        "{waiting}"
    );
    assert_eq!(requests["elicitation-1"]["method"], "elicitation/create");
    assert_eq!(
        requests["elicitation-1"]["params"]["message"],
        "What is your name?"
    );
    assert!(waiting["result"].get("requestState").is_none(), "{waiting}");

    // An answer that is no elicitation result is refused, and the question still waits.
    let unfit = json!({"taskId": task, "inputResponses": {"elicitation-1": {"roots": []}}});
    let refused = client.rpc("tasks/update", unfit).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m
                .starts_with("The answer to `elicitation-1` is not a elicitation/create result")),
        "{refused}"
    );
    // An answer to no question it waits on is ignored.
    let stray = json!({"taskId": task, "inputResponses": {"other": {"action": "decline"}}});
    let acked = client.rpc("tasks/update", stray).await;
    assert_eq!(
        acked["result"],
        json!({"resultType": "complete"}),
        "{acked}"
    );
    let still = client.rpc("tasks/get", json!({"taskId": task})).await;
    assert_eq!(still["result"]["status"], "input_required", "{still}");

    let answer = json!({"taskId": task, "inputResponses": {
        "elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}});
    let acked = client.rpc("tasks/update", answer).await;
    assert_eq!(
        acked["result"],
        json!({"resultType": "complete"}),
        "{acked}"
    );
    let done = client.poll(&task, "completed").await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"],
        "Hello, Ada!"
    );
    assert!(done["result"].get("inputRequests").is_none(), "{done}");
    assert_eq!(
        runs.greet.load(Ordering::SeqCst),
        1,
        "the tool waited for the answer instead of running again"
    );
    // An unknown task is named.
    let unknown = json!({"taskId": "task-0", "inputResponses": {}});
    let refused = client.rpc("tasks/update", unknown).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    stop.cancel();
}
