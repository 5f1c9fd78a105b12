//! Calls side by side: cancellation, concurrent edits of one file, sequential and parallel
//! bash calls.

use super::*;

#[tokio::test]
async fn a_cancelled_bash_call_ends_and_its_processes_are_gone() {
    // bash runs alone in this configuration, so the next bash call can only start once the
    // cancelled one has really ended.
    let session = Session::start(Some(SEQUENTIAL_BASH_TOML)).await;
    let command = "sleep 30 & echo $! > sleep.pid; echo $$ > shell.pid; wait";
    let handle = session
        .start_call("bash", json!({"command": command}))
        .await;
    let shell = wait_pid(&session.server.path("shell.pid")).await;
    let sleep = wait_pid(&session.server.path("sleep.pid")).await;
    assert!(running(shell) && running(sleep));

    let cancelled = Instant::now();
    handle
        .cancel(Some("the user pressed stop".to_owned()))
        .await
        .expect("the cancellation is sent");
    wait_gone(&[shell, sleep], Duration::from_secs(5)).await;

    let result = session.call("bash", json!({"command": "echo after"})).await;
    assert_eq!(ok_text(&result), "after");
    assert!(
        cancelled.elapsed() < Duration::from_secs(15),
        "the cancelled call ended long before its 30 s sleep"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn concurrent_edits_of_one_file_through_separate_requests_all_survive() {
    const REGIONS: usize = 16;
    let session = Session::start(None).await;
    let original: String = (0..REGIONS)
        .map(|i| format!("region {i:02}: {}\n", "x".repeat(4096)))
        .collect();
    session.server.put("shared.txt", &original);

    let edits = (0..REGIONS).map(|i| {
        session.call(
            "edit",
            json!({"path": "shared.txt", "edits": [{
                "oldText": format!("region {i:02}:"),
                "newText": format!("REGION {i:02} (edited by call {i}):"),
            }]}),
        )
    });
    for result in futures::future::join_all(edits).await {
        assert_eq!(
            ok_text(&result),
            "Successfully replaced 1 block in shared.txt."
        );
    }
    let expected: String = (0..REGIONS)
        .map(|i| format!("REGION {i:02} (edited by call {i}): {}\n", "x".repeat(4096)))
        .collect();
    assert!(
        session.server.contents("shared.txt") == expected,
        "an edit was lost"
    );
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn a_sequential_bash_call_never_overlaps_another_call() {
    let session = Session::start(Some(SEQUENTIAL_BASH_TOML)).await;
    session.server.put("f.txt", "content\n");
    let timed = |i: usize, secs: &str| {
        json!({"command": format!(
            "date +%s%N > start{i}; sleep {secs}; date +%s%N > end{i}; echo bash {i}"
        )})
    };

    // The first bash call starts alone; everything else is sent while it runs.
    let first = session.call("bash", timed(0, "1"));
    let rest = async {
        wait_line(&session.server.path("start0")).await;
        let reads = (0..4).map(|_| async {
            let result = session.call("read", json!({"path": "f.txt"})).await;
            (ok_text(&result), now_nanos())
        });
        let bashes = (1..3).map(|i| session.call("bash", timed(i, "0.3")));
        futures::future::join(
            futures::future::join_all(reads),
            futures::future::join_all(bashes),
        )
        .await
    };
    let (first, (reads, bashes)) = futures::future::join(first, rest).await;
    assert_eq!(ok_text(&first), "bash 0");
    for (i, result) in bashes.iter().enumerate() {
        assert_eq!(ok_text(result), format!("bash {}", i + 1));
    }

    let spans: Vec<(u128, u128)> = (0..3)
        .map(|i| {
            (
                nanos(&session.server.path(&format!("start{i}"))),
                nanos(&session.server.path(&format!("end{i}"))),
            )
        })
        .collect();
    for (i, a) in spans.iter().enumerate() {
        for (j, b) in spans.iter().enumerate().skip(i + 1) {
            assert!(
                a.1 <= b.0 || b.1 <= a.0,
                "bash {i} {a:?} overlapped bash {j} {b:?}"
            );
        }
    }
    // The reads were sent while the first bash call ran, so none may have run (and
    // answered) before it ended.
    for (text, answered) in reads {
        assert_eq!(text, "content\n");
        assert!(
            answered > spans[0].1,
            "a read answered at {answered}, before bash 0 ended at {}",
            spans[0].1
        );
    }
    assert!(session.finish().await.success());
}

#[tokio::test]
async fn parallel_bash_calls_overlap_without_a_sequential_mode() {
    // The counterpart of the test above: the same calls do overlap when bash is parallel,
    // so the absence of overlap there is the lock's doing.
    let session = Session::start(None).await;
    session.server.put("f.txt", "content\n");
    let calls = (0..3).map(|i| {
        session.call(
            "bash",
            json!({"command": format!("date +%s%N > start{i}; sleep 2; date +%s%N > end{i}")}),
        )
    });
    let read_answered = async {
        wait_line(&session.server.path("start0")).await;
        let result = session.call("read", json!({"path": "f.txt"})).await;
        assert_eq!(ok_text(&result), "content\n");
        now_nanos()
    };
    let (results, read_answered) =
        futures::future::join(futures::future::join_all(calls), read_answered).await;
    for result in &results {
        assert_eq!(ok_text(result), "(no output)");
    }
    let spans: Vec<(u128, u128)> = (0..3)
        .map(|i| {
            (
                nanos(&session.server.path(&format!("start{i}"))),
                nanos(&session.server.path(&format!("end{i}"))),
            )
        })
        .collect();
    let overlapping = (0..3)
        .flat_map(|i| (i + 1..3).map(move |j| (i, j)))
        .any(|(i, j)| spans[i].0 < spans[j].1 && spans[j].0 < spans[i].1);
    assert!(
        overlapping,
        "parallel bash calls ran one at a time: {spans:?}"
    );
    assert!(
        read_answered < spans[0].1,
        "a read waited for a parallel bash call"
    );
    assert!(session.finish().await.success());
}
