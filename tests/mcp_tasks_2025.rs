//! MCP 2025-11-25's own tasks over stdio, in process: a session of that version without
//! the tasks extension is offered `capabilities.tasks` and each tool's
//! `execution.taskSupport`; a `tools/call` with `params.task` is a task at once, followed
//! with `tasks/get`, `tasks/result` and `tasks/list` in the 2025 shapes; a tool that is never
//! a task, or only one, is refused as the specification says (`-32601`); `tasks/cancel`
//! refuses a task that ended; a task's question goes to the client by request, naming the
//! task, and the task is `input_required` until it is answered; and a session that declared
//! the extension keeps it.
#![cfg(feature = "mcp")]

use std::time::Duration;

use pi_tools::mcp::{McpTool, McpTools, TaskSupport};
use pi_tools::{AgentTool, BoxFuture, RunnerConfig, ToolContext, ToolError, ToolResult};
use serde_json::{Value, json};
use support::mcp::RawPipe;

/// Sleeps `ms` milliseconds, then says so, or fails when asked to.
struct Sleeper {
    name: &'static str,
    schema: Value,
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
            let ms = args["ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            if args["fail"] == true {
                return Err(ToolError::new(format!("Failed after {ms} ms.")));
            }
            Ok(ToolResult::text(format!("Slept {ms} ms.")))
        })
    }
}

fn sleeper(name: &'static str) -> std::sync::Arc<dyn AgentTool> {
    std::sync::Arc::new(Sleeper {
        name,
        schema: json!({"type": "object", "properties": {
            "ms": {"type": "integer"}, "fail": {"type": "boolean"}}}),
    })
}

/// `slow` and `plain` may be tasks (declared and not), `build` runs only as one, `quick`
/// never is one; `greet` asks the person's name.
fn served() -> McpTools {
    let runs = std::sync::Arc::default();
    [
        McpTool::new(super::mcp_tool_asks::Asking::tool("greet", &runs)),
        McpTool::new(sleeper("slow")).task_support(TaskSupport::Optional),
        McpTool::new(sleeper("build")).task_support(TaskSupport::Required),
        McpTool::new(sleeper("quick")).task_support(TaskSupport::Forbidden),
        McpTool::new(sleeper("plain")),
    ]
    .into_iter()
    .collect()
}

/// A session opened with `initialize` of `version` declaring `capabilities`; the
/// initialize answer.
async fn open(version: &str, capabilities: Value) -> (RawPipe, Value) {
    let mut pipe = RawPipe::start(served(), RunnerConfig::default());
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": "tasks-2025", "version": "0"}}}),
    )
    .await;
    let answer = pipe.recv().await;
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    (pipe, answer)
}

/// The answer to `method` with `params`, as request `id`.
async fn rpc(pipe: &mut RawPipe, id: u64, method: &str, params: Value) -> Value {
    pipe.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    let answer = pipe.recv().await;
    assert_eq!(answer["id"], id, "{answer}");
    answer
}

/// A task of the 2025 shape whose id, times and status are those given.
fn task(id: &Value, status: &str, created: &Value, updated: &Value) -> Value {
    json!({"taskId": id, "status": status, "createdAt": created, "lastUpdatedAt": updated,
        "ttl": 600000, "pollInterval": 500})
}

#[tokio::test]
async fn a_2025_11_25_session_is_offered_tasks_and_each_tools_support() {
    let (mut pipe, init) = open("2025-11-25", json!({})).await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    let listed = rpc(&mut pipe, 1, "tools/list", json!({})).await;
    let support: Vec<(&str, &Value)> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| (t["name"].as_str().unwrap_or_default(), &t["execution"]))
        .collect();
    assert_eq!(
        support,
        [
            ("greet", &json!({"taskSupport": "optional"})),
            ("slow", &json!({"taskSupport": "optional"})),
            ("build", &json!({"taskSupport": "required"})),
            ("quick", &json!({"taskSupport": "forbidden"})),
            ("plain", &json!({"taskSupport": "optional"})),
        ]
    );
}

#[tokio::test]
async fn a_call_with_params_task_is_a_task_polled_to_its_result_and_listed() {
    let (mut pipe, _) = open("2025-11-25", json!({})).await;
    let call = json!({"name": "slow", "arguments": {"ms": 300}, "task": {"ttl": 1000}});
    let created = rpc(&mut pipe, 1, "tools/call", call).await;
    let made = &created["result"]["task"];
    let id = &made["taskId"];
    assert!(
        id.as_str().is_some_and(|id| id.starts_with("task-")),
        "{created}"
    );
    let stamp = &made["createdAt"];
    // The server keeps its own time to live, whatever the client asks.
    assert_eq!(
        created["result"],
        json!({"task": task(id, "working", stamp, stamp)})
    );

    let got = rpc(&mut pipe, 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"], task(id, "working", stamp, stamp));

    // tasks/result waits for the end, and names the task in its `_meta`.
    let result = rpc(&mut pipe, 3, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"],
        json!({"content": [{"type": "text", "text": "Slept 300 ms."}], "isError": false,
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": id}}})
    );
    let got = rpc(&mut pipe, 4, "tasks/get", json!({"taskId": id})).await;
    let updated = &got["result"]["lastUpdatedAt"];
    assert_ne!(updated, stamp, "{got}");
    assert_eq!(got["result"], task(id, "completed", stamp, updated));

    let listed = rpc(&mut pipe, 5, "tasks/list", json!({})).await;
    assert_eq!(
        listed["result"],
        json!({"tasks": [task(id, "completed", stamp, updated)]})
    );
    let paged = rpc(&mut pipe, 6, "tasks/list", json!({"cursor": "2"})).await;
    assert_eq!(
        paged["error"],
        json!({"code": -32602, "message": "tasks/list has a single page and gives no cursor; \"2\" is not one. Ask again without a cursor."})
    );
}

#[tokio::test]
async fn a_tool_that_is_never_or_only_a_task_is_refused_with_method_not_found() {
    let (mut pipe, _) = open("2025-11-25", json!({})).await;
    let quick = json!({"name": "quick", "arguments": {}, "task": {}});
    let refused = rpc(&mut pipe, 1, "tools/call", quick).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32601, "message": "The tool `quick` does not run as a task (its `execution.taskSupport` is `forbidden`), so it did not run. Call it without `params.task`; its result comes in the answer."})
    );
    let build = json!({"name": "build", "arguments": {}});
    let refused = rpc(&mut pipe, 2, "tools/call", build).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32601, "message": "The tool `build` runs only as a task (its `execution.taskSupport` is `required`), so it did not run. Call it with `params.task` (for example {\"ttl\": 60000}), poll it with tasks/get and get its result with tasks/result."})
    );
    let not_object = json!({"name": "build", "arguments": {}, "task": 5});
    let refused = rpc(&mut pipe, 3, "tools/call", not_object).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": "`params.task` of tools/call must be an object, such as {\"ttl\": 60000} or {}. Send it so, or leave it out for the result in the answer."})
    );
    let build = json!({"name": "build", "arguments": {}, "task": {}});
    let created = rpc(&mut pipe, 4, "tools/call", build).await;
    let id = &created["result"]["task"]["taskId"];
    let result = rpc(&mut pipe, 5, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["content"][0]["text"], "Slept 0 ms.");
    let unknown = json!({"name": "nothing", "arguments": {}, "task": {}});
    let refused = rpc(&mut pipe, 6, "tools/call", unknown).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Unknown tool `nothing`.")),
        "{refused}"
    );
}

#[tokio::test]
async fn a_tools_error_fails_its_task_and_an_ended_task_is_not_cancelled() {
    let (mut pipe, _) = open("2025-11-25", json!({})).await;
    let failing = json!({"name": "slow", "arguments": {"fail": true}, "task": {}});
    let created = rpc(&mut pipe, 1, "tools/call", failing).await;
    let id = created["result"]["task"]["taskId"].clone();
    let result = rpc(&mut pipe, 2, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "Failed after 0 ms.");
    let got = rpc(&mut pipe, 3, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "failed", "{got}");
    assert_eq!(
        got["result"]["statusMessage"],
        "The tool reported an error; tasks/result gives it."
    );
    let refused = rpc(&mut pipe, 4, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": format!("The task `{}` already ended (failed), so it cannot be cancelled. Get how it ended with tasks/result.", id.as_str().unwrap_or_default())})
    );

    let slow = json!({"name": "slow", "arguments": {"ms": 30000}, "task": {}});
    let created = rpc(&mut pipe, 5, "tools/call", slow).await;
    let id = created["result"]["task"]["taskId"].clone();
    let cancelled = rpc(&mut pipe, 6, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(
        cancelled["result"]["statusMessage"],
        "The task was cancelled (tasks/cancel); its processes were ended."
    );
    let result = rpc(&mut pipe, 7, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["error"],
        json!({"code": -32602, "message": format!("The task `{}` was cancelled (tasks/cancel) before it ended, so it has no result. Call the tool again for one.", id.as_str().unwrap_or_default())})
    );
    let unknown = rpc(&mut pipe, 8, "tasks/get", json!({"taskId": "task-0"})).await;
    assert_eq!(
        unknown["error"],
        json!({"code": -32602, "message": "No task `task-0`: it never existed on this server, or it ended more than 10 minutes ago and its result was dropped. Call the tool again."})
    );
}

#[tokio::test]
async fn a_session_that_declared_the_extension_keeps_it_and_an_older_one_gets_neither() {
    let extension = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    // tasks/get as the extension answers it: a declared client is told the task is unknown,
    // the other that it did not declare the extension.
    let cases = [
        ("2025-11-25", extension, -32602),
        ("2025-06-18", json!({}), -32021),
    ];
    for (version, capabilities, get_code) in cases {
        let (mut pipe, init) = open(version, capabilities).await;
        assert!(
            init["result"]["capabilities"].get("tasks").is_none(),
            "{init}"
        );
        let listed = rpc(&mut pipe, 1, "tools/list", json!({})).await;
        let tools = listed["result"]["tools"].as_array().expect("tools");
        assert!(
            tools.iter().all(|t| t.get("execution").is_none()),
            "{listed}"
        );
        // Not offered, so ignored (as the specification asks): the call answers itself.
        let call = json!({"name": "slow", "arguments": {"ms": 0}, "task": {}});
        let answered = rpc(&mut pipe, 2, "tools/call", call).await;
        assert_eq!(
            answered["result"],
            json!({"content": [{"type": "text", "text": "Slept 0 ms."}], "isError": false}),
            "{version}"
        );
        let listed = rpc(&mut pipe, 3, "tasks/list", json!({})).await;
        assert_eq!(listed["error"]["code"], -32601, "{listed}");
        let got = rpc(&mut pipe, 4, "tasks/get", json!({"taskId": "task-0"})).await;
        assert_eq!(got["error"]["code"], get_code, "{got}");
    }
}

#[tokio::test]
async fn a_tasks_question_goes_to_the_client_naming_the_task_which_waits_for_the_answer() {
    let (mut pipe, _) = open("2025-11-25", json!({"elicitation": {}})).await;
    let call = json!({"name": "greet", "arguments": {}, "task": {}});
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
        .await;
    // The task's question may come before the answer that made the task, or after it.
    let (first, second) = (pipe.recv().await, pipe.recv().await);
    let (created, asked) = match first.get("method") {
        Some(_) => (second, first),
        None => (first, second),
    };
    assert_eq!(created["id"], 1, "{created}");
    let id = created["result"]["task"]["taskId"].clone();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": id})
    );
    let got = rpc(&mut pipe, 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    assert_eq!(
        got["result"]["statusMessage"],
        "The call waits for the client's answer to a request it sent."
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "action": "accept", "content": {"name": "Ada"}}}))
        .await;
    let result = rpc(&mut pipe, 3, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, Ada!",
        "{result}"
    );
    let got = rpc(&mut pipe, 4, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
}
