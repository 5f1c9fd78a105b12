//! Notes for the model that arrive between calls: a background job that ended, say. Whoever
//! learns of such an event pushes a [`Notice`] into the session's [`Notices`] (kept in the
//! batch's extensions); the runner appends every pending one to the next result it finishes
//! and emits a [`ToolEvent::Notice`](super::ToolEvent::Notice) for each, so the model reads
//! it in its next turn whatever front carries the results. A program that drives no batch
//! collects them with [`Notices::take`].

use std::sync::{Arc, Mutex, PoisonError};

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
pub struct Notices(Arc<Mutex<Vec<Notice>>>);

impl Notices {
    /// Queues `notice` for the next result (replacing a waiting one on the same subject).
    pub fn push(&self, notice: Notice) {
        let mut queue = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        queue.retain(|n| n.subject != notice.subject);
        queue.push(notice);
    }

    /// Takes every waiting notice, oldest first.
    pub fn take(&self) -> Vec<Notice> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Withdraws the waiting notice on `subject`, if any (the model was told some other way).
    pub fn withdraw(&self, subject: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|n| n.subject != subject);
    }

    /// Whether a notice waits.
    pub fn is_empty(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Whether `other` shares this queue.
    pub fn same_queue(&self, other: &Notices) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
