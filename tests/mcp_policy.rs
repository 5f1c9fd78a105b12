//! `[policy]` over MCP: the toolbox's runner configuration carries the policy, so a denied
//! `tools/call` is an `isError` result naming the rule, and the tool never runs; a call the
//! policy asks about is put to the client's user through elicitation when the client
//! declared it (rmcp's client here; tests/python/policy_elicitation.py drives the Python
//! SDK's), and denied when it did not.
#![cfg(feature = "mcp")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_tools::config::Config;
use pi_tools::mcp::McpTools;
use pi_tools::toolbox::Toolbox;
use pi_tools::{ToolDefinition, ToolResult};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;
use support::FakeTool;
use support::mcp::{RawPipe, connect};

#[tokio::test]
async fn a_denied_mcp_call_is_an_error_result_and_the_tool_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = counting_toolbox(
        &runs,
        "[tools]\nactive = [\"bash\"]\n[[policy.rule]]\ntool = \"bash\"\ncommand = [\"git\", \"push\"]\ndecision = \"deny\"\nreason = \"A person pushes.\"\n",
    );
    let session = connect(McpTools::from(&toolbox), toolbox.runner_config()).await;
    let call = |command: &str| {
        let args = json!({ "command": command });
        let serde_json::Value::Object(map) = args else {
            unreachable!("an object")
        };
        CallToolRequestParams::new("bash".to_owned()).with_arguments(map)
    };
    let denied = session
        .client
        .call_tool(call("git status; git push"))
        .await
        .expect("tools/call answers");
    assert_eq!(denied.is_error, Some(true));
    let text = serde_json::to_value(&denied.content).expect("content serialises");
    assert_eq!(
        text[0]["text"],
        "The policy denies this call, so nothing ran: `git push` is covered by the policy rule \
         at pi-tools.toml:3:1 (tool = bash, command = git push). Its reason: A person pushes. Do \
         not retry it in another form: do what the policy allows instead, or ask the user to do \
         this step themselves."
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the denied call never ran");
    let allowed = session
        .client
        .call_tool(call("git status"))
        .await
        .expect("tools/call answers");
    assert_eq!(allowed.is_error, Some(false));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// A client that declares elicitation (or not) and answers each question from a script,
/// recording the questions.
#[derive(Clone)]
struct Person {
    declares: bool,
    answers: Arc<Mutex<Vec<ElicitResult>>>,
    asked: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
}

impl Person {
    fn answering(answers: Vec<ElicitResult>) -> Self {
        Person {
            declares: true,
            answers: Arc::new(Mutex::new(answers)),
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<(String, serde_json::Value)> {
        self.asked.lock().expect("lock").clone()
    }
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            panic!("the server asks with a form")
        };
        let schema = serde_json::to_value(requested_schema).expect("the schema serialises");
        self.asked.lock().expect("lock").push((message, schema));
        Ok(self.answers.lock().expect("lock").remove(0))
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.declares {
            true => ClientCapabilities::builder().enable_elicitation().build(),
            false => ClientCapabilities::default(),
        };
        ClientConfig::new(capabilities, Implementation::new("person", "1"))
    }
}

/// A toolbox whose `bash` counts its runs, with `touch` asked about.
fn asking_toolbox(runs: &Arc<AtomicUsize>) -> Toolbox {
    counting_toolbox(
        runs,
        // One call at a time, so a call still waiting for its answer holds up the next.
        "[tools]\nactive = [\"bash\"]\nmax_concurrency = 1\n[[policy.rule]]\ntool = \"bash\"\ncommand = [\"touch\"]\ndecision = \"ask\"\nreason = \"Files appear.\"\n",
    )
}

/// A toolbox of the configuration `toml` whose `bash` counts its runs in `runs`.
fn counting_toolbox(runs: &Arc<AtomicUsize>, toml: &str) -> Toolbox {
    let counter = Arc::clone(runs);
    let shell: Arc<dyn ToolDefinition> = FakeTool::new("bash")
        .parameters(json!({
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"]
        }))
        .behaviour(move |_args, _ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(ToolResult::text("ran"))
        })
        .arc();
    let registered = vec![shell];
    let config = Config::parse(toml, "pi-tools.toml", &registered).expect("valid");
    Toolbox::new(registered, &config, Default::default())
}

/// Connects `person` to a server of `toolbox`'s tools.
async fn connect_person(toolbox: &Toolbox, person: Person) -> RunningService<RoleClient, Person> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    tokio::spawn(pi_tools::mcp::serve_split(
        McpTools::from(toolbox),
        toolbox.runner_config(),
        read,
        write,
    ));
    person
        .serve(client_io)
        .await
        .expect("the server answers initialize")
}

async fn touch(client: &RunningService<RoleClient, Person>, file: &str) -> (bool, String) {
    let serde_json::Value::Object(args) = json!({ "command": format!("touch {file}") }) else {
        unreachable!("an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new("bash".to_owned()).with_arguments(args))
        .await
        .expect("tools/call answers");
    let content = serde_json::to_value(&result.content).expect("content serialises");
    (
        result.is_error == Some(true),
        content[0]["text"].as_str().unwrap_or_default().to_owned(),
    )
}

fn accept(answer: serde_json::Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(answer)
}

const ASKED: &str = "This call needs a person's approval: `touch x` is covered by the policy rule \
                     at pi-tools.toml:4:1 (tool = bash, command = touch). Its reason: Files appear.";
const INSTEAD: &str = "Do not retry it in another form: do what the policy allows instead, or \
                       ask the user to do this step themselves.";

#[tokio::test]
async fn an_mcp_client_that_declares_elicitation_is_asked_before_the_call_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = asking_toolbox(&runs);
    let person = Person::answering(vec![
        accept(json!({"answer": "allow_once"})),
        ElicitResult::new(ElicitationAction::Decline),
        ElicitResult::new(ElicitationAction::Cancel),
        accept(json!({"answer": "deny", "message": "use the staging copy"})),
    ]);
    let client = connect_person(&toolbox, person.clone()).await;

    assert_eq!(touch(&client, "x").await, (false, "ran".to_owned()));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let asked = person.asked();
    assert_eq!(
        asked[0].0,
        format!(
            "The model wants to call the tool `bash` with {{\"command\":\"touch x\"}}. {ASKED}"
        )
    );
    assert_eq!(
        asked[0].1["properties"]["answer"]["oneOf"],
        json!([
            {"const": "allow_once", "title": "Allow this call once"},
            {"const": "allow_session", "title": "Allow such calls for this session"},
            {"const": "deny", "title": "Deny it"}
        ])
    );

    let declined = format!("{ASKED} The person asked declined, so nothing ran. {INSTEAD}");
    assert_eq!(touch(&client, "x").await, (true, declined.clone()));
    assert_eq!(touch(&client, "x").await, (true, declined));
    assert_eq!(
        touch(&client, "x").await,
        (
            true,
            format!(
                "{ASKED} The person asked declined, so nothing ran. They said: use the staging \
                 copy {INSTEAD}"
            )
        )
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "no declined call ran");
    assert_eq!(person.asked().len(), 4);
}

#[tokio::test]
async fn allowed_for_the_session_holds_in_that_session_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = asking_toolbox(&runs);
    let first = Person::answering(vec![accept(json!({"answer": "allow_session"}))]);
    let one = connect_person(&toolbox, first.clone()).await;
    assert!(!touch(&one, "x").await.0);
    assert!(!touch(&one, "y").await.0);
    assert_eq!(first.asked().len(), 1, "the rule asks once in the session");
    // Another session of the same server is asked again.
    let second = Person::answering(vec![ElicitResult::new(ElicitationAction::Decline)]);
    let two = connect_person(&toolbox, second.clone()).await;
    assert!(touch(&two, "x").await.0);
    assert_eq!(second.asked().len(), 1);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_mcp_client_without_elicitation_is_not_asked_and_the_call_is_denied() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = asking_toolbox(&runs);
    let person = Person {
        declares: false,
        ..Person::answering(vec![accept(json!({"answer": "allow_once"}))])
    };
    let client = connect_person(&toolbox, person.clone()).await;
    assert_eq!(
        touch(&client, "x").await,
        (
            true,
            format!(
                "{ASKED} The MCP client cannot be asked: it did not declare the elicitation \
                 capability when it connected. So the call was denied and nothing ran. {INSTEAD}"
            )
        )
    );
    assert!(person.asked().is_empty());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_call_cancelled_while_its_question_is_open_stops_waiting_for_the_answer() {
    let runs = Arc::new(AtomicUsize::new(0));
    let toolbox = asking_toolbox(&runs);
    let mut pipe = RawPipe::start(McpTools::from(&toolbox), toolbox.runner_config());
    pipe.send(json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                   "clientInfo": {"name": "raw", "version": "0"}}
    }))
    .await;
    assert_eq!(pipe.recv().await["id"], 0);
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let call = |id: u32, command: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": command}}})
    };
    pipe.send(call(1, "touch x")).await;
    let question = pipe.recv().await;
    assert_eq!(question["method"], "elicitation/create");
    // The question is never answered: the client cancels the call instead.
    pipe.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1, "reason": "the user pressed stop"}}),
    )
    .await;
    // The next call gets the one place at once (the policy allows `echo`).
    pipe.send(call(2, "echo hi")).await;
    let answer = loop {
        let message = pipe.recv().await;
        if message.get("method").is_none() {
            break message;
        }
    };
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "ran");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the cancelled call never ran"
    );
}
