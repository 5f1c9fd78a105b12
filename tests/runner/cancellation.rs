//! Cancellation and timeouts: in preflight, while running, from a tool's own token, in a
//! sequential batch, and a timeout beside siblings that finish.

use super::*;

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

/// A before-hook that waits (for a person's answer, say) sees the batch's token in its
/// context and stops waiting when the caller cancels: the runner does not cancel a hook.
#[tokio::test(start_paused = true)]
async fn a_waiting_before_hook_stops_on_the_token_in_its_context() {
    let cancel = CancellationToken::new();
    let config = RunnerConfig {
        before_tool_call: Some(Arc::new(|ctx: BeforeToolCallContext| async move {
            tokio::select! {
                () = ctx.cancel.cancelled() => Ok(BeforeToolCallOutcome::Block {
                    reason: Some("the caller gave up while the hook waited".into()),
                }),
                () = tokio::time::sleep(std::time::Duration::from_secs(3600)) => {
                    Ok(BeforeToolCallOutcome::Continue)
                }
            }
        })),
        ..RunnerConfig::default()
    };
    let conc = Concurrency::default();
    let sink = LogSink::default();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        canceller.cancel();
    });
    let started = tokio::time::Instant::now();
    let outcome = execute_tool_calls(
        &ToolSet::new([tracked("t", &conc, &sink.log, 5).arc()]),
        &[call("1", "t", json!({"i": 1}))],
        &config,
        &cancel,
        &sink,
    )
    .await;
    assert_eq!(started.elapsed(), std::time::Duration::from_secs(5));
    assert_eq!(conc.peak(), 0, "nothing executes");
    assert!(outcome.messages[0].is_error);
    assert_eq!(text_of(&outcome.messages[0]), "Operation aborted");
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
        "Tool slow timed out after 0.1 seconds, the time every call is given (`[tools] \
         timeout_secs` in the configuration), and was cancelled. Split the work into smaller \
         steps, or raise `[tools] timeout_secs` (0 means no limit).\npartial output: 3 lines"
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
