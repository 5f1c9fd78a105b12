//! The per-file mutation queue: read-modify-write operations on one file run one at a time,
//! in the order they were queued; operations on different files run in parallel.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

/// Serialises mutations per key (a canonical path, see [`mutation_key`](super::mutation_key)).
///
/// Each queued operation waits for the one queued before it on the same key. The place in
/// the line is taken when [`MutationQueue::run`] is *called*, not when its future is first
/// polled, so the order of calls is the order of execution. The operation itself runs in a
/// spawned task that owns the turn: dropping the returned future (a cancelled tool call)
/// does not let the next operation in while this one is still writing. Keys with nothing
/// queued are removed, so the map never grows beyond the files being worked on.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use pi_tools::env::MutationQueue;
/// let queue = MutationQueue::new();
/// let n = queue.run("/tmp/a.txt".into(), async { 1 + 1 }).await;
/// assert_eq!(n, 2);
/// assert_eq!(queue.active_keys(), 0);
/// # }
/// ```
#[derive(Default, Clone)]
pub struct MutationQueue {
    inner: Arc<Mutex<HashMap<PathBuf, Tail>>>,
}

/// The last operation queued on a key: later ones wait for its signal.
struct Tail {
    id: u64,
    done: Option<oneshot::Receiver<()>>,
    next_id: u64,
}

impl MutationQueue {
    /// An empty queue.
    pub fn new() -> Self {
        MutationQueue::default()
    }

    /// Runs `operation` when every operation queued earlier on `key` has finished, and
    /// resolves to its output. Must be called inside a Tokio runtime.
    ///
    /// If the operation panics, the panic is resumed in the caller (and the next operation
    /// still gets its turn).
    pub fn run<F, T>(&self, key: PathBuf, operation: F) -> impl Future<Output = T> + Send + 'static
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let (done_tx, done_rx) = oneshot::channel::<()>();
        let (previous, my_id) = {
            let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            match map.get_mut(&key) {
                Some(tail) => {
                    let previous = tail.done.replace(done_rx);
                    tail.next_id += 1;
                    tail.id = tail.next_id;
                    (previous, tail.id)
                }
                None => {
                    map.insert(
                        key.clone(),
                        Tail {
                            id: 0,
                            done: Some(done_rx),
                            next_id: 0,
                        },
                    );
                    (None, 0)
                }
            }
        };
        let inner = Arc::clone(&self.inner);
        let task = tokio::spawn(async move {
            // Holds our turn until this task ends, whatever happens to the caller.
            let _release = Release {
                inner,
                key,
                id: my_id,
                done: Some(done_tx),
            };
            if let Some(previous) = previous {
                // An error only means the previous task ended without sending: also done.
                let _ = previous.await;
            }
            operation.await
        });
        async move {
            match task.await {
                Ok(value) => value,
                Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
                Err(err) => panic!("a mutation task was cancelled by its runtime: {err}"),
            }
        }
    }

    /// How many keys have operations queued or running (for tests and diagnostics).
    pub fn active_keys(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl std::fmt::Debug for MutationQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutationQueue")
            .field("active_keys", &self.active_keys())
            .finish()
    }
}

/// Signals the next operation and removes the key when nobody queued after us.
struct Release {
    inner: Arc<Mutex<HashMap<PathBuf, Tail>>>,
    key: PathBuf,
    id: u64,
    done: Option<oneshot::Sender<()>>,
}

impl Drop for Release {
    fn drop(&mut self) {
        let mut map = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if map.get(&self.key).is_some_and(|tail| tail.id == self.id) {
            map.remove(&self.key);
        }
        drop(map);
        if let Some(done) = self.done.take() {
            let _ = done.send(());
        }
    }
}
