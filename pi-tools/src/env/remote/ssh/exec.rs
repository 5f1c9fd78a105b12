//! Running a command on the remote machine for [`SshEnv::exec`](super::SshEnv).
//!
//! The command runs under a small POSIX `sh` wrapper: it enters the working directory, then
//! starts the command in a session of its own (`setsid`), under bash where the remote has
//! it, with stdin from `/dev/null` and stderr merged into stdout, as locally. The wrapper
//! reports on its own stderr the command's process group (`pgid N`) and, once it has
//! finished, its status (`status N`), so a timeout or a cancellation kills exactly that
//! group with `kill -KILL -N` over the same connection, and a background job that keeps
//! the output open does not hold the call up.
//!
//! The remote login shell may print things of its own (rc files run for every SSH command):
//! the command's output starts after a marker line, and whatever comes before it is dropped.
//! The command itself runs without `SSH_CLIENT`, so bash does not read `~/.bashrc` for it,
//! as locally.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use openssh::{Session, Stdio};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::SshEnv;
use super::connection::Connection;
use crate::env::{ExecOutcome, ExecRequest, OutputSink};

/// How long the output may stay open after the command has finished (as locally).
const PIPE_GRACE: Duration = Duration::from_millis(100);

/// The wrapper: `$1` is the working directory, `$2` the command, `$3` the connection's
/// mark, which the command's processes carry for the watchdog (`watchdog.rs`).
///
/// The session runs as a background job of the wrapper, so `setsid` needs no fork and the
/// job's pid is the group's id; once it has exited, the wrapper says `alive` when processes
/// of the group (background jobs) still run, so only such groups are kept for the end of
/// the session (a group id of a finished command may be reused by anything).
const WRAPPER: &str = r#"cd -- "$1" 2>/dev/null || { echo "cwd" >&2; exit 126; }
unset SSH_CLIENT SSH2_CLIENT
export PI_TOOLS_SSH_JOB="$3"
setsid sh -c 'echo "pgid $$" >&2; printf "\036pi-tools-start\n"; exec 2>&1; if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; else exec sh -c "$1"; fi' sh "$2" </dev/null &
p=$!
wait "$p"
s=$?
kill -0 "-$p" 2>/dev/null && echo "alive" >&2
echo "status $s" >&2"#;

/// The line the wrapper prints on stdout just before the command starts.
const START: &[u8] = b"\x1epi-tools-start\n";

/// Passes on the command's output, dropping what the login shell printed before [`START`].
struct Output {
    started: bool,
    pending: Vec<u8>,
}

impl Output {
    fn feed(&mut self, chunk: &[u8], sink: &mut OutputSink) {
        if self.started {
            sink(chunk);
            return;
        }
        self.pending.extend_from_slice(chunk);
        if let Some(at) = memchr::memmem::find(&self.pending, START) {
            self.started = true;
            let rest = self.pending.split_off(at + START.len());
            self.pending = Vec::new();
            if !rest.is_empty() {
                sink(&rest);
            }
        } else if self.pending.len() > 64 * 1024 {
            // Noise only: keep just enough to find a marker split across chunks.
            let keep = self.pending.split_off(self.pending.len() - START.len());
            self.pending = keep;
        }
    }
}

/// Quotes `value` for a POSIX shell.
pub(super) fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The script `sh -c` runs: the request's environment, exported, then [`WRAPPER`]. Refuses
/// a NUL byte (no shell command can hold one) and a variable name a shell cannot export.
fn script(request: &ExecRequest) -> io::Result<String> {
    if request.command.contains('\0') || request.cwd.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the command contains a NUL byte, which no shell command can hold; remove it",
        ));
    }
    let mut script = String::new();
    for (key, value) in &request.env {
        if !valid_name(key) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{key}` is not a valid environment variable name"),
            ));
        }
        script.push_str(&format!("export {key}={}\n", quote(value)));
    }
    script.push_str(WRAPPER);
    Ok(script)
}

/// What the wrapper has reported on its stderr so far.
#[derive(Default)]
struct Reports {
    /// The command's process group.
    pgid: Option<u32>,
    /// Processes of the group still ran when the command had finished.
    alive: bool,
    /// The command's exit status, once it has finished.
    status: Option<i32>,
}

/// One line of the wrapper's stderr, as [`Reports::take`] read it.
enum Report {
    /// Nothing the call waits on (a group id, `alive`, or noise).
    Noted,
    /// The command has finished.
    Finished,
    /// The working directory does not exist.
    NoCwd,
}

impl Reports {
    /// Reads `line`: a group is remembered in `env` (to end with the session) until the
    /// command finishes with nothing of it left running.
    fn take(&mut self, env: &SshEnv, conn: &Connection, line: &str) -> Report {
        if let Some(n) = line.strip_prefix("pgid ") {
            self.pgid = n.trim().parse().ok();
            if let Some(g) = self.pgid {
                env.remember_group(g);
                conn.watchdog.hold(g);
            }
        } else if line == "alive" {
            self.alive = true;
        } else if let Some(n) = line.strip_prefix("status ") {
            self.status = n.trim().parse().ok();
            if let (Some(g), false) = (self.pgid, self.alive) {
                env.forget_group(g);
                conn.watchdog.release(g);
            }
            return Report::Finished;
        } else if line == "cwd" {
            return Report::NoCwd;
        }
        Report::Noted
    }
}

/// Starts the wait for the output to close, ending the call `after` from now, unless it
/// has started already.
fn start_grace(grace: std::pin::Pin<&mut tokio::time::Sleep>, started: &mut bool, after: Duration) {
    if !*started {
        *started = true;
        grace.reset(tokio::time::Instant::now() + after);
    }
}

pub(super) async fn run(
    env: &SshEnv,
    conn: &Arc<Connection>,
    request: ExecRequest,
    cancel: CancellationToken,
    mut on_chunk: OutputSink,
) -> io::Result<ExecOutcome> {
    let script = script(&request)?;
    let cwd = request.cwd.to_string_lossy().into_owned();
    // So that the command does not outlive a connection whose end cannot kill it.
    conn.watchdog.ensure(&conn.session).await;
    let mut child = Session::to_command(Arc::clone(&conn.session), "sh")
        .arg("-c")
        .arg(&script)
        .arg("pi-tools")
        .arg(&cwd)
        .arg(&request.command)
        .arg(conn.watchdog.mark())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .await
        .map_err(|e| lost(env, e))?;
    let mut stdout = child.stdout().take().expect("stdout is piped");
    let stderr = child.stderr().take().expect("stderr is piped");
    let mut control = BufReader::new(stderr).lines();

    let timeout = request.timeout.map(|t| tokio::time::sleep(t));
    tokio::pin!(timeout);
    let mut buf = vec![0u8; 64 * 1024];
    let mut output = Output {
        started: false,
        pending: Vec::new(),
    };
    let mut reports = Reports::default();
    let mut outcome = ExecOutcome::default();
    let mut stdout_open = true;
    let mut control_open = true;
    let grace = tokio::time::sleep(Duration::MAX / 4);
    tokio::pin!(grace);
    let mut in_grace = false;

    loop {
        if !stdout_open && (reports.status.is_some() || !control_open) {
            break;
        }
        tokio::select! {
            read = stdout.read(&mut buf), if stdout_open => match read {
                Ok(0) | Err(_) => stdout_open = false,
                Ok(n) => output.feed(&buf[..n], &mut on_chunk),
            },
            line = control.next_line(), if control_open => match line {
                Ok(Some(line)) => match reports.take(env, conn, &line) {
                    Report::Noted => {}
                    Report::Finished => start_grace(grace.as_mut(), &mut in_grace, PIPE_GRACE),
                    Report::NoCwd => {
                        let _ = child.disconnect().await;
                        return Err(no_cwd(&cwd, env.target.host()));
                    }
                },
                Ok(None) | Err(_) => control_open = false,
            },
            () = &mut grace, if in_grace => break,
            () = cancel.cancelled(), if !outcome.aborted && !outcome.timed_out => {
                outcome.aborted = true;
                kill(conn, reports.pgid).await;
                start_grace(grace.as_mut(), &mut in_grace, Duration::from_secs(2));
            }
            () = async { match timeout.as_mut().as_pin_mut() { Some(t) => t.await, None => std::future::pending().await } },
                if !outcome.aborted && !outcome.timed_out => {
                outcome.timed_out = true;
                kill(conn, reports.pgid).await;
                start_grace(grace.as_mut(), &mut in_grace, Duration::from_secs(2));
            }
        }
    }
    // Done with this command; a background job may still hold the channel open, so the
    // local handle is let go rather than waited for.
    let _ = child.disconnect().await;
    finished(env, reports.status, outcome)
}

/// The error for a working directory `cwd` the wrapper could not enter on `host`.
fn no_cwd(cwd: &str, host: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("the working directory {cwd} does not exist or cannot be read on {host}"),
    )
}

/// The outcome of a command that ended with `status` (none: the wrapper never said), or was
/// killed for a timeout or a cancellation; an error when the connection was lost.
fn finished(
    env: &SshEnv,
    status: Option<i32>,
    mut outcome: ExecOutcome,
) -> io::Result<ExecOutcome> {
    match status {
        Some(code) if code > 128 => outcome.signal = Some(code - 128),
        Some(code) => outcome.exit_code = Some(code),
        None if outcome.aborted || outcome.timed_out => outcome.signal = Some(libc::SIGKILL),
        None => {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!(
                    "the SSH connection to {} was lost while the command ran; its output so far \
                     is above. Retry the call, which connects again",
                    env.target.host()
                ),
            ));
        }
    }
    if outcome.aborted || outcome.timed_out {
        outcome.exit_code = None;
        outcome.signal = Some(libc::SIGKILL);
    }
    Ok(outcome)
}

/// Kills the remote process group `pgid` (every process of the command's session).
async fn kill(conn: &Arc<Connection>, pgid: Option<u32>) {
    if let Some(pgid) = pgid {
        kill_groups(conn, &[pgid]).await;
    }
}

/// Kills the remote process groups `pgids`, with one remote command.
async fn kill_groups(conn: &Arc<Connection>, pgids: &[u32]) {
    if pgids.is_empty() {
        return;
    }
    // No `--` before the negative ids: dash's kill refuses it, and with the signal given
    // first every shell reads them as process groups.
    let _ = Session::to_command(Arc::clone(&conn.session), "kill")
        .arg("-KILL")
        .args(pgids.iter().map(|pgid| format!("-{pgid}")))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    for pgid in pgids {
        conn.watchdog.release(*pgid);
    }
}

fn lost(env: &SshEnv, err: openssh::Error) -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        format!(
            "could not start the command on {}: {err}; retry the call, which connects again",
            env.target.host()
        ),
    )
}

impl SshEnv {
    fn remember_group(&self, pgid: u32) {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(pgid);
    }

    /// Kills the remote process groups of every command this environment started (their
    /// background jobs included), as a session ends.
    pub async fn kill_remote_jobs(&self) {
        let groups = self.take_groups();
        if groups.is_empty() {
            return;
        }
        let Ok(conn) = self.connection().await else {
            return;
        };
        kill_groups(&conn, &groups).await;
    }

    fn forget_group(&self, pgid: u32) {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|g| *g != pgid);
    }

    fn take_groups(&self) -> Vec<u32> {
        std::mem::take(&mut *self.groups.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// [`kill_remote_jobs`](Self::kill_remote_jobs) from synchronous code (ending a session,
    /// dropping the environment), finished before it returns, so the process may exit right
    /// after. It runs on a thread of its own with a runtime of its own, which works inside a
    /// runtime as well as outside one; it uses the live connection (a lost one is replaced
    /// by a connection just for this, not kept, as its tasks end with this runtime).
    pub(super) fn kill_remote_jobs_blocking(&self) {
        let groups = self.take_groups();
        if groups.is_empty() {
            return;
        }
        let live = self.conn.try_lock().ok().and_then(|slot| slot.clone());
        super::block_on_own_thread(|| async {
            let conn = match live {
                Some(conn) => conn,
                None => match self.target.connect().await {
                    Ok(conn) => Arc::new(conn),
                    Err(_) => return,
                },
            };
            kill_groups(&conn, &groups).await;
        });
    }
}
