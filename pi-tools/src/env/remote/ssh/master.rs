//! The SSH master connection as a child of this process that cannot outlive it.
//!
//! `ssh -M -f -o ControlPersist=yes` (how the `openssh` crate starts a master) forks the
//! master into the background, detached from its owner: a process that exits without
//! dropping its session (a runtime shut down in the background), or that is killed, leaves
//! the connection up for good. Here the master runs in the foreground (`-N`, no `-f`,
//! `ControlPersist=no`, `ForkAfterAuthentication=no`, so a user's ssh config cannot detach
//! it either), as a child with the parent-death signal set (`env/remote/owned.rs`): when
//! this process ends in any way (SIGKILL included), the kernel sends the master SIGTERM and
//! it closes the connection (the remote side then sees its input end). Dropping the
//! [`Master`] ends it at once. Sessions attach to its control socket with
//! [`Session::resume`], which never detaches anything.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use openssh::Session;
use rustix::process::{Pid, Signal};

use super::SshTarget;
use crate::env::remote::HostKeyPolicy;

/// How often the start waits to see the control socket appear (or the master fail).
const POLL: Duration = Duration::from_millis(10);

/// How long authentication may take beyond the connect timeout (an agent, a slow server).
const AUTH_GRACE: Duration = Duration::from_secs(30);

/// How long a master has to exit on SIGTERM before it gets SIGKILL.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// The prefix of the directories that hold a master's control socket and log.
const DIR_PREFIX: &str = "pi-tools-ssh-";

/// A running master connection, ended when dropped.
#[derive(Debug)]
pub(super) struct Master {
    child: Child,
    /// Holds the control socket and the log; removed after the master has exited.
    dir: PathBuf,
}

/// Why the master could not start: the text ssh logged, or what went wrong around it.
pub(super) struct StartError(pub(super) String);

impl Master {
    /// Starts the master and waits until its control socket accepts sessions (it appears
    /// once the connection is authenticated).
    pub(super) async fn start(target: &SshTarget) -> Result<Master, StartError> {
        let temp = std::env::temp_dir();
        remove_stale_dirs(&temp);
        let dir = make_dir(&temp).map_err(|e| {
            StartError(format!(
                "cannot make a directory in {}: {e}",
                temp.display()
            ))
        })?;
        let command = command(target, &control(&dir), &log(&dir));
        let child = match spawn_owned(command).await {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(StartError(format!("cannot start ssh: {e}")));
            }
        };
        let mut master = Master { child, dir };
        let deadline = Instant::now() + target.connect_timeout + AUTH_GRACE;
        loop {
            if let Ok(Some(_)) = master.child.try_wait() {
                let said = std::fs::read_to_string(log(&master.dir)).unwrap_or_default();
                return Err(StartError(said.trim().to_owned()));
            }
            if control(&master.dir).exists() {
                return Ok(master);
            }
            if Instant::now() > deadline {
                return Err(StartError(format!(
                    "the connection was not ready after {} s (timed out)",
                    (target.connect_timeout + AUTH_GRACE).as_secs()
                )));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// A session over this master (its commands and the SFTP channel go through it).
    pub(super) fn session(&self) -> Session {
        Session::resume(
            control(&self.dir).into_boxed_path(),
            Some(log(&self.dir).into_boxed_path()),
        )
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        self.end();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Master {
    /// Ends the master: SIGTERM lets ssh close the connection and remove its socket; a
    /// master that does not go in time is killed.
    fn end(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Some(pid) = i32::try_from(self.child.id()).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, Signal::TERM);
        }
        let deadline = Instant::now() + EXIT_WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A new directory only this user can enter, named after this process (so a later process
/// can tell whether its owner still runs).
fn make_dir(temp: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = temp.join(format!("{DIR_PREFIX}{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            // Left by an earlier process of the same id.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn control(dir: &Path) -> PathBuf {
    dir.join("master")
}

fn log(dir: &Path) -> PathBuf {
    dir.join("log")
}

/// The master's command line: what `ssh` would be given by hand, in the foreground.
fn command(target: &SshTarget, control: &Path, log: &Path) -> Command {
    let mut command = Command::new("ssh");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .arg("-E")
        .arg(log)
        .arg("-S")
        .arg(control)
        .args(["-M", "-N"])
        // Options given here win over the config file's: no background, whatever it says.
        // (`IgnoreUnknown` first, for an ssh older than ForkAfterAuthentication, 8.7.)
        .args(["-o", "ControlPersist=no"])
        .args(["-o", "IgnoreUnknown=ForkAfterAuthentication"])
        .args(["-o", "ForkAfterAuthentication=no"])
        .args(["-o", "BatchMode=yes"])
        .args(["-o", "ServerAliveInterval=15"])
        .arg("-o")
        .arg(match target.host_key_policy {
            HostKeyPolicy::Strict => "StrictHostKeyChecking=yes",
            HostKeyPolicy::AcceptNew => "StrictHostKeyChecking=accept-new",
            HostKeyPolicy::AcceptAny => "StrictHostKeyChecking=no",
        })
        .arg("-o")
        .arg(format!(
            "ConnectTimeout={}",
            target.connect_timeout.as_secs().max(1)
        ))
        // Its own process group: a terminal's Ctrl-C reaches this process, which ends the
        // session (and with it the master) in order.
        .process_group(0);
    if let Some(port) = target.port {
        command.arg("-p").arg(port.to_string());
    }
    if let Some(key) = &target.identity_file {
        command.args(["-o", "IdentitiesOnly=yes", "-i"]).arg(key);
    }
    if let Some(config) = &target.config_file {
        command.arg("-F").arg(config);
    }
    if let Some(known) = &target.known_hosts_file {
        let mut option = std::ffi::OsString::from("UserKnownHostsFile=");
        option.push(known);
        command.arg("-o").arg(option);
    }
    // `--` so a destination starting with `-` is not read as an option.
    command.arg("--").arg(&target.destination);
    command
}

/// Spawns `command` as a child that gets SIGTERM when this process ends (see
/// [`owned`](crate::env::remote::owned)).
async fn spawn_owned(mut command: Command) -> io::Result<Child> {
    // SAFETY: the hook makes only async-signal-safe system calls (prctl, getppid).
    unsafe {
        command.pre_exec(crate::env::remote::owned::death_signal(Signal::TERM));
    }
    crate::env::remote::owned::on_owner_thread(move || command.spawn()).await?
}

/// Removes the directories of masters whose owner no longer runs (it was killed, so it
/// could not remove them; the master died with it).
fn remove_stale_dirs(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix(DIR_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let mine = entry.metadata().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_dir() && m.uid() == rustix::process::getuid().as_raw()
        });
        if mine && !Path::new(&format!("/proc/{owner}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
