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

mod cancellation;
mod hooks;

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
async fn a_call_that_arrives_refused_ends_in_preflight_with_its_result_and_never_runs() {
    let sink = LogSink::default();
    let log = sink.log.clone();
    let conc = Concurrency::default();
    let refusal = ToolResult::text("The call was not run: its arguments are an array.")
        .with_details(json!({"provider": "openai", "path": "/choices/0"}));
    let calls = [
        call("ok", "t", json!({"i": 1})),
        ToolCall::refused("refused", "t", json!({}), refusal.clone()),
        // Refused before the lookup: a tool that does not exist is not what it is told.
        ToolCall::refused("unknown", "nope", json!({}), refusal.clone()),
    ];
    let outcome = execute_tool_calls(
        &ToolSet::new([tracked("t", &conc, &log, 5).arc()]),
        &calls,
        &RunnerConfig::default(),
        &CancellationToken::new(),
        &sink,
    )
    .await;
    assert_eq!(
        &log.lines()[..5],
        lines(&[
            "start:ok",
            "start:refused",
            "end:refused",
            "start:unknown",
            "end:unknown",
        ])
    );
    let executed: Vec<_> = log
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("exec:"))
        .collect();
    assert_eq!(
        executed.len(),
        1,
        "only the readable call runs: {executed:?}"
    );
    for message in &outcome.messages[1..] {
        assert!(message.is_error);
        assert_eq!(message.content, refusal.content);
        assert_eq!(message.details, refusal.details);
    }
    assert!(!outcome.messages[0].is_error);
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
