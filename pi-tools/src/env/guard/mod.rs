//! The guard of a serving end: a small process (`pi-tools env-guard <mark>`, the same
//! binary) that outlives its server only to end what the server's commands left.
//!
//! A server killed outright (SIGKILL, the OOM killer) cannot end its commands, and the
//! next server that would (`leftovers.rs`) may never start: the session is over. So each
//! server starts a guard whose standard input is a pipe only the server holds. The pipe
//! reports end-of-file when the server is gone, however it went; the guard then kills
//! every process carrying the server's mark and exits. It runs in a process group of its
//! own, so a signal to the server's group does not take it along. A server that ends
//! normally has ended its sessions already; the guard finds nothing and exits too.
//!
//! The pi-tools binary keeps one for itself as well ([`for_this_process`]): its local jobs
//! and mounted servers carry its mark, so they end with it however it ends.

pub(crate) mod leftovers;

use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Whether this process is the pi-tools command line, whose binary runs the guard
/// subcommand (a program that uses the library may not).
static AVAILABLE: AtomicBool = AtomicBool::new(false);

/// Says that this process's binary is the pi-tools command line (so it can start guards).
#[cfg(feature = "cli")]
pub(crate) fn enable() {
    AVAILABLE.store(true, Ordering::Relaxed);
}

/// Starts, once, a guard for this whole process when its binary can run one: when the
/// process ends, however it ends, every process carrying its mark is killed. Returns the
/// mark to put in the environment of what should not outlive the process.
pub(crate) fn for_this_process() -> Option<&'static str> {
    if !AVAILABLE.load(Ordering::Relaxed) {
        return None;
    }
    PROCESS_GUARD
        .get_or_init(|| {
            let mark = leftovers::own_mark();
            Guard::start(&mark).map(|guard| (mark, std::sync::Mutex::new(Some(guard))))
        })
        .as_ref()
        .map(|(mark, _)| mark.as_str())
}

/// The guard of this whole process, once started, with the mark it guards.
type ProcessGuard = (String, std::sync::Mutex<Option<Guard>>);
static PROCESS_GUARD: OnceLock<Option<ProcessGuard>> = OnceLock::new();

/// Ends this process's guard, if one was started, and waits for it: for a process about to
/// exit normally, which has ended what the guard watches already, so that the guard is not
/// left a moment behind it.
#[cfg(feature = "cli")]
pub(crate) fn finish() {
    if let Some(Some((_, guard))) = PROCESS_GUARD.get() {
        drop(guard.lock().unwrap_or_else(|e| e.into_inner()).take());
    }
}

/// The hidden subcommand that runs a guard.
pub(crate) const SUBCOMMAND: &str = "env-guard";

/// Set in a guard's environment (to the pid it guards). A process that has it is a guard or
/// was started by one, and starts no guard itself: a program that serves the command line
/// but does not pass it every argument runs its own `main` where a guard was meant, and
/// without this each such run would start a guard that starts another, without end.
pub(crate) const GUARD_VAR: &str = "PI_TOOLS_GUARD_OF";

/// How long a server that ends waits for its guard to be done.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A running guard, told to do its work when dropped (or when this process dies).
pub(crate) struct Guard {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Guard {
    /// Starts the guard for the server that made `mark` (this process), or `None` when the
    /// binary cannot be started again (then only the next server ends the leftovers).
    pub(crate) fn start(mark: &str) -> Option<Guard> {
        if std::env::var_os(GUARD_VAR).is_some() {
            return None;
        }
        let exe = std::env::current_exe().ok()?;
        let mut child = Command::new(exe)
            .arg(SUBCOMMAND)
            .arg(mark)
            .env(GUARD_VAR, std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env_remove(leftovers::SERVER_VAR)
            // Keeps no directory busy (nor shows up as a process working in it).
            .current_dir("/")
            .process_group(0)
            .spawn()
            .ok()?;
        let stdin = child.stdin.take();
        Some(Guard { child, stdin })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The guard's work: waits until its standard input ends (its server is gone), then kills
/// every process marked with `mark`; returns how many.
#[cfg(feature = "cli")]
pub(crate) fn watch(mark: &str) -> usize {
    use std::io::{self, Read};
    let mut stdin = io::stdin().lock();
    let mut buf = [0u8; 64];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    leftovers::kill_marked(mark)
}
