//! Hooks and argument preparation: what the before and after hooks and `prepare_arguments`
//! may change, and their failures and panics as error results.

use super::*;

fn echo_args(name: &str) -> Arc<dyn pi_tools::AgentTool> {
    Scripted::new(name, |args, _ctx| async move {
        Ok(ToolResult::text(args.to_string()))
    })
    .arc()
}

#[tokio::test(start_paused = true)]
async fn a_before_hook_rewrite_reaches_the_tool_without_revalidation() {
    let config = RunnerConfig {
        before_tool_call: Some(Arc::new(|ctx: BeforeToolCallContext| async move {
            assert_eq!(ctx.args, json!({"i": 7}), "the hook sees the coerced copy");
            assert_eq!(ctx.batch.len(), 1);
            Ok(BeforeToolCallOutcome::Rewrite(json!({"i": "not a number"})))
        })),
        ..RunnerConfig::default()
    };
    let (outcome, sink) = run(
        vec![echo_args("t")],
        &[call("a", "t", json!({"i": "7"}))],
        &config,
    )
    .await;
    assert_eq!(text_of(&outcome.messages[0]), r#"{"i":"not a number"}"#);
    assert!(!outcome.messages[0].is_error);
    // Events keep the original call's arguments.
    match &sink.events()[0] {
        ToolEvent::ToolExecutionStart { args, .. } => assert_eq!(args, &json!({"i": "7"})),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn prepare_arguments_output_is_what_gets_validated() {
    let tool = Scripted::new("t", |args, _ctx| async move {
        Ok(ToolResult::text(args.to_string()))
    })
    .with_prepare(|mut args| {
        if let Some(old) = args.as_object_mut().and_then(|o| o.remove("old")) {
            args["i"] = old;
        }
        Ok(args)
    })
    .arc();
    let calls = [
        call("a", "t", json!({"old": "5"})),
        call("b", "t", json!({"old": "five"})),
    ];
    let (outcome, _) = run(vec![tool], &calls, &RunnerConfig::default()).await;
    assert_eq!(text_of(&outcome.messages[0]), r#"{"i":5}"#);
    assert!(outcome.messages[1].is_error);
    assert!(
        text_of(&outcome.messages[1]).starts_with(
            "Validation failed for tool \"t\":\n  - i: \"five\" is not of type \"number\"\n"
        ),
        "{}",
        text_of(&outcome.messages[1])
    );
    // The received arguments echoed are the prepared ones that failed.
    assert!(text_of(&outcome.messages[1]).ends_with("{\n  \"i\": \"five\"\n}"));
}

#[tokio::test(start_paused = true)]
async fn a_failing_prepare_arguments_is_an_error_result() {
    let tool = Scripted::new("t", |_a, _c| async move { Ok(ToolResult::text("ran")) })
        .with_prepare(|_| {
            Err(ToolError::new(
                "The old argument layout is no longer accepted.",
            ))
        })
        .arc();
    let (outcome, _) = run(
        vec![tool],
        &[call("a", "t", json!({"i": 1}))],
        &RunnerConfig::default(),
    )
    .await;
    assert!(outcome.messages[0].is_error);
    assert_eq!(
        text_of(&outcome.messages[0]),
        "The old argument layout is no longer accepted."
    );
}

fn rich(name: &str) -> Arc<dyn pi_tools::AgentTool> {
    Scripted::new(name, |_a, _c| async move {
        Ok(ToolResult {
            content: vec![ContentBlock::text("original")],
            details: json!({"a": 1}),
            structured_content: None,
            links: Vec::new(),
            usage: None,
            added_tool_names: vec!["grep".into()],
            terminate: false,
        })
    })
    .arc()
}

#[tokio::test(start_paused = true)]
async fn an_after_hook_overrides_field_by_field() {
    let config = RunnerConfig {
        after_tool_call: Some(Arc::new(|ctx: AfterToolCallContext| async move {
            assert_eq!(ctx.args, json!({"i": 1}));
            assert!(!ctx.is_error);
            Ok(Some(AfterToolCallOverride {
                details: Some(json!({"audited": true})),
                terminate: Some(true),
                is_error: Some(true),
                ..AfterToolCallOverride::default()
            }))
        })),
        ..RunnerConfig::default()
    };
    let (outcome, _) = run(vec![rich("t")], &[call("a", "t", json!({"i": 1}))], &config).await;
    let m = &outcome.messages[0];
    assert_eq!(text_of(m), "original");
    assert_eq!(m.details, json!({"audited": true}));
    assert_eq!(m.added_tool_names, ["grep"]);
    assert!(m.is_error);
    assert!(outcome.terminate, "the hook's terminate counts");
}

#[tokio::test(start_paused = true)]
async fn an_after_hook_returning_none_keeps_the_result() {
    let config = RunnerConfig {
        after_tool_call: Some(Arc::new(
            |_ctx: AfterToolCallContext| async move { Ok(None) },
        )),
        ..RunnerConfig::default()
    };
    let (outcome, _) = run(vec![rich("t")], &[call("a", "t", json!({"i": 1}))], &config).await;
    assert_eq!(text_of(&outcome.messages[0]), "original");
    assert_eq!(outcome.messages[0].details, json!({"a": 1}));
    assert!(!outcome.messages[0].is_error);
}

#[tokio::test(start_paused = true)]
async fn a_failing_after_hook_turns_the_call_into_an_error() {
    let config = RunnerConfig {
        after_tool_call: Some(Arc::new(|_ctx: AfterToolCallContext| async move {
            Err(ToolError::new("The audit log is unavailable."))
        })),
        ..RunnerConfig::default()
    };
    let (outcome, _) = run(vec![rich("t")], &[call("a", "t", json!({"i": 1}))], &config).await;
    assert!(outcome.messages[0].is_error);
    assert_eq!(
        text_of(&outcome.messages[0]),
        "The audit log is unavailable."
    );
    assert_eq!(outcome.messages[0].details, Value::Null);
}

#[tokio::test(start_paused = true)]
async fn hook_panics_become_error_results() {
    let config = RunnerConfig {
        before_tool_call: Some(Arc::new(|ctx: BeforeToolCallContext| async move {
            if ctx.call.id == "1" {
                panic!("before boom");
            }
            Ok(BeforeToolCallOutcome::Continue)
        })),
        after_tool_call: Some(Arc::new(|ctx: AfterToolCallContext| async move {
            if ctx.call.id == "2" {
                panic!("after boom");
            }
            Ok(None)
        })),
        ..RunnerConfig::default()
    };
    let calls = [
        call("1", "t", json!({"i": 1})),
        call("2", "t", json!({"i": 2})),
        call("3", "t", json!({"i": 3})),
    ];
    let (outcome, _) = run(vec![echo("t")], &calls, &config).await;
    let texts: Vec<_> = outcome.messages.iter().map(text_of).collect();
    assert_eq!(texts[0], "The before_tool_call hook panicked: before boom");
    assert_eq!(texts[1], "The after_tool_call hook panicked: after boom");
    assert_eq!(texts[2], "ok 3");
    let errors: Vec<_> = outcome.messages.iter().map(|m| m.is_error).collect();
    assert_eq!(errors, [true, true, false]);
}
