//! A stdio server's process: started in a process group of its own (under the bash
//! sandbox when its entry asks), its standard error kept as a short tail for error
//! messages, and ended with its whole group and every process it started elsewhere.
//!
//! Nothing of it outlives the gateway: the server gets SIGKILL when the gateway ends
//! however it ends (the parent-death signal, `env/remote/owned.rs`); every process it starts
//! carries a mark in its environment ([`MOUNT_VAR`]) by which ending the server finds what
//! left the group (`setsid`, double forks); and in the pi-tools binary, a guard process
//! (`env/guard/`) kills every process carrying the gateway's mark once the gateway
//! is gone, SIGKILL included. A process that clears its environment escapes the marks.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tools_sandbox::Confinement;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::env::Sandbox;
use crate::env::guard::{self, leftovers};
use crate::env::remote::owned;

/// The environment variable that marks a mounted server's processes, so those that leave
/// its process group (`setsid`, double forks) are found and ended with it.
pub(crate) const MOUNT_VAR: &str = "PI_TOOLS_MOUNT";

/// A mark no other server of this process has had.
fn next_mark() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", leftovers::own_mark())
}

/// How many of the last standard error lines an error message quotes.
const TAIL_LINES: usize = 12;

/// How long a line of standard error may be in the tail.
const TAIL_LINE_BYTES: usize = 400;

/// How long the tail may take to receive an ended server's last standard error lines.
const STDERR_SETTLE: Duration = Duration::from_millis(500);

/// How long an ended server gets between SIGTERM and SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);

/// The last lines a process wrote to standard error.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: &str) {
        let mut line = line.trim_end().to_owned();
        if line.len() > TAIL_LINE_BYTES {
            let mut end = TAIL_LINE_BYTES;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push('…');
        }
        let mut lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The tail as one text, `None` when nothing was written.
    pub(crate) fn text(&self) -> Option<String> {
        let lines = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let text: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| !l.is_empty())
            .collect();
        (!text.is_empty()).then(|| text.join("\n"))
    }
}

/// What a stdio server needs to start.
#[derive(Clone)]
pub(crate) struct Launch {
    pub(crate) command: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: PathBuf,
    pub(crate) sandbox: Option<Sandbox>,
}

/// A started server process.
pub(crate) struct ServerProcess {
    child: Child,
    pgid: Option<i32>,
    /// The value of [`MOUNT_VAR`] in its environment, which its descendants inherit.
    mark: String,
    pub(crate) stderr: StderrTail,
    /// The task reading standard error; done once the stream closed.
    reader: Option<tokio::task::JoinHandle<()>>,
}

impl ServerProcess {
    /// Starts the process; returns it with its standard output and input.
    pub(crate) async fn start(
        launch: &Launch,
    ) -> io::Result<(ServerProcess, ChildStdout, ChildStdin)> {
        let (program, args) = launch
            .command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the command is empty"))?;
        let mark = next_mark();
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(resolve_cwd(&launch.cwd)?)
            .envs(launch.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env(MOUNT_VAR, &mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        // What this process's guard ends should the process be killed.
        if let Some(process_mark) = guard::for_this_process() {
            command.env(leftovers::SERVER_VAR, process_mark);
        }
        // SAFETY: the hook makes only async-signal-safe system calls (prctl, getppid). It
        // comes before the sandbox's, whose seccomp filter may refuse them.
        unsafe {
            command.pre_exec(owned::death_signal(rustix::process::Signal::KILL));
        }
        if let Some(sandbox) = &launch.sandbox {
            if let Some(tmp) = sandbox.tmp_dir() {
                command.env("TMPDIR", tmp);
            }
            if let Some(child_sandbox) = Confinement::prepare(sandbox)? {
                child_sandbox.install(&mut command);
            }
        }
        let runtime = tokio::runtime::Handle::current();
        let mut child = owned::on_owner_thread(move || {
            let _runtime = runtime.enter();
            command.spawn()
        })
        .await??;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| io::Error::other("no stdin"))?;
        let stderr = StderrTail::default();
        let reader = child.stderr.take().map(|err| {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tail.push(&line);
                }
            })
        });
        let process = ServerProcess {
            child,
            pgid,
            mark,
            stderr,
            reader,
        };
        Ok((process, stdout, stdin))
    }

    /// The process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// How it ended, if it has: `exited with status 3`, `was killed by signal 9`.
    pub(crate) fn exit_text(&mut self) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        let status = self.child.try_wait().ok()??;
        Some(match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "ended".to_owned(),
        })
    }

    /// Waits (briefly) until everything the ended process wrote to standard error is in
    /// the tail: its stream closes when the last process holding it ends.
    pub(crate) async fn stderr_settled(&mut self) {
        if let Some(reader) = self.reader.as_mut()
            && tokio::time::timeout(STDERR_SETTLE, reader).await.is_ok()
        {
            // Done: a finished task's handle must not be awaited again.
            self.reader = None;
        }
    }

    /// Ends the process and everything in its group: SIGTERM, then SIGKILL after a short
    /// grace; waits for the process itself.
    pub(crate) async fn end(mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.signal_group(libc::SIGTERM);
            if tokio::time::timeout(TERM_GRACE, self.child.wait())
                .await
                .is_err()
            {
                self.signal_group(libc::SIGKILL);
                let _ = self.child.wait().await;
            }
        }
        // Whatever else is left in its group; then the group is gone for good.
        self.signal_group(libc::SIGKILL);
        self.pgid = None;
        self.kill_descendants().await;
    }

    /// Kills what it started outside its group (`setsid`, double forks): every process
    /// that carries its mark.
    async fn kill_descendants(&self) {
        let mark = self.mark.clone();
        let _ = tokio::task::spawn_blocking(move || leftovers::kill_with(MOUNT_VAR, &mark)).await;
    }

    fn signal_group(&self, signal: i32) {
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals the process group we created.
            unsafe {
                libc::kill(-pgid, signal);
            }
        }
    }
}

impl Drop for ServerProcess {
    /// A server not ended through [`ServerProcess::end`] (its owner was dropped) is killed
    /// with its group at once; tokio reaps the process.
    fn drop(&mut self) {
        if self.pgid.is_some() {
            self.signal_group(libc::SIGKILL);
            leftovers::kill_with(MOUNT_VAR, &self.mark);
        }
    }
}

fn resolve_cwd(cwd: &Path) -> io::Result<PathBuf> {
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(cwd.to_owned()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("`{}` is not a directory", cwd.display()),
        )),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("the directory `{}` cannot be used ({e})", cwd.display()),
        )),
    }
}
