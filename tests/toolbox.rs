//! The toolbox: the configured active set, typed tool sections and mode overrides reaching
//! the runner, and tools activated by `added_tool_names`.

use std::sync::Arc;
use std::time::Duration;

use pi_tools::config::Config;
use pi_tools::dialect::{Dialect, check};
use pi_tools::toolbox::Toolbox;
use pi_tools::{
    BatchOutcome, CollectingSink, ExecutionMode, Extensions, ToolCall, ToolDefinition, ToolEvent,
    ToolResult, execute_tool_calls,
};
use serde_json::json;
use support::{FakeTool, ShellConfig, builtin_like};
use tokio_util::sync::CancellationToken;

fn toolbox(registered: Vec<Arc<dyn ToolDefinition>>, toml: &str) -> Toolbox {
    let config = Config::parse(toml, "pi-tools.toml", &registered).expect("valid config");
    Toolbox::new(registered, &config, Extensions::new())
}

async fn run(toolbox: &Toolbox, calls: &[ToolCall]) -> (BatchOutcome, Vec<ToolEvent>) {
    let sink = CollectingSink::new();
    let outcome = execute_tool_calls(
        toolbox.tool_set(),
        calls,
        &toolbox.runner_config(),
        &CancellationToken::new(),
        &sink,
    )
    .await;
    (outcome, sink.events())
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({}))
}

#[test]
fn the_active_set_follows_the_configured_order() {
    let toolbox = toolbox(
        builtin_like(),
        "[tools]\nactive = [\"write\", \"grep\", \"read\"]\n",
    );
    assert_eq!(toolbox.active_names(), ["write", "grep", "read"]);
    let names: Vec<String> = toolbox
        .agent_tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["write", "grep", "read"]);
    assert_eq!(toolbox.registered().len(), 7);
    assert_eq!(
        toolbox.prompt().available_tools,
        [
            "- write: Write files",
            "- grep: Search file contents",
            "- read: Read file contents"
        ]
    );
}

#[test]
fn unregistered_active_names_are_ignored() {
    let config = Config::parse(
        "[tools]\nactive = [\"read\", \"ls\"]\n",
        "pi-tools.toml",
        &builtin_like(),
    )
    .expect("valid against the full set");
    let only_read = vec![FakeTool::new("read").arc()];
    let toolbox = Toolbox::new(only_read, &config, Extensions::new());
    assert_eq!(toolbox.active_names(), ["read"]);
}

#[test]
fn the_runner_config_comes_from_tools_section() {
    let toolbox = toolbox(
        builtin_like(),
        "[tools]\nexecution = \"sequential\"\nmax_concurrency = 3\ntimeout_secs = 7\n",
    );
    let runner = toolbox.runner_config();
    assert_eq!(runner.execution, ExecutionMode::Sequential);
    assert_eq!(runner.max_concurrency, Some(3));
    assert_eq!(runner.timeout, Some(Duration::from_secs(7)));
    let toolbox = self::toolbox(builtin_like(), "[tools]\ntimeout_secs = 0\n");
    assert_eq!(toolbox.runner_config().timeout, None);
}

fn shell_echo() -> Vec<Arc<dyn ToolDefinition>> {
    vec![
        FakeTool::new("bash")
            .config(support::shell_config_spec())
            .behaviour(|_, ctx| {
                let config = ctx
                    .tool_config::<ShellConfig>()
                    .ok_or("no shell configuration reached the tool")?;
                Ok(ToolResult::text(format!(
                    "timeout {} shell {}",
                    config.timeout_secs,
                    config.shell.as_deref().unwrap_or("default")
                )))
            })
            .arc(),
    ]
}

#[tokio::test]
async fn a_typed_tool_section_reaches_the_tool() {
    let configured = toolbox(
        shell_echo(),
        "[tools]\nactive = [\"bash\"]\n[tool.bash]\ntimeout_secs = 60\nshell = \"zsh\"\n",
    );
    let (outcome, _) = run(&configured, &[call("1", "bash")]).await;
    assert_eq!(
        outcome.messages[0].content[0].as_text(),
        Some("timeout 60 shell zsh")
    );
    assert!(!outcome.messages[0].is_error);

    let defaulted = toolbox(shell_echo(), "[tools]\nactive = [\"bash\"]\n");
    let (outcome, _) = run(&defaulted, &[call("1", "bash")]).await;
    assert_eq!(
        outcome.messages[0].content[0].as_text(),
        Some("timeout 30 shell default")
    );
}

fn slow_and_fast() -> Vec<Arc<dyn ToolDefinition>> {
    vec![
        FakeTool::new("slow")
            .delay(Duration::from_millis(200))
            .arc(),
        FakeTool::new("fast").arc(),
    ]
}

fn end_order(events: &[ToolEvent]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e.kind() == "tool_execution_end")
        .map(ToolEvent::tool_call_id)
        .collect()
}

#[tokio::test]
async fn a_mode_override_changes_how_the_batch_runs() {
    let calls = [call("a", "slow"), call("b", "fast")];
    let parallel = toolbox(slow_and_fast(), "[tools]\nactive = [\"slow\", \"fast\"]\n");
    let (outcome, events) = run(&parallel, &calls).await;
    assert_eq!(
        end_order(&events),
        ["b", "a"],
        "parallel: the fast call ends first"
    );
    let ids: Vec<&str> = outcome
        .messages
        .iter()
        .map(|m| m.tool_call_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b"]);

    let overridden = toolbox(
        slow_and_fast(),
        "[tools]\nactive = [\"slow\", \"fast\"]\n[tool.fast]\nmode = \"sequential\"\n",
    );
    assert_eq!(
        overridden.agent_tools()[1].execution_mode(),
        ExecutionMode::Sequential
    );
    let (_, events) = run(&overridden, &calls).await;
    assert_eq!(
        end_order(&events),
        ["a", "b"],
        "sequential: calls run in order"
    );
}

#[tokio::test]
async fn added_tool_names_activate_registered_tools_for_the_next_batch_and_prompt() {
    let mut registered = builtin_like();
    registered.push(
        FakeTool::new("loader")
            .behaviour(|_, _| {
                Ok(ToolResult {
                    added_tool_names: vec!["grep".to_owned(), "teleport".to_owned()],
                    ..ToolResult::text("loaded")
                })
            })
            .arc(),
    );
    let mut toolbox = toolbox(
        registered,
        "[tools]\nactive = [\"read\", \"bash\", \"loader\"]\n",
    );
    let (before, _) = run(&toolbox, &[call("1", "grep")]).await;
    assert!(before.messages[0].is_error, "grep is not active yet");
    assert!(!toolbox.prompt().to_string().contains("- grep:"));

    let (outcome, _) = run(&toolbox, &[call("2", "loader")]).await;
    assert_eq!(toolbox.activate_added(&outcome), ["grep"]);
    assert_eq!(toolbox.active_names(), ["read", "bash", "loader", "grep"]);
    assert_eq!(toolbox.activate_added(&outcome), Vec::<String>::new());

    let (after, _) = run(&toolbox, &[call("3", "grep")]).await;
    assert!(!after.messages[0].is_error);
    assert_eq!(after.messages[0].content[0].as_text(), Some("grep ok"));
    let prompt = toolbox.prompt();
    assert!(
        prompt
            .available_tools
            .contains(&"- grep: Search file contents".to_owned())
    );
    assert!(
        prompt.guidelines.contains(
            &"Prefer the grep tool over bash for exploring files: it is faster and respects .gitignore."
                .to_owned()
        ),
        "{:?}",
        prompt.guidelines
    );
}

#[test]
fn schemas_cover_the_active_tools_in_order() {
    let toolbox = toolbox(builtin_like(), "[tools]\nactive = [\"ls\", \"read\"]\n");
    for dialect in Dialect::ALL {
        let schemas = toolbox.schemas(dialect).expect("simple schemas");
        assert_eq!(schemas.len(), 2);
        for wire in &schemas {
            assert_eq!(check(dialect, wire), Ok(()));
        }
    }
    let mcp = toolbox.schemas(Dialect::Mcp).expect("mcp");
    assert_eq!(mcp[0]["name"], "ls");
    assert_eq!(mcp[1]["name"], "read");
}

#[test]
fn the_catalog_documents_active_or_all_tools() {
    let toolbox = toolbox(
        builtin_like(),
        "[tools]\nactive = [\"bash\", \"read\"]\n[tool.bash]\nmode = \"sequential\"\n",
    );
    let active = toolbox.catalog(false);
    let names: Vec<&str> = active.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["bash", "read"]);
    assert_eq!(active.tools[0].mode, ExecutionMode::Sequential);
    let all = toolbox.catalog(true);
    assert_eq!(all.tools.len(), 7);
    assert_eq!(all.tools.iter().filter(|t| t.active).count(), 2);
}

/// A tool `srv__<name>` as a mounted server's, answering its own name.
fn mounted(name: &str) -> Arc<dyn ToolDefinition> {
    let spec = pi_tools::ToolSpec {
        origin: pi_tools::ToolOrigin::Mounted {
            server: "srv".to_owned(),
        },
        ..pi_tools::ToolSpec::new(
            format!("srv__{name}"),
            format!("The {name} tool."),
            json!({"type": "object", "properties": {}}),
        )
    };
    let answer = name.to_owned();
    pi_tools::tool::from_fn(spec, move |_, _| {
        let answer = answer.clone();
        async move { Ok(ToolResult::text(answer)) }
    })
}

#[tokio::test]
async fn replacing_the_mounted_tools_remakes_the_active_set_and_keeps_the_rest() {
    let mut registered = builtin_like();
    registered.extend([mounted("grow"), mounted("old")]);
    let mut toolbox = toolbox(
        registered,
        "[tools]\nactive = [\"read\", \"srv__*\"]\n\n[mcp.servers.srv]\ncommand = [\"true\"]\n",
    );
    assert_eq!(toolbox.active_names(), ["read", "srv__grow", "srv__old"]);
    toolbox.replace_mounted(vec![mounted("grow"), mounted("fresh")]);
    // The glob takes in the new tool in the server's order; the removed one leaves.
    assert_eq!(toolbox.active_names(), ["read", "srv__grow", "srv__fresh"]);
    assert_eq!(toolbox.registered().len(), 9);
    assert!(toolbox.tool_set().get("srv__old").is_none());
    let (outcome, _) = run(&toolbox, &[call("1", "srv__fresh")]).await;
    assert!(!outcome.messages[0].is_error);
    assert_eq!(outcome.messages[0].content[0].as_text(), Some("fresh"));
}
