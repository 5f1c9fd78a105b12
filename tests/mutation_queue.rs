//! The per-file mutation queue: order, parallelism, aliases, cancellation.
#![cfg(feature = "builtins")]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, MutationQueue, WithEnv, mutation_key};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn same_file_operations_run_one_at_a_time_in_request_order() {
    let queue = MutationQueue::new();
    let order = Arc::new(Mutex::new(Vec::new()));
    let running = Arc::new(AtomicUsize::new(0));
    let max_running = Arc::new(AtomicUsize::new(0));
    let mut futures = Vec::new();
    for i in 0..8u64 {
        let (order, running, max_running) = (order.clone(), running.clone(), max_running.clone());
        // Later requests sleep less, so any reordering or overlap would show.
        futures.push(queue.run(PathBuf::from("/k/file"), async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            max_running.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20 - 2 * i)).await;
            order.lock().unwrap().push(i);
            running.fetch_sub(1, Ordering::SeqCst);
        }));
    }
    futures::future::join_all(futures).await;
    assert_eq!(*order.lock().unwrap(), (0..8).collect::<Vec<_>>());
    assert_eq!(max_running.load(Ordering::SeqCst), 1);
    assert_eq!(queue.active_keys(), 0, "idle keys are removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn different_files_run_in_parallel() {
    let queue = MutationQueue::new();
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let (b1, b2) = (barrier.clone(), barrier.clone());
    // Each operation waits for the other to have started: only possible if they overlap.
    let a = queue.run(PathBuf::from("/k/a"), async move { b1.wait().await });
    let b = queue.run(PathBuf::from("/k/b"), async move { b2.wait().await });
    tokio::time::timeout(Duration::from_secs(5), futures::future::join(a, b))
        .await
        .expect("operations on different files overlapped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_operation_keeps_the_file_locked_until_it_really_ended() {
    let queue = MutationQueue::new();
    let finished = Arc::new(AtomicBool::new(false));
    let flag = finished.clone();
    let slow = queue.run(PathBuf::from("/k/f"), async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        flag.store(true, Ordering::SeqCst);
    });
    // The caller gives up (a cancelled tool call drops its future).
    assert!(
        tokio::time::timeout(Duration::from_millis(20), slow)
            .await
            .is_err()
    );
    let flag = finished.clone();
    let saw_finished = queue
        .run(
            PathBuf::from("/k/f"),
            async move { flag.load(Ordering::SeqCst) },
        )
        .await;
    assert!(
        saw_finished,
        "the next operation started before the cancelled one ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_operation_passes_its_turn_on() {
    let queue = MutationQueue::new();
    let first = tokio::spawn(queue.run(PathBuf::from("/k/p"), async { panic!("boom") }));
    let second = queue.run(PathBuf::from("/k/p"), async { 7 });
    assert!(first.await.unwrap_err().is_panic());
    assert_eq!(second.await, 7);
}

#[cfg(unix)]
#[tokio::test]
async fn aliases_of_one_file_share_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("file.txt"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("file.txt"), root.join("link.txt")).unwrap();
    let env = LocalEnv::new(&root);
    let env: &dyn ExecutionEnv = &env;

    let real = mutation_key(env, &root.join("file.txt")).await.unwrap();
    assert_eq!(real, root.join("file.txt"));
    for alias in ["link.txt", "./file.txt", "sub/../file.txt"] {
        assert_eq!(
            mutation_key(env, &root.join(alias)).await.unwrap(),
            real,
            "{alias}"
        );
    }
    // A file that does not exist yet: canonical parent plus its name.
    std::os::unix::fs::symlink(root.join("sub"), root.join("sublink")).unwrap();
    assert_eq!(
        mutation_key(env, &root.join("sublink/new.txt"))
            .await
            .unwrap(),
        root.join("sub/new.txt")
    );
    assert_eq!(
        mutation_key(env, &root.join("sublink/a/b/../c.txt"))
            .await
            .unwrap(),
        root.join("sub/a/c.txt")
    );
}

// ---- Through the tools and the runner ----

use pi_tools::builtins::edit::{EditArgs, EditTool, edit};
use pi_tools::builtins::write::{WriteArgs, WriteTool, write};
use pi_tools::{NoopSink, RunnerConfig, ToolCall, ToolContext, ToolSet, execute_tool_calls, wrap};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// edit and write as the macro generates them and the registry wraps them.
fn file_tools() -> ToolSet {
    ToolSet::new([
        wrap(Arc::new(EditTool), None),
        wrap(Arc::new(WriteTool), None),
    ])
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_edits_of_one_file_through_the_runner_all_survive() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..20).map(|i| format!("value {i} = old\n")).collect();
    std::fs::write(dir.path().join("f.txt"), &lines).unwrap();
    let config = RunnerConfig::default().with_env(Arc::new(LocalEnv::new(dir.path())));
    // Every call names the file differently; all are the same file.
    let names = ["f.txt", "./f.txt", "sub/../f.txt", "@f.txt"];
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let calls: Vec<ToolCall> = (0..20)
        .map(|i| {
            call(&format!("c{i}"), "edit", json!({
                "path": names[i % names.len()],
                "edits": [{"oldText": format!("value {i} = old"), "newText": format!("value {i} = new")}]
            }))
        })
        .collect();
    let outcome = execute_tool_calls(
        &file_tools(),
        &calls,
        &config,
        &CancellationToken::new(),
        &NoopSink,
    )
    .await;
    for m in &outcome.messages {
        assert!(!m.is_error, "{:?}", m.content);
    }
    let expected: String = (0..20).map(|i| format!("value {i} = new\n")).collect();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        expected
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edit_and_write_share_the_queue_of_a_file_and_its_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("f.txt"), "start\n").unwrap();
    std::os::unix::fs::symlink(root.join("f.txt"), root.join("alias.txt")).unwrap();
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(&root));
    let ctx = ToolContext::new("c", CancellationToken::new()).with_env(env.clone());

    // A custom read-modify-write holds the file for a while, then leaves "x = 1" in it.
    let holder_env = env.clone();
    let key = mutation_key(&*env, &root.join("f.txt")).await.unwrap();
    let holder = env.mutation_queue().run(key, async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        holder_env
            .write_file(&root.join("f.txt"), b"x = 1\n".to_vec())
            .await
            .unwrap();
    });
    // Queued after the holder: the edit can only succeed if it sees the holder's content,
    // and the write (through the symbolic link) must come last.
    let edit_call = edit(
        &ctx,
        EditArgs::new(
            "f.txt",
            [pi_tools::builtins::edit::Replacement::new("x = 1", "x = 2")],
        ),
    );
    let (_, edited) = futures::future::join(holder, edit_call).await;
    edited.expect("the edit ran after the holder finished");
    // The write goes through the symbolic link while the real path is held: it must wait,
    // so it lands after the holder's content.
    let holder_env = env.clone();
    let real = dir.path().canonicalize().unwrap().join("f.txt");
    let key = mutation_key(&*env, &real).await.unwrap();
    let holder = env.mutation_queue().run(key, async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        holder_env
            .write_file(&real, b"held\n".to_vec())
            .await
            .unwrap();
    });
    let written = write(&ctx, WriteArgs::new("alias.txt", "written\n"));
    let (_, written) = futures::future::join(holder, written).await;
    written.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "written\n"
    );
    assert_eq!(env.mutation_queue().active_keys(), 0);
}
