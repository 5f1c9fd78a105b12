//! The per-file mutation queue: order, parallelism, aliases, cancellation.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tools::env::{ExecutionEnv, LocalEnv, MutationQueue, mutation_key};

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
