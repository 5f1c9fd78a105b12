//! Children that cannot outlive this process: started with the parent-death signal, by one
//! thread kept for the life of the process.
//!
//! The kernel sends the parent-death signal when the *thread* that started the child ends,
//! not the process: a Tokio worker or blocking thread may end long before the process does
//! (the blocking pool lets idle threads go), and its children would die with it. So such
//! children are started by [`on_owner_thread`]'s thread, which never ends before the process.

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;

use rustix::process::Signal;

/// A piece of work for the owner thread.
type Job = Box<dyn FnOnce() + Send>;

/// Runs `work` (which starts the children) on the thread that owns them, and returns what
/// it returned.
pub(crate) async fn on_owner_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> io::Result<T> {
    static OWNER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    let owner = OWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("pi-tools-owner".into())
            .spawn(move || {
                for job in queue {
                    job();
                }
            })
            .ok()
            .map(|_| jobs)
    });
    let gone = || io::Error::other("the thread that starts owned processes is gone");
    let Some(owner) = owner else {
        return Err(io::Error::other(
            "cannot start the thread that starts owned processes; check the process's thread limit",
        ));
    };
    let (reply, done) = tokio::sync::oneshot::channel();
    owner
        .send(Box::new(move || {
            let _ = reply.send(work());
        }))
        .map_err(|_| gone())?;
    done.await.map_err(|_| gone())
}

/// What a child runs before `exec` so that `signal` reaches it when this process ends: the
/// parent-death signal, and a check that the parent had not already gone before it was set.
/// Only system calls that are safe between `fork` and `exec`.
pub(crate) fn death_signal(
    signal: Signal,
) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
    let owner = rustix::process::getpid();
    move || {
        rustix::process::set_parent_process_death_signal(Some(signal))?;
        if rustix::process::getppid() != Some(owner) {
            return Err(io::Error::other(
                "the process that started this one is gone",
            ));
        }
        Ok(())
    }
}
