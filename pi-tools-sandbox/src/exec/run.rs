//! Running shell commands on this machine: [`run`].
//!
//! The command runs under `bash -c` (or `sh -c` where there is no bash) in its own process
//! group, with stdin from `/dev/null` and stdout and stderr writing into one pipe, so their
//! output arrives in the order it was written. Every process it starts is tracked, including
//! those that leave the group (see [`crate::procs`]):
//!
//! - on timeout or cancellation, all of them get SIGKILL;
//! - when the shell exits by itself, those outside its process group get SIGKILL, while the
//!   jobs it put in the background (`cmd &`, still in its group) may keep running (a server
//!   the model started on purpose) until the environment's session ends; one of them that
//!   leaves the group later is killed then (the tracker's watcher).
//!
//! Once the shell has exited, the pipe gets a short grace period to drain; a background job
//! that keeps it open does not hold the call up.
//!
//! When the caller also wants stderr on its own (`on_stderr`), stderr gets a pipe of its own
//! instead: its chunks go to `on_stderr` and, in the order they are read, into the merged
//! output too (between the two pipes, that is the order of arrival, not of writing).

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use super::{ExecOutcome, ExecRequest, Input, OutputSink, TerminalSize};
use crate::procs::{CallProcs, Tracker, enter_cgroup};
use crate::{Confinement, Sandbox};

/// How long the output pipe may stay open after the shell has exited (or been killed): a
/// background job that keeps it open does not hold the call up longer.
pub const PIPE_GRACE: Duration = Duration::from_millis(100);

/// The shell commands run under (`shell -c COMMAND`): the first `bash` found, else `sh`.
pub fn shell() -> &'static Path {
    static SHELL: OnceLock<PathBuf> = OnceLock::new();
    SHELL.get_or_init(|| {
        let candidates = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];
        if let Some(found) = candidates.iter().map(Path::new).find(|p| p.is_file()) {
            return found.to_path_buf();
        }
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path) {
                let bash = dir.join("bash");
                if bash.is_file() {
                    return bash;
                }
            }
        }
        PathBuf::from("/bin/sh")
    })
}

/// Runs `request`, handing every chunk of merged output to `on_chunk` (and each stderr
/// chunk to `on_stderr` as well, when given), until the shell exits (plus [`PIPE_GRACE`]),
/// the timeout passes or `cancel` fires. The command's processes are followed by `tracker`.
/// With `input` (a job's), its standard input is a pipe fed from the job's control channel
/// (or, when it asks for one, a pseudo-terminal).
///
/// With `sandbox`, the command and everything it starts are confined by it (see
/// [`Confinement`]); a policy the kernel cannot enforce is an error and nothing runs. The
/// caller runs the sandbox's [`before_call`](Sandbox::before_call) and
/// [`after_call`](Sandbox::after_call) around it.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use pi_tools_sandbox::exec::{ExecRequest, run};
/// use pi_tools_sandbox::procs::{ProcessTracking, Tracker};
///
/// let tracker = Tracker::new(ProcessTracking::Auto);
/// let request = ExecRequest {
///     command: "echo hi".into(),
///     cwd: "/tmp".into(),
///     timeout: None,
///     env: Vec::new(),
/// };
/// let cancel = tokio_util::sync::CancellationToken::new();
/// let on_chunk = Box::new(|chunk: &[u8]| print!("{}", String::from_utf8_lossy(chunk)));
/// let outcome = run(request, cancel, on_chunk, None, &tracker, None, None).await?;
/// assert_eq!(outcome.exit_code, Some(0));
/// tracker.end_session();
/// # Ok(())
/// # }
/// ```
pub async fn run(
    request: ExecRequest,
    cancel: CancellationToken,
    on_chunk: OutputSink,
    on_stderr: Option<OutputSink>,
    tracker: &Tracker,
    sandbox: Option<&Sandbox>,
    input: Option<Input>,
) -> io::Result<ExecOutcome> {
    check_request(&request)?;
    let split = on_stderr.is_some();
    let (control, terminal) = match input {
        Some(input) => (Some(input.control), input.terminal),
        None => (None, None),
    };
    let streams = Streams {
        split_stderr: split,
        piped_stdin: control.is_some(),
        terminal,
    };
    let (mut child, call, (output, errors, stdin)) = spawn(&request, tracker, sandbox, streams)?;
    // Aborted when the shell is done: what is sent later goes nowhere.
    let input_task = control.map(|control| {
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .unwrap_or(0);
        super::input::serve(control, stdin, pgid)
    });
    let mut sinks = Sinks {
        merged: on_chunk,
        stderr: on_stderr,
    };

    // A deadline past what the clock can hold is no deadline.
    let deadline = request
        .timeout
        .and_then(|t| tokio::time::Instant::now().checked_add(t));
    let sleep_until = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(sleep_until);

    let mut outcome = ExecOutcome::default();
    let mut pipes = Pipes::new(output, errors);
    let status = loop {
        tokio::select! {
            // Cancellation and the timeout first, so a flood of output cannot starve them.
            biased;
            () = cancel.cancelled() => {
                outcome.aborted = true;
                break None;
            }
            () = &mut sleep_until => {
                outcome.timed_out = true;
                break None;
            }
            () = pipes.pass_on(&mut sinks), if pipes.open() => {}
            status = child.wait() => break Some(status),
        }
    };
    let status = match status {
        Some(status) => {
            call.kill_escaped();
            status
        }
        None => {
            call.kill_all();
            child.wait().await
        }
    };
    call.finish();
    if let Some(task) = input_task {
        task.abort();
    }
    // What is left may only stay in the call's process group, now and later.
    tracker.watch_finished();
    let status = status?;

    // Drain what is left, but never wait long for a pipe a background job keeps open.
    let grace = tokio::time::sleep(PIPE_GRACE);
    tokio::pin!(grace);
    while pipes.open() {
        tokio::select! {
            biased;
            () = pipes.pass_on(&mut sinks) => {}
            () = &mut grace => break,
        }
    }

    outcome.exit_code = status.code();
    outcome.signal = status.signal();
    Ok(outcome)
}

/// Where output goes: all of it to `merged`, stderr to `stderr` as well.
struct Sinks {
    merged: OutputSink,
    stderr: Option<OutputSink>,
}

impl Sinks {
    fn stderr(&mut self, chunk: &[u8]) {
        (self.merged)(chunk);
        if let Some(stderr) = self.stderr.as_mut() {
            stderr(chunk);
        }
    }
}

/// The read ends of the command's output pipe and, when asked for, of its stderr pipe, with
/// a buffer each and whether each is still open (a pipe that ends or fails is closed).
struct Pipes {
    output: super::stdio::OutputReader,
    errors: Option<pipe::Receiver>,
    buf: Vec<u8>,
    err_buf: Vec<u8>,
    output_open: bool,
    errors_open: bool,
}

impl Pipes {
    fn new(output: super::stdio::OutputReader, errors: Option<pipe::Receiver>) -> Self {
        Pipes {
            err_buf: vec![0u8; if errors.is_some() { 16 * 1024 } else { 0 }],
            errors_open: errors.is_some(),
            output,
            errors,
            buf: vec![0u8; 16 * 1024],
            output_open: true,
        }
    }

    /// Whether a pipe is still open.
    fn open(&self) -> bool {
        self.output_open || self.errors_open
    }

    /// Reads the next chunk from an open pipe (the output pipe first when both are ready)
    /// and passes it to `sinks`, or closes the pipe that ended. Only while [`Self::open`].
    async fn pass_on(&mut self, sinks: &mut Sinks) {
        tokio::select! {
            biased;
            read = self.output.read(&mut self.buf), if self.output_open => match read {
                Ok(0) | Err(_) => self.output_open = false,
                Ok(n) => (sinks.merged)(&self.buf[..n]),
            },
            read = read_some(&mut self.errors, &mut self.err_buf), if self.errors_open => match read {
                Ok(0) | Err(_) => self.errors_open = false,
                Ok(n) => sinks.stderr(&self.err_buf[..n]),
            },
        }
    }
}

/// Reads from the stderr pipe when there is one (never ready otherwise).
async fn read_some(pipe: &mut Option<pipe::Receiver>, buf: &mut [u8]) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Refuses a request that cannot run, with the reason: a command line or variable holding a
/// NUL byte (no process can receive one), a working directory that is missing or not a
/// directory.
fn check_request(request: &ExecRequest) -> io::Result<()> {
    if request.command.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the command contains a NUL byte (\\0), which no command line can carry; remove it \
             (to print one, write printf '\\0')",
        ));
    }
    if let Some((name, _)) = request
        .env
        .iter()
        .find(|(k, v)| k.contains('\0') || v.contains('\0') || k.contains('='))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the environment variable {name:?} has a NUL byte or `=` in its name or value"),
        ));
    }
    match std::fs::metadata(&request.cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!(
                "the working directory {} is not a directory",
                request.cwd.display()
            ),
        )),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!(
                "the working directory {} does not exist or cannot be read ({e})",
                request.cwd.display()
            ),
        )),
    }
}

/// What streams a command gets (see `stdio.rs`).
struct Streams {
    split_stderr: bool,
    piped_stdin: bool,
    terminal: Option<TerminalSize>,
}

/// The shell, its processes, and this process's ends of its streams.
type Spawned = (Shell, std::sync::Arc<CallProcs>, super::stdio::Registered);

/// A started shell: by `clone` without copying this process (`spawn.rs`), or by `fork`
/// where the kernel refuses that.
enum Shell {
    #[cfg(target_os = "linux")]
    Cloned(super::spawn::Child),
    Forked(Child),
}

impl Shell {
    fn id(&self) -> Option<u32> {
        match self {
            #[cfg(target_os = "linux")]
            Shell::Cloned(child) => Some(child.id()),
            Shell::Forked(child) => child.id(),
        }
    }

    async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        match self {
            #[cfg(target_os = "linux")]
            Shell::Cloned(child) => child.wait().await,
            Shell::Forked(child) => child.wait().await,
        }
    }
}

/// Whether this thread starts commands by `fork` only: never, but in the tests that run
/// each command both ways.
#[cfg(target_os = "linux")]
fn fork_only() -> bool {
    #[cfg(test)]
    let only = tests::FORK_ONLY.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let only = false;
    only
}

/// Whether starting commands by `clone` may work here (false once the kernel said it has
/// no such `clone`).
#[cfg(target_os = "linux")]
static CLONE_WORKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Starts the shell in a process group of its own, tracked by a new [`CallProcs`] (in a
/// cgroup of its own when possible); returns it with the read end of its output pipe (and
/// of a separate stderr pipe when `split_stderr`).
fn spawn(
    request: &ExecRequest,
    tracker: &Tracker,
    sandbox: Option<&Sandbox>,
    streams: Streams,
) -> io::Result<Spawned> {
    let terminal = streams.terminal.is_some();
    let mut use_cgroup = true;
    #[cfg(target_os = "linux")]
    let mut by_clone = CLONE_WORKS.load(std::sync::atomic::Ordering::Relaxed) && !fork_only();
    loop {
        let call = tracker.begin(use_cgroup);
        let (ends, parent) =
            super::stdio::open(streams.split_stderr, streams.piped_stdin, streams.terminal)?;
        let procs_file = match call.open_procs_file() {
            Ok(file) => file,
            Err(_) => {
                tracker.cgroup_failed(&call);
                use_cgroup = false;
                continue;
            }
        };
        // After the cgroup: the sandbox's namespaces, Landlock and seccomp come last, so
        // every descendant is both tracked and confined. Nothing runs unconfined: a policy
        // the kernel cannot enforce is an error here.
        let child_sandbox = match sandbox {
            Some(sandbox) => Confinement::prepare(sandbox)?,
            None => None,
        };
        let started = |child: Shell| -> io::Result<Spawned> {
            if let Some(pgid) = child.id().and_then(|id| i32::try_from(id).ok()) {
                call.started(pgid);
            }
            Ok((child, std::sync::Arc::clone(&call), parent.register()?))
        };
        #[cfg(target_os = "linux")]
        if by_clone {
            use super::spawn::{Failure, Plan};
            use std::os::fd::AsFd;
            let mut env: Vec<(&str, &str)> = request
                .env
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            if procs_file.is_none() {
                env.push(call.marker());
            }
            let args = [std::ffi::OsStr::new("-c"), request.command.as_ref()];
            let plan = Plan {
                program: shell(),
                args: &args,
                cwd: &request.cwd,
                env: &env,
                stdout: ends.stdout.as_fd(),
                stderr: ends.stderr.as_fd(),
                stdin: ends.stdin.as_ref().map(AsFd::as_fd),
                terminal,
                cgroup_procs: procs_file.as_ref().map(AsFd::as_fd),
                sandbox: child_sandbox.as_ref(),
            };
            let spawned = super::spawn::spawn(&plan);
            // The parent's copies of the pipe's write end must go, or the pipe never
            // reports EOF.
            drop(ends);
            drop(procs_file);
            match spawned {
                Ok(child) => return started(Shell::Cloned(child)),
                Err(Failure::Cgroup) => {
                    tracker.cgroup_failed(&call);
                    use_cgroup = false;
                    continue;
                }
                Err(Failure::Other(e)) => {
                    call.finish();
                    return Err(e);
                }
                Err(Failure::Clone(e)) => {
                    // No such clone on this kernel: fork from now on. Another refusal (a
                    // limit on processes or namespaces) is left to fork to report.
                    if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
                        CLONE_WORKS.store(false, std::sync::atomic::Ordering::Relaxed);
                    }
                    by_clone = false;
                    call.finish();
                    continue;
                }
            }
        }
        let mut command = Command::new(shell());
        command
            .arg("-c")
            .arg(&request.command)
            .current_dir(&request.cwd)
            .envs(request.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(ends.stdin.map_or_else(Stdio::null, Stdio::from))
            .stdout(ends.stdout)
            .stderr(ends.stderr)
            .kill_on_drop(false);
        if !terminal {
            command.process_group(0);
        }
        match &procs_file {
            Some(fd) => {
                let fd = fd.try_clone()?;
                // SAFETY: the closure only makes the `write` system call (async-signal-safe).
                unsafe {
                    command.pre_exec(move || enter_cgroup(&fd));
                }
            }
            None => {
                let (name, value) = call.marker();
                command.env(name, value);
            }
        }
        if terminal {
            // SAFETY: setsid and ioctl are async-signal-safe system calls.
            unsafe {
                command.pre_exec(super::stdio::take_terminal);
            }
        }
        if let Some(child_sandbox) = child_sandbox {
            child_sandbox.install(&mut command);
        }
        let spawned = command.spawn();
        // The parent's copies of the pipe's write end must go, or the pipe never reports EOF.
        drop(command);
        drop(procs_file);
        let child = match spawned {
            Ok(child) => child,
            // Most likely the child could not enter its cgroup (the error of a pre-exec step
            // carries only its errno, so it cannot be told apart from a failed exec): run
            // without cgroups from now on; a failure of another kind comes back next round.
            Err(_) if call.cgroup().is_some() => {
                tracker.cgroup_failed(&call);
                use_cgroup = false;
                continue;
            }
            Err(e) => {
                call.finish();
                return Err(e);
            }
        };
        return started(Shell::Forked(child));
    }
}

#[cfg(all(test, target_os = "linux"))]
#[path = "run_tests.rs"]
mod tests;
