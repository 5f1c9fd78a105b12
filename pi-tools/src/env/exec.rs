//! Running shell commands on this machine, for [`super::LocalEnv::exec`].
//!
//! The command runs under `bash -c` (or `sh -c` where there is no bash) in its own process
//! group, with stdin from `/dev/null` and stdout and stderr writing into one pipe, so their
//! output arrives in the order it was written. On timeout or cancellation the whole group
//! gets SIGKILL, so no grandchild outlives the call. Once the shell itself has exited, the
//! pipe gets a short grace period to drain; a background job that keeps it open does not
//! hold the call up. Such a job keeps running after the call (it may be a server the model
//! started on purpose) until [`kill_background_processes`] ends it.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::{ExecOutcome, ExecRequest};

/// How long the pipe may stay open after the shell has exited (or been killed).
pub(crate) const PIPE_GRACE: Duration = Duration::from_millis(100);

/// Process groups of the commands this process started that may still have members.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Remembers a command's process group, forgetting the groups that have emptied.
fn remember_group(pgid: i32) {
    let mut groups = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: signal 0 only checks that the group exists.
    groups.retain(|&g| unsafe { libc::killpg(g, 0) } == 0);
    groups.push(pgid);
}

/// Sends SIGKILL to the process groups of every command this process started, so that
/// background jobs (`sleep 100 &`) that outlived their calls do not outlive the process.
/// Call it when a program that ran commands is about to exit, as `pi-tools mcp` does at
/// the end of its session.
pub fn kill_background_processes() {
    let groups = std::mem::take(&mut *GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for pgid in groups {
        kill_group(Some(pgid));
    }
}

/// The shell commands run under: the first `bash` found, else `sh`.
pub(crate) fn shell() -> &'static Path {
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

/// Runs `request`, handing every chunk of merged output to `on_chunk`, until the shell exits
/// (plus [`PIPE_GRACE`]), the timeout passes or `cancel` fires.
pub(crate) async fn run(
    request: ExecRequest,
    cancel: CancellationToken,
    mut on_chunk: super::OutputSink,
    sandbox: Option<super::sandbox::ChildSandbox>,
) -> io::Result<ExecOutcome> {
    match std::fs::metadata(&request.cwd) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!(
                    "the working directory {} is not a directory",
                    request.cwd.display()
                ),
            ));
        }
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "the working directory {} does not exist or cannot be read ({e})",
                    request.cwd.display()
                ),
            ));
        }
    }

    let (reader, writer) = io::pipe()?;
    let mut command = Command::new(shell());
    command
        .arg("-c")
        .arg(&request.command)
        .current_dir(&request.cwd)
        .envs(request.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .process_group(0)
        .kill_on_drop(false);
    if let Some(sandbox) = sandbox {
        sandbox.install(&mut command);
    }
    let mut child = command.spawn()?;
    // The parent's copies of the pipe's write end must go, or the pipe never reports EOF.
    drop(command);
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pgid) = pgid {
        remember_group(pgid);
    }
    let mut output = pipe::Receiver::from_owned_fd(reader.into())?;

    let deadline = request.timeout.map(|t| tokio::time::Instant::now() + t);
    let sleep_until = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(sleep_until);

    let mut outcome = ExecOutcome::default();
    let mut buf = vec![0u8; 16 * 1024];
    let mut pipe_open = true;
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
            read = output.read(&mut buf), if pipe_open => match read {
                Ok(0) | Err(_) => pipe_open = false,
                Ok(n) => on_chunk(&buf[..n]),
            },
            status = child.wait() => break Some(status?),
        }
    };
    let status = match status {
        Some(status) => status,
        None => {
            kill_group(pgid);
            child.wait().await?
        }
    };

    // Drain what is left, but never wait long for a pipe a background job keeps open.
    let grace = tokio::time::sleep(PIPE_GRACE);
    tokio::pin!(grace);
    while pipe_open {
        tokio::select! {
            biased;
            read = output.read(&mut buf) => match read {
                Ok(0) | Err(_) => pipe_open = false,
                Ok(n) => on_chunk(&buf[..n]),
            },
            () = &mut grace => break,
        }
    }

    use std::os::unix::process::ExitStatusExt;
    outcome.exit_code = status.code();
    outcome.signal = status.signal();
    Ok(outcome)
}

/// Sends SIGKILL to every process of the group.
fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid.filter(|&p| p > 0) {
        // SAFETY: killpg only sends a signal; a group that is already gone yields ESRCH.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}
