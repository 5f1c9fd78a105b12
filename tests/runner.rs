//! The runner's semantics: event order, modes, preflight outcomes, hooks, failures as data,
//! progress updates, termination, cancellation and timeouts.
//!
//! Every test runs on tokio's paused clock: sleeps, timeouts and the cancel grace pass in
//! virtual time, at once and exactly.

use std::sync::Arc;
use std::time::Duration;

use pi_tools::{
    AfterToolCallContext, AfterToolCallOverride, BeforeToolCallContext, BeforeToolCallOutcome,
    ContentBlock, ExecutionMode, RunnerConfig, ToolCall, ToolError, ToolEvent, ToolResult, ToolSet,
    execute_tool_calls,
};
use serde_json::{Value, json};
use support::{Concurrency, Log, LogSink, Scripted, echo, text_of};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

async fn run(
    tools: Vec<Arc<dyn pi_tools::AgentTool>>,
    calls: &[ToolCall],
    config: &RunnerConfig,
) -> (pi_tools::BatchOutcome, LogSink) {
    let sink = LogSink::default();
    let outcome = execute_tool_calls(
        &ToolSet::new(tools),
        calls,
        config,
        &CancellationToken::new(),
        &sink,
    )
    .await;
    (outcome, sink)
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(start_paused = true)]
async fn results_in_source_order_while_end_events_follow_completion() {
    let fast_done = Arc::new(Notify::new());
    let wait = fast_done.clone();
    let slow = Scripted::new("slow", move |_args, _ctx| {
        let wait = wait.clone();
        async move {
            wait.notified().await;
            Ok(ToolResult::text("slow done"))
        }
    })
    .arc();
    let signal = fast_done.clone();
    let fast = Scripted::new("fast", move |_args, _ctx| {
        let signal = signal.clone();
        async move {
            signal.notify_one();
            Ok(ToolResult::text("fast done"))
        }
    })
    .arc();
    let calls = [
        call("a", "slow", json!({"i": 1})),
        call("b", "fast", json!({"i": 2})),
    ];
    let (outcome, sink) = run(vec![slow, fast], &calls, &RunnerConfig::default()).await;
    assert_eq!(
        sink.log.lines(),
        lines(&["start:a", "start:b", "end:b", "end:a", "msg:a", "msg:b"])
    );
    let ids: Vec<_> = outcome
        .messages
        .iter()
        .map(|m| m.tool_call_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(text_of(&outcome.messages[0]), "slow done");
    assert_eq!(text_of(&outcome.messages[1]), "fast done");
    assert!(!outcome.terminate);
}

fn tracked(name: &str, conc: &Concurrency, log: &Log, sleep_ms: u64) -> Scripted {
    let conc = conc.clone();
    let log = log.clone();
    Scripted::new(name, move |_args, ctx| {
        let conc = conc.clone();
        let log = log.clone();
        async move {
            let _guard = conc.enter();
            log.push(format!("exec:{}", ctx.call_id()));
            tokio::time::sleep(Duration::from_millis(sleep_ms)).await;
            log.push(format!("done:{}", ctx.call_id()));
            Ok(ToolResult::text("ok"))
        }
    })
}

#[tokio::test(start_paused = true)]
async fn one_sequential_tool_makes_the_whole_batch_sequential() {
    let conc = Concurrency::default();
    let sink = LogSink::default();
    let log = sink.log.clone();
    let tools = ToolSet::new([
        tracked("par", &conc, &log, 20).arc(),
        tracked("seq", &conc, &log, 20).sequential().arc(),
    ]);
    let calls = [
        call("1", "par", json!({"i": 1})),
        call("2", "seq", json!({"i": 2})),
        call("3", "par", json!({"i": 3})),
    ];
    execute_tool_calls(
        &tools,
        &calls,
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &sink,
    )
    .await;
    assert_eq!(conc.peak(), 1);
    let mut expected = Vec::new();
    for id in ["1", "2", "3"] {
        expected.extend(lines(&[
            &format!("start:{id}"),
            &format!("exec:{id}"),
            &format!("done:{id}"),
            &format!("end:{id}"),
            &format!("msg:{id}"),
        ]));
    }
    assert_eq!(log.lines(), expected);
}

#[tokio::test(start_paused = true)]
async fn sequential_configuration_runs_one_call_at_a_time() {
    let conc = Concurrency::default();
    let log = Log::default();
    let calls: Vec<_> = (0..4)
        .map(|i| call(&i.to_string(), "t", json!({"i": i})))
        .collect();
    let config = RunnerConfig {
        execution: ExecutionMode::Sequential,
        ..RunnerConfig::default()
    };
    run(vec![tracked("t", &conc, &log, 10).arc()], &calls, &config).await;
    assert_eq!(conc.peak(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_parallel_batch_overlaps() {
    let conc = Concurrency::default();
    let log = Log::default();
    let calls: Vec<_> = (0..4)
        .map(|i| call(&i.to_string(), "t", json!({"i": i})))
        .collect();
    let (outcome, _) = run(
        vec![tracked("t", &conc, &log, 30).arc()],
        &calls,
        &RunnerConfig::default(),
    )
    .await;
    assert_eq!(conc.peak(), 4);
    assert!(outcome.messages.iter().all(|m| !m.is_error));
}

#[tokio::test(start_paused = true)]
async fn max_concurrency_bounds_the_parallel_phase() {
    let conc = Concurrency::default();
    let log = Log::default();
    let calls: Vec<_> = (0..10)
        .map(|i| call(&i.to_string(), "t", json!({"i": i})))
        .collect();
    let config = RunnerConfig {
        max_concurrency: Some(3),
        ..RunnerConfig::default()
    };
    let (outcome, _) = run(vec![tracked("t", &conc, &log, 15).arc()], &calls, &config).await;
    assert_eq!(conc.peak(), 3);
    assert_eq!(outcome.messages.len(), 10);
}

#[tokio::test(start_paused = true)]
async fn immediate_outcomes_end_during_preflight_before_anything_executes() {
    let sink = LogSink::default();
    let log = sink.log.clone();
    let conc = Concurrency::default();
    let config = RunnerConfig {
        before_tool_call: Some(Arc::new(|ctx: BeforeToolCallContext| async move {
            Ok(match ctx.call.id.as_str() {
                "blocked-reason" => BeforeToolCallOutcome::Block {
                    reason: Some("Writes to /etc are not allowed.".into()),
                },
                "blocked-plain" => BeforeToolCallOutcome::Block { reason: None },
                _ => BeforeToolCallOutcome::Continue,
            })
        })),
        ..RunnerConfig::default()
    };
    let calls = [
        call("ok1", "t", json!({"i": 1})),
        call("missing", "nope", json!({})),
        call("invalid", "t", json!({"i": "many", "note": ["x"]})),
        call("blocked-reason", "t", json!({"i": 2})),
        call("blocked-plain", "t", json!({"i": 3})),
        call("ok2", "t", json!({"i": 4})),
    ];
    let outcome = execute_tool_calls(
        &ToolSet::new([tracked("t", &conc, &log, 5).arc()]),
        &calls,
        &config,
        &CancellationToken::new(),
        &sink,
    )
    .await;
    let first_exec = log
        .lines()
        .iter()
        .position(|l| l.starts_with("exec:"))
        .expect("something executed");
    for id in ["missing", "invalid", "blocked-reason", "blocked-plain"] {
        assert!(
            log.pos(&format!("end:{id}")) < first_exec,
            "{:?}",
            log.lines()
        );
    }
    assert_eq!(
        &log.lines()[..10],
        lines(&[
            "start:ok1",
            "start:missing",
            "end:missing",
            "start:invalid",
            "end:invalid",
            "start:blocked-reason",
            "end:blocked-reason",
            "start:blocked-plain",
            "end:blocked-plain",
            "start:ok2",
        ])
    );
    let texts: Vec<_> = outcome.messages.iter().map(text_of).collect();
    assert_eq!(texts[1], "Tool nope not found");
    assert_eq!(
        texts[2],
        "Validation failed for tool \"t\":\n  - i: \"many\" is not of type \"number\"\n  - note: [\"x\"] is not of type \"string\"\n\nReceived arguments:\n{\n  \"i\": \"many\",\n  \"note\": [\n    \"x\"\n  ]\n}"
    );
    assert_eq!(texts[3], "Writes to /etc are not allowed.");
    assert_eq!(texts[4], "Tool execution was blocked");
    let errors: Vec<_> = outcome.messages.iter().map(|m| m.is_error).collect();
    assert_eq!(errors, [false, true, true, true, true, false]);
}

#[tokio::test(start_paused = true)]
async fn a_missing_required_property_is_named_in_the_path() {
    let calls = [call("x", "t", json!({"note": 5}))];
    let (outcome, _) = run(vec![echo("t")], &calls, &RunnerConfig::default()).await;
    // `5` for a string is coerced to "5"; only the missing `i` remains.
    assert_eq!(
        text_of(&outcome.messages[0]),
        "Validation failed for tool \"t\":\n  - i: \"i\" is a required property\n\nReceived arguments:\n{\n  \"note\": 5\n}"
    );
}

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
async fn errors_and_panics_become_error_results_and_the_batch_goes_on() {
    let failing = Scripted::new("fails", |_a, _c| async move {
        Err(ToolError::new("The file is locked; retry later.").with_details(json!({"code": 7})))
    })
    .arc();
    let panicking = Scripted::new("panics", |_a, _c| async move {
        panic!("index out of bounds");
    })
    .arc();
    let calls = [
        call("1", "fails", json!({"i": 1})),
        call("2", "panics", json!({"i": 2})),
        call("3", "ok", json!({"i": 3})),
    ];
    let (outcome, sink) = run(
        vec![failing, panicking, echo("ok")],
        &calls,
        &RunnerConfig::default(),
    )
    .await;
    let m = &outcome.messages;
    assert_eq!(text_of(&m[0]), "The file is locked; retry later.");
    assert_eq!(m[0].details, json!({"code": 7}));
    assert!(m[0].is_error);
    assert_eq!(text_of(&m[1]), "Tool panics panicked: index out of bounds");
    assert!(m[1].is_error);
    assert_eq!(text_of(&m[2]), "ok 3");
    assert!(!m[2].is_error);
    assert_eq!(sink.events().len(), 3 * 4);
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

#[tokio::test(start_paused = true)]
async fn updates_become_events_and_late_updates_are_dropped() {
    let late = Arc::new(Notify::new());
    let late_tx = late.clone();
    let leaky = Scripted::new("leaky", move |_a, ctx| {
        let late = late_tx.clone();
        async move {
            ctx.update(ToolResult::text("25%"));
            ctx.update(ToolResult::text("50%"));
            let leaked = ctx.clone();
            tokio::spawn(async move {
                late.notified().await;
                leaked.update(ToolResult::text("too late"));
            });
            Ok(ToolResult::text("done"))
        }
    })
    .arc();
    let trigger = late.clone();
    let slow = Scripted::new("slow", move |_a, _ctx| {
        let trigger = trigger.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            // The leaked update fires while the batch is still running.
            trigger.notify_one();
            tokio::time::sleep(Duration::from_millis(30)).await;
            Ok(ToolResult::text("slow"))
        }
    })
    .arc();
    let calls = [
        call("a", "leaky", json!({"i": 1})),
        call("b", "slow", json!({"i": 2})),
    ];
    let (_, sink) = run(vec![leaky, slow], &calls, &RunnerConfig::default()).await;
    assert_eq!(
        sink.log.lines(),
        lines(&[
            "start:a", "start:b", "update:a", "update:a", "end:a", "end:b", "msg:a", "msg:b"
        ])
    );
    let partials: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e {
            ToolEvent::ToolExecutionUpdate { partial_result, .. } => {
                Some(partial_result.text_content())
            }
            _ => None,
        })
        .collect();
    assert_eq!(partials, ["25%", "50%"]);
}

#[tokio::test(start_paused = true)]
async fn updates_in_a_sequential_batch_come_between_start_and_end() {
    let tool = Scripted::new("t", |_a, ctx| async move {
        ctx.update(ToolResult::text("half"));
        tokio::time::sleep(Duration::from_millis(5)).await;
        Ok(ToolResult::text("whole"))
    })
    .sequential()
    .arc();
    let calls = [
        call("a", "t", json!({"i": 1})),
        call("b", "t", json!({"i": 2})),
    ];
    let (_, sink) = run(vec![tool], &calls, &RunnerConfig::default()).await;
    assert_eq!(
        sink.log.lines(),
        lines(&[
            "start:a", "update:a", "end:a", "msg:a", "start:b", "update:b", "end:b", "msg:b"
        ])
    );
}

fn terminating(name: &str, terminate: bool) -> Arc<dyn pi_tools::AgentTool> {
    Scripted::new(name, move |_a, _c| async move {
        Ok(ToolResult {
            terminate,
            ..ToolResult::text("x")
        })
    })
    .arc()
}

#[tokio::test(start_paused = true)]
async fn the_batch_terminates_only_when_every_result_says_so() {
    let tools = || vec![terminating("stop", true), terminating("go", false)];
    let all = [
        call("1", "stop", json!({"i": 1})),
        call("2", "stop", json!({"i": 2})),
    ];
    assert!(
        run(tools(), &all, &RunnerConfig::default())
            .await
            .0
            .terminate
    );
    let mixed = [
        call("1", "stop", json!({"i": 1})),
        call("2", "go", json!({"i": 2})),
    ];
    assert!(
        !run(tools(), &mixed, &RunnerConfig::default())
            .await
            .0
            .terminate
    );
    let with_error = [
        call("1", "stop", json!({"i": 1})),
        call("2", "missing", json!({})),
    ];
    assert!(
        !run(tools(), &with_error, &RunnerConfig::default())
            .await
            .0
            .terminate
    );
    assert!(
        !run(tools(), &[], &RunnerConfig::default())
            .await
            .0
            .terminate
    );
    let hook = RunnerConfig {
        after_tool_call: Some(Arc::new(|_ctx: AfterToolCallContext| async move {
            Ok(Some(AfterToolCallOverride {
                terminate: Some(true),
                ..AfterToolCallOverride::default()
            }))
        })),
        ..RunnerConfig::default()
    };
    let go = [
        call("1", "go", json!({"i": 1})),
        call("2", "go", json!({"i": 2})),
    ];
    assert!(run(tools(), &go, &hook).await.0.terminate);
}

#[tokio::test(start_paused = true)]
async fn cancellation_during_preflight_stops_preflight() {
    let cancel = CancellationToken::new();
    let hook_cancel = cancel.clone();
    let hook_log = Log::default();
    let seen = hook_log.clone();
    let config = RunnerConfig {
        before_tool_call: Some(Arc::new(move |ctx: BeforeToolCallContext| {
            let cancel = hook_cancel.clone();
            let seen = seen.clone();
            async move {
                seen.push(ctx.call.id.clone());
                if ctx.call.id == "2" {
                    cancel.cancel();
                }
                Ok(BeforeToolCallOutcome::Continue)
            }
        })),
        ..RunnerConfig::default()
    };
    let conc = Concurrency::default();
    let sink = LogSink::default();
    let calls = [
        call("1", "t", json!({"i": 1})),
        call("2", "t", json!({"i": 2})),
        call("3", "t", json!({"i": 3})),
    ];
    let outcome = execute_tool_calls(
        &ToolSet::new([tracked("t", &conc, &sink.log, 5).arc()]),
        &calls,
        &config,
        &cancel,
        &sink,
    )
    .await;
    assert_eq!(hook_log.lines(), ["1", "2"], "call 3 is never prepared");
    assert_eq!(conc.peak(), 0, "nothing executes");
    for m in &outcome.messages {
        assert!(m.is_error);
        assert_eq!(text_of(m), "Operation aborted");
    }
    assert_eq!(
        sink.log.lines(),
        lines(&[
            "start:1", "start:2", "end:2", "start:3", "end:3", "end:1", "msg:1", "msg:2", "msg:3"
        ])
    );
}

#[tokio::test(start_paused = true)]
async fn a_prepared_call_that_finds_the_batch_cancelled_does_not_execute() {
    let cancel = CancellationToken::new();
    let tool_cancel = cancel.clone();
    let log = Log::default();
    let exec_log = log.clone();
    let tool = Scripted::new("t", move |_a, ctx| {
        let cancel = tool_cancel.clone();
        let log = exec_log.clone();
        async move {
            log.push(format!("exec:{}", ctx.call_id()));
            cancel.cancel();
            Ok(ToolResult::text("first finished"))
        }
    })
    .arc();
    let config = RunnerConfig {
        max_concurrency: Some(1),
        ..RunnerConfig::default()
    };
    let calls = [
        call("1", "t", json!({"i": 1})),
        call("2", "t", json!({"i": 2})),
    ];
    let outcome = execute_tool_calls(
        &ToolSet::new([tool]),
        &calls,
        &config,
        &cancel,
        &support::LogSink::default(),
    )
    .await;
    assert_eq!(log.lines(), ["exec:1"]);
    assert_eq!(text_of(&outcome.messages[0]), "first finished");
    assert!(!outcome.messages[0].is_error);
    assert_eq!(text_of(&outcome.messages[1]), "Operation aborted");
    assert!(outcome.messages[1].is_error);
}

#[tokio::test(start_paused = true)]
async fn cancellation_while_running_reaches_every_call() {
    let cancel = CancellationToken::new();
    let cooperative = Scripted::new("coop", |_a, ctx| async move {
        ctx.cancellation().cancelled().await;
        Err(ToolError::new("Stopped: the user cancelled the command."))
    })
    .arc();
    let stubborn = Scripted::new("stubborn", |_a, _ctx| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(ToolResult::text("never"))
    })
    .arc();
    let config = RunnerConfig {
        cancel_grace: Duration::from_millis(50),
        ..RunnerConfig::default()
    };
    let calls = [
        call("1", "coop", json!({"i": 1})),
        call("2", "stubborn", json!({"i": 2})),
    ];
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        canceller.cancel();
    });
    let started = tokio::time::Instant::now();
    let outcome = execute_tool_calls(
        &ToolSet::new([cooperative, stubborn]),
        &calls,
        &config,
        &cancel,
        &support::LogSink::default(),
    )
    .await;
    // Cancelled at 30 ms; the stubborn call is given up on when its 50 ms of grace end.
    assert_eq!(started.elapsed(), Duration::from_millis(80));
    assert_eq!(
        text_of(&outcome.messages[0]),
        "Stopped: the user cancelled the command."
    );
    assert_eq!(text_of(&outcome.messages[1]), "Operation aborted");
    assert!(outcome.messages.iter().all(|m| m.is_error));
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_cancels_its_own_token_stops_only_itself() {
    for timeout in [None, Some(Duration::from_secs(30))] {
        let quitter = Scripted::new("quit", |_a, ctx| async move {
            ctx.cancellation().cancel();
            assert!(ctx.is_cancelled());
            Ok(ToolResult::text("quit"))
        })
        .arc();
        let sibling = Scripted::new("wait", |_a, ctx| async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!ctx.is_cancelled());
            assert!(!ctx.cancellation().is_cancelled());
            Ok(ToolResult::text("done"))
        })
        .arc();
        let config = RunnerConfig {
            timeout,
            ..RunnerConfig::default()
        };
        let cancel = CancellationToken::new();
        let outcome = execute_tool_calls(
            &ToolSet::new([quitter, sibling]),
            &[
                call("1", "quit", json!({"i": 1})),
                call("2", "wait", json!({"i": 2})),
            ],
            &config,
            &cancel,
            &support::LogSink::default(),
        )
        .await;
        assert_eq!(text_of(&outcome.messages[0]), "quit", "{timeout:?}");
        assert_eq!(text_of(&outcome.messages[1]), "done", "{timeout:?}");
        assert!(!cancel.is_cancelled());
    }
}

#[tokio::test(start_paused = true)]
async fn cancellation_in_a_sequential_batch_skips_the_rest() {
    let cancel = CancellationToken::new();
    let tool_cancel = cancel.clone();
    let conc = Concurrency::default();
    let c2 = conc.clone();
    let tool = Scripted::new("t", move |_a, _ctx| {
        let cancel = tool_cancel.clone();
        let conc = c2.clone();
        async move {
            let _g = conc.enter();
            cancel.cancel();
            Ok(ToolResult::text("ran"))
        }
    })
    .sequential()
    .arc();
    let sink = LogSink::default();
    let calls = [
        call("1", "t", json!({"i": 1})),
        call("2", "t", json!({"i": 2})),
    ];
    let outcome = execute_tool_calls(
        &ToolSet::new([tool]),
        &calls,
        &RunnerConfig::default(),
        &cancel,
        &sink,
    )
    .await;
    assert_eq!(text_of(&outcome.messages[0]), "ran");
    assert_eq!(text_of(&outcome.messages[1]), "Operation aborted");
    assert_eq!(
        sink.log.lines(),
        lines(&["start:1", "end:1", "msg:1", "start:2", "end:2", "msg:2"])
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_ends_the_call_while_siblings_finish() {
    let slow = Scripted::new("slow", |_a, ctx| async move {
        ctx.update(ToolResult::text("working"));
        tokio::select! {
            _ = ctx.cancellation().cancelled() => Err(ToolError::new("partial output: 3 lines")),
            _ = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolResult::text("never")),
        }
    })
    .arc();
    let quick = Scripted::new("quick", |_a, _c| async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok(ToolResult::text("quick done"))
    })
    .arc();
    let config = RunnerConfig {
        timeout: Some(Duration::from_millis(100)),
        ..RunnerConfig::default()
    };
    let calls = [
        call("1", "slow", json!({"i": 1})),
        call("2", "quick", json!({"i": 2})),
    ];
    let (outcome, sink) = run(vec![slow, quick], &calls, &config).await;
    assert!(outcome.messages[0].is_error);
    assert_eq!(
        text_of(&outcome.messages[0]),
        "Tool slow timed out after 0.1 seconds and was cancelled. Retry with a longer timeout if \
         the tool accepts one, or split the work into smaller steps.\npartial output: 3 lines"
    );
    assert_eq!(text_of(&outcome.messages[1]), "quick done");
    assert!(!outcome.messages[1].is_error);
    assert_eq!(
        sink.log.lines(),
        lines(&[
            "start:1", "start:2", "update:1", "end:2", "end:1", "msg:1", "msg:2"
        ])
    );
}
