//! `[policy]` over MCP: the toolbox's runner configuration carries the policy, so a denied
//! `tools/call` is an `isError` result naming the rule, and the tool never runs.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_tools::config::Config;
use pi_tools::toolbox::Toolbox;
use pi_tools::{ToolDefinition, ToolResult};
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use support::FakeTool;
use support::mcp::connect;

#[tokio::test]
async fn a_denied_mcp_call_is_an_error_result_and_the_tool_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
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
    let config = Config::parse(
        "[tools]\nactive = [\"bash\"]\n[[policy.rule]]\ntool = \"bash\"\ncommand = [\"git\", \"push\"]\ndecision = \"deny\"\nreason = \"A person pushes.\"\n",
        "pi-tools.toml",
        &registered,
    )
    .expect("valid");
    let toolbox = Toolbox::new(registered, &config, Default::default());
    let session = connect(toolbox.mcp_tools(), toolbox.runner_config()).await;
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
         at pi-tools.toml:3 (tool = bash, command = git push). Its reason: A person pushes. Do \
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
