//! The remote watchdog of commands run without the remote server (`exec.rs`): one SSH
//! session per connection running a small `sh` loop that is told the process group of every
//! such command that may still run (`+N`), and of every one that is done (`-N`). When its
//! input ends (the connection closes, drops, or this process goes, however it goes) it kills
//! the groups it still holds. sshd does not signal a session's processes when its channel
//! closes, so without it a command started with `setsid` would outlive a session whose end
//! could not kill it over the connection (a process that exits right after ending it, or
//! that is killed).

use std::sync::{Arc, Mutex};

use openssh::{Session, Stdio};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// The loop: `+N` adds group N, `-N` removes it; at the end of input every group held is
/// killed.
const SCRIPT: &str = r#"g=
while IFS= read -r l; do
  case $l in
    +*) g="$g ${l#+}" ;;
    -*) n=; for p in $g; do [ "$p" = "${l#-}" ] || n="$n $p"; done; g=$n ;;
  esac
done
for p in $g; do kill -KILL -"$p" 2>/dev/null; done"#;

/// The watchdog of one connection, started by the first command that needs it.
#[derive(Debug, Default)]
pub(super) struct Watchdog {
    lines: Mutex<Option<mpsc::UnboundedSender<String>>>,
}

impl Watchdog {
    /// Starts the remote loop if it does not run yet. Without it (it could not start)
    /// commands run as before, ended over the connection only.
    pub(super) async fn ensure(&self, session: &Arc<Session>) {
        if self.lock().as_ref().is_some_and(|s| !s.is_closed()) {
            return;
        }
        let spawned = Session::to_command(Arc::clone(session), "sh")
            .arg("-c")
            .arg(SCRIPT)
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
