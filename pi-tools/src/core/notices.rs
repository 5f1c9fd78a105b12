//! Notes for the model that arrive between calls: a background job that ended, say. Whoever
//! learns of such an event pushes a [`Notice`] into the session's [`Notices`] (kept in the
//! batch's extensions); the runner appends every pending one to the next result it finishes
//! and emits a [`ToolEvent::Notice`](super::ToolEvent::Notice) for each, so the model reads
//! it in its next turn whatever front carries the results. A program that drives no batch
//! collects them with [`Notices::take`].

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// One note for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What the note is about (a job's id, such as `job 3`), so a later note on the same
    /// subject, or a tool that told the model already, can withdraw it.
    pub subject: String,
    /// The text the model reads.
    pub text: String,
}

/// The notes waiting for the next result. Cloning shares the queue.
///
/// ```
/// use pi_tools::{Notice, Notices};
///
/// let notices = Notices::default();
/// notices.push(Notice { subject: "job 1".into(), text: "Job 1 exited with code 0.".into() });
/// assert_eq!(notices.take().len(), 1);
/// assert!(notices.take().is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Notices(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Woken by every push.
    pushed: Notify,
}

/// The waiting notices, each with its number in the order they were pushed.
#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<(u64, Notice)>,
    pushed: u64,
}

impl Notices {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.0.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `notice` for the next result (replacing a waiting one on the same subject).
    pub fn push(&self, notice: Notice) {
        {
            let mut queue = self.lock();
            queue.waiting.retain(|(_, n)| n.subject != notice.subject);
            queue.pushed += 1;
            let number = queue.pushed;
            queue.waiting.push((number, notice));
        }
        self.0.pushed.notify_waiters();
    }

    /// Takes every waiting notice, oldest first.
    pub fn take(&self) -> Vec<Notice> {
        let waiting = std::mem::take(&mut self.lock().waiting);
        waiting.into_iter().map(|(_, n)| n).collect()
    }

    /// Withdraws the waiting notice on `subject`, if any (the model was told some other way).
    pub fn withdraw(&self, subject: &str) {
        self.lock().waiting.retain(|(_, n)| n.subject != subject);
    }

    /// Whether a notice waits.
    pub fn is_empty(&self) -> bool {
        self.lock().waiting.is_empty()
    }

    /// Whether `other` shares this queue.
    pub fn same_queue(&self, other: &Notices) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Waits until a notice is pushed after the first `seen`, and returns how many have
    /// been pushed with copies of those still waiting (not yet taken): for a front end
    /// that announces each as it comes (an MCP logging notification), while the runner
    /// still puts it into the next result. Start with `seen` 0.
    pub async fn pushed_after(&self, seen: u64) -> (u64, Vec<Notice>) {
        loop {
            let pushed = self.0.pushed.notified();
            tokio::pin!(pushed);
            pushed.as_mut().enable();
            {
                let queue = self.lock();
                if queue.pushed > seen {
                    let new = queue
                        .waiting
                        .iter()
                        .filter(|(number, _)| *number > seen)
                        .map(|(_, n)| n.clone())
                        .collect();
                    return (queue.pushed, new);
                }
            }
            pushed.await;
        }
    }
}
