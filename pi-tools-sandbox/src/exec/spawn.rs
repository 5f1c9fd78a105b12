//! Starting a command without copying this process: `clone` with `CLONE_VM | CLONE_VFORK`,
//! as `posix_spawn` does, with the steps a command needs before `exec` (its cgroup, its
//! process group, the sandbox's namespaces and confinement) done in the child.
//!
//! `fork` (what std's `Command` does as soon as a pre-exec step is set) copies the page
//! tables of the whole process, and every page that this process's threads or the child
//! write before the child's `exec` is then copied and flushed from the other CPUs' TLBs.
//! On a virtual machine each flush is an interrupt between virtual CPUs: `echo hi` from a
//! small multi-threaded process took about 7.5 ms that way against 4 ms spawned, and 17 ms
//! from a process holding 50 MB. A child made with `CLONE_VM` copies nothing.
//!
//! Sharing the memory is what makes the child delicate, so it does little: it runs on a
//! stack of its own with every signal blocked (and handlers reset before they are
//! unblocked), only makes system calls on data prepared here, writes no memory but its own
//! stack and one word of `Shared::failure`, and ends in `execve` or `_exit`. `CLONE_VFORK`
//! suspends the calling thread until then, so what the child reads stays alive and
//! unchanged. The sandbox's namespaces are made by `clone` itself (a process sharing its
//! memory cannot `unshare` a user namespace). A pidfd tells when the command has ended.

use std::cell::Cell;
use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::process::{Pid, Signal, WaitOptions};
use tokio::io::unix::AsyncFd;

use crate::Confinement;

/// What to start.
pub(crate) struct Plan<'a> {
    /// The program, an absolute path (no `PATH` search happens).
    pub program: &'a Path,
    /// Its arguments after the program's name.
    pub args: &'a [&'a OsStr],
    /// The working directory, entered after the sandbox's mounts.
    pub cwd: &'a Path,
    /// Variables set on top of this process's environment.
    pub env: &'a [(&'a str, &'a str)],
    /// Standard input (`/dev/null` when `None`), output and error.
    pub stdin: Option<BorrowedFd<'a>>,
    /// They are a terminal: the command leads a session of its own with it as controlling
    /// terminal (instead of only a process group of its own).
    pub terminal: bool,
    pub stdout: BorrowedFd<'a>,
    pub stderr: BorrowedFd<'a>,
    /// The `cgroup.procs` of the cgroup the command runs in, if any.
    pub cgroup_procs: Option<BorrowedFd<'a>>,
    /// The confinement, if any.
    pub sandbox: Option<&'a Confinement>,
}

/// Why a command did not start.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The kernel refused the `clone` itself (an old kernel without pidfds, or a container
    /// whose seccomp profile refuses namespaces made this way): start it by `fork` instead.
    Clone(io::Error),
    /// The child could not enter its cgroup: start it without one.
    Cgroup,
    /// Any other step, or `exec`.
    Other(io::Error),
}

/// A started command, until it has been waited for.
pub(crate) struct Child {
    pid: i32,
    pidfd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
    /// The command's own mount namespace, held so that tearing it down (which waits for an
    /// RCU grace period) happens after the call on a blocking thread, not in the exit of
    /// the command's last process, which the call waits for.
    mounts: Option<OwnedFd>,
}

/// The steps of the child, as recorded in [`Shared::failure`].
const STEP_CGROUP: u64 = 1;
const STEP_OTHER: u64 = 2;

/// The size of the child's stack (it needs a few kilobytes; a debug build more).
const STACK_SIZE: usize = 256 * 1024;

/// What the child reads, prepared here; and the one word it may write.
struct Shared<'a> {
    program: &'a CStr,
    argv: &'a [*const libc::c_char],
    envp: &'a [*const libc::c_char],
    cwd: &'a CStr,
    /// Standard input, output and error, each at 3 or above so that `dup2` onto 0, 1 and 2
    /// never overwrites one before it was copied.
    stdio: [RawFd; 3],
    cgroup_procs: Option<RawFd>,
    sandbox: Option<&'a Confinement>,
    terminal: bool,
    /// `(step << 32) | errno` of the step that failed; 0 when the child reached `exec`.
    failure: AtomicU64,
}

/// Starts `plan`'s program.
pub(crate) fn spawn(plan: &Plan<'_>) -> Result<Child, Failure> {
    let other = Failure::Other;
    let program = c_string(plan.program.as_os_str()).map_err(other)?;
    let args = plan
        .args
        .iter()
        .map(|a| c_string(a))
        .collect::<io::Result<Vec<_>>>()
        .map_err(other)?;
    let mut argv: Vec<*const libc::c_char> = std::iter::once(program.as_ptr())
        .chain(args.iter().map(|a| a.as_ptr()))
        .collect();
    argv.push(std::ptr::null());
    let env = environment(plan.env).map_err(other)?;
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|v| v.as_ptr()).collect();
    envp.push(std::ptr::null());
    let cwd = c_string(plan.cwd.as_os_str()).map_err(other)?;
    let null = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| other(e.into()))?;
    let high = |fd: BorrowedFd<'_>| -> Result<OwnedFd, Failure> {
        rustix::io::fcntl_dupfd_cloexec(fd, 3).map_err(|e| other(e.into()))
    };
    let stdin = plan.stdin.unwrap_or(null.as_fd());
    let stdio = [high(stdin)?, high(plan.stdout)?, high(plan.stderr)?];
    let shared = Shared {
        program: &program,
        argv: &argv,
        envp: &envp,
        cwd: &cwd,
        stdio: [
            stdio[0].as_raw_fd(),
            stdio[1].as_raw_fd(),
            stdio[2].as_raw_fd(),
        ],
        cgroup_procs: plan.cgroup_procs.map(|fd| fd.as_raw_fd()),
        sandbox: plan.sandbox,
        terminal: plan.terminal,
        failure: AtomicU64::new(0),
    };
    let flags = libc::CLONE_VM
        | libc::CLONE_VFORK
        | libc::CLONE_PIDFD
        | plan.sandbox.map_or(0, Confinement::clone_flags)
        | libc::SIGCHLD;
    let stack = Stack::take().map_err(Failure::Clone)?;
    let mut pidfd: libc::c_int = -1;
    // SAFETY: every signal is blocked around `clone` so no handler of this process runs on
    // the child's stack; the child only reads `shared` (alive until `clone` returns, which
    // with CLONE_VFORK is after the child's `exec` or exit) and writes its atomic word.
    let (pid, clone_error) = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(
            child_main,
            stack.top(),
            flags,
            std::ptr::from_ref(&shared).cast_mut().cast(),
            &mut pidfd as *mut libc::c_int,
        );
        let error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        (pid, error)
    };
    stack.give_back();
    if pid < 0 {
        return Err(Failure::Clone(clone_error));
    }
    // SAFETY: CLONE_PIDFD stored a new descriptor for the child, which only we own.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    let failure = shared.failure.load(Ordering::SeqCst);
    if failure != 0 {
        // The child has exited (`_exit` released the vfork): reap it.
        let _ = wait_for(pid, false);
        return Err(if failure >> 32 == STEP_CGROUP {
            Failure::Cgroup
        } else {
            Failure::Other(io::Error::from_raw_os_error((failure & 0xffff_ffff) as i32))
        });
    }
    // SAFETY: the Child owns the descriptor, which stays open and the same until dropped.
    let registered =
        unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) };
    let pidfd = match registered {
        Ok(pidfd) => pidfd,
        Err(error) => {
            // Nothing could wait for it: it must not run unwatched (its process group is
            // its pid; it is not reaped yet, so the id is still its).
            if let Some(group) = Pid::from_raw(pid) {
                let _ = rustix::process::kill_process_group(group, Signal::KILL);
            }
            reap_later(pid);
            return Err(Failure::Other(error.into()));
        }
    };
    let mounts = (flags & libc::CLONE_NEWNS != 0)
        .then(|| {
            rustix::fs::open(
                format!("/proc/{pid}/ns/mnt"),
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .ok()
        })
        .flatten();
    Ok(Child {
        pid,
        pidfd,
        status: None,
        mounts,
    })
}

impl Child {
    /// The process id (also its process group's).
    pub(crate) fn id(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Waits until the command has ended, and reaps it.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            let mut ready = self.pidfd.readable().await?;
            ready.clear_ready();
        }
    }

    /// Its status, if it has ended (reaping it).
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let Some(raw) = wait_for(self.pid, true)? else {
            return Ok(None);
        };
        let status = ExitStatus::from_raw(raw);
        self.status = Some(status);
        // Background jobs may still be in the namespace; then it outlives this.
        if let (Some(mounts), Ok(runtime)) =
            (self.mounts.take(), tokio::runtime::Handle::try_current())
        {
            drop(runtime.spawn_blocking(move || drop(mounts)));
        }
        Ok(Some(status))
    }
}

impl Drop for Child {
    /// A child dropped before it ended is reaped once it ends, by a thread of its own, so
    /// it does not stay a zombie.
    fn drop(&mut self) {
        if matches!(self.try_wait(), Ok(None)) {
            reap_later(self.pid);
        }
    }
}

/// Reaps the child `pid` once it ends, on a thread of its own.
fn reap_later(pid: i32) {
    let _ = std::thread::Builder::new()
        .name("pi-tools-reaper".into())
        .spawn(move || {
            let _ = wait_for(pid, false);
        });
}

/// Waits for our own child `pid` (without blocking when `nohang`), retrying when a signal
/// interrupts: its raw wait status once it has ended and is reaped, `None` while it runs.
fn wait_for(pid: i32, nohang: bool) -> io::Result<Option<i32>> {
    let pid = Pid::from_raw(pid).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let options = if nohang {
        WaitOptions::NOHANG
    } else {
        WaitOptions::empty()
    };
    loop {
        match rustix::process::waitpid(Some(pid), options) {
            Ok(reaped) => return Ok(reaped.map(|(_, status)| status.as_raw())),
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
}

/// The child: runs on its own stack, sharing this process's memory, until `execve`.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Shared` that `spawn` keeps alive until the child execs or exits.
    let shared = unsafe { &*arg.cast::<Shared<'_>>() };
    let Err((step, error)) = shared.run();
    let errno = error.raw_os_error().unwrap_or(libc::EINVAL);
    shared.failure.store(
        (step << 32) | u64::from(errno.unsigned_abs()),
        Ordering::SeqCst,
    );
    // SAFETY: ends the child without running anything of this process.
    unsafe { libc::_exit(127) }
}

impl Shared<'_> {
    /// The child's steps in order; returns only on failure (with the step).
    ///
    /// The steps stay libc's: they work on the raw descriptors of `Shared` (rustix's `dup2`
    /// takes an owned target, its `execve` and signal masks are unsafe as well), and code
    /// that shares this process's memory is best left as it was proven by the attack tests.
    fn run(&self) -> Result<std::convert::Infallible, (u64, io::Error)> {
        let other = |e| (STEP_OTHER, e);
        // SAFETY: plain system calls on data prepared before `clone`.
        unsafe {
            reset_signal_handlers();
            // The cgroup first, so everything the command starts is in it.
            if let Some(procs) = self.cgroup_procs
                && libc::write(procs, b"0\n".as_ptr().cast(), 2) < 0
            {
                return Err((STEP_CGROUP, io::Error::last_os_error()));
            }
            if let Some(sandbox) = self.sandbox {
                sandbox.enter_cloned().map_err(other)?;
            }
            let group = if self.terminal {
                libc::setsid()
            } else {
                libc::setpgid(0, 0)
            };
            if group < 0 {
                return Err(other(io::Error::last_os_error()));
            }
            for (target, &source) in self.stdio.iter().enumerate() {
                if libc::dup2(source, target as RawFd) < 0 {
                    return Err(other(io::Error::last_os_error()));
                }
            }
            if self.terminal && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(other(io::Error::last_os_error()));
            }
            // After the mounts, so a working directory inside a protected path is the
            // read-only one.
            if libc::chdir(self.cwd.as_ptr()) != 0 {
                return Err(other(io::Error::last_os_error()));
            }
            if let Some(sandbox) = self.sandbox {
                sandbox.confine().map_err(other)?;
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            libc::execve(
                self.program.as_ptr(),
                self.argv.as_ptr(),
                self.envp.as_ptr(),
            );
            Err(other(io::Error::last_os_error()))
        }
    }
}

/// In the child, with every signal blocked: every signal this process handles goes back to
/// its default action (a handler must not run on the shared memory once signals are
/// unblocked), and SIGPIPE too, which Rust programs ignore and commands expect by default.
///
/// # Safety
///
/// Only in the child between `clone` and `exec`, with every signal blocked: it changes the
/// dispositions of the whole process, which would break this process's own handlers.
unsafe fn reset_signal_handlers() {
    // SAFETY: sigaction with structs on this stack.
    unsafe {
        for signal in 1..=libc::SIGRTMAX() {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            let handled = old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN;
            if handled || (signal == libc::SIGPIPE && old.sa_sigaction == libc::SIG_IGN) {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
    }
}

/// This process's environment with `overrides` set on top, as `NAME=value` strings.
fn environment(overrides: &[(&str, &str)]) -> io::Result<Vec<CString>> {
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(name, _)| !overrides.iter().any(|(o, _)| OsStr::new(o) == name))
        .collect();
    for (i, (name, value)) in overrides.iter().enumerate() {
        // A later setting of the same name wins, as with `Command::env`.
        if !overrides[i + 1..].iter().any(|(o, _)| o == name) {
            vars.push((name.into(), value.into()));
        }
    }
    vars.into_iter()
        .map(|(name, value)| {
            let mut entry = name.into_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            CString::new(entry).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an environment variable holds a NUL byte",
                )
            })
        })
        .collect()
}

fn c_string(text: &OsStr) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{text:?} holds a NUL byte, which no command line can carry"),
        )
    })
}

/// A child's stack: an anonymous mapping whose lowest page is a guard. Each thread keeps
/// the one it used last, so starting a command maps nothing.
struct Stack {
    base: *mut libc::c_void,
}

thread_local! {
    static SPARE: Cell<Option<Stack>> = const { Cell::new(None) };
}

impl Stack {
    fn take() -> io::Result<Stack> {
        if let Some(stack) = SPARE.with(Cell::take) {
            return Ok(stack);
        }
        // libc's: rustix's `mmap` and `mprotect` are unsafe as well, so nothing is gained.
        // SAFETY: a fresh anonymous private mapping, its lowest page made inaccessible.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                STACK_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            libc::mprotect(base, page_size(), libc::PROT_NONE);
            Ok(Stack { base })
        }
    }

    /// The top of the stack (it grows down), 16-byte aligned.
    fn top(&self) -> *mut libc::c_void {
        // SAFETY: within the mapping.
        unsafe { self.base.cast::<u8>().add(STACK_SIZE).cast() }
    }

    fn give_back(self) {
        SPARE.with(|spare| {
            if let Some(extra) = spare.replace(Some(self)) {
                drop(extra);
            }
        });
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `take`, no longer used.
        unsafe {
            libc::munmap(self.base, STACK_SIZE);
        }
    }
}

fn page_size() -> usize {
    rustix::param::page_size()
}
