//! The remote watchdog of commands run without the remote server (`exec.rs`): one SSH
//! session per connection running a small `sh` loop that is told the process group of every
//! such command that may still run (`+N`), and of every one that is done (`-N`). When its
//! input ends (the connection closes, drops, or this process goes, however it goes) it kills
//! the groups it still holds, then every process that carries the connection's mark
//! (`PI_TOOLS_SSH_JOB`, in every command's environment; found in `/proc` where the remote
//! has one),
//! so a process that left its command's group (`setsid`, a double fork) goes too. sshd does
//! not signal a session's processes when its channel closes, so without it a command started
//! with `setsid` would outlive a session whose end could not kill it over the connection (a
//! process that exits right after ending it, or that is killed).

use std::sync::{Arc, Mutex};

use openssh::{Session, Stdio};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// The loop: `+N` adds group N, `-N` removes it; at the end of input every group held is
/// killed, then (twice, for what forked meanwhile) every process whose environment holds
/// `PI_TOOLS_SSH_JOB=$1`. The loop itself does not carry the mark. Where grep reads
/// NUL-separated lines (`-z`: GNU, BusyBox), one grep finds them all; elsewhere each
/// environment is read by a `tr | grep` of its own, two processes a process, which on a busy
/// host takes seconds.
const SCRIPT: &str = r#"g=
while IFS= read -r l; do
  case $l in
    +*) g="$g ${l#+}" ;;
    -*) n=; for p in $g; do [ "$p" = "${l#-}" ] || n="$n $p"; done; g=$n ;;
  esac
done
for p in $g; do kill -KILL -"$p" 2>/dev/null; done
z=; printf 'x\000' | grep -qzx x 2>/dev/null && z=1
for r in 1 2; do
  if [ -n "$z" ]; then
    for e in $(grep -lzx "PI_TOOLS_SSH_JOB=$1" /proc/[0-9]*/environ 2>/dev/null); do
      q=${e#/proc/}; kill -KILL "${q%/environ}" 2>/dev/null
    done
    continue
  fi
  for e in /proc/[0-9]*/environ; do
    tr '\000' '\n' <"$e" 2>/dev/null | grep -qx "PI_TOOLS_SSH_JOB=$1" || continue
    q=${e#/proc/}; kill -KILL "${q%/environ}" 2>/dev/null
  done
done"#;

/// The watchdog of one connection, started by the first command that needs it.
#[derive(Debug)]
pub(super) struct Watchdog {
    lines: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// The value of `PI_TOOLS_SSH_JOB` in the environment of this connection's commands.
    mark: String,
}

impl Default for Watchdog {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // Letters and digits only: it is matched by the remote shell.
        Watchdog {
            lines: Mutex::default(),
            mark: format!("{}x{nanos}x{n}", std::process::id()),
        }
    }
}

impl Watchdog {
    /// The mark this connection's commands carry in `PI_TOOLS_SSH_JOB`.
    pub(super) fn mark(&self) -> &str {
        &self.mark
    }

    /// Starts the remote loop if it does not run yet. Without it (it could not start)
    /// commands run as before, ended over the connection only.
    pub(super) async fn ensure(&self, session: &Arc<Session>) {
        if self.lock().as_ref().is_some_and(|s| !s.is_closed()) {
            return;
        }
        let spawned = Session::to_command(Arc::clone(session), "sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("pi-tools-watchdog")
            .arg(&self.mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .await;
        let Ok(mut child) = spawned else { return };
        let Some(mut stdin) = child.stdin().take() else {
            return;
        };
        let (lines, mut queue) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = queue.recv().await {
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
            // The end of its input: the remote loop kills what it holds.
            drop(stdin);
            let _ = child.wait().await;
        });
        *self.lock() = Some(lines);
    }

    /// The command of process group `pgid` may run on: to be killed if the connection ends.
    pub(super) fn hold(&self, pgid: u32) {
        self.send(format!("+{pgid}\n"));
    }

    /// The process group `pgid` is done (or killed): not to be killed again.
    pub(super) fn release(&self, pgid: u32) {
        self.send(format!("-{pgid}\n"));
    }

    fn send(&self, line: String) {
        if let Some(lines) = self.lock().as_ref() {
            let _ = lines.send(line);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<mpsc::UnboundedSender<String>>> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner())
    }
}
