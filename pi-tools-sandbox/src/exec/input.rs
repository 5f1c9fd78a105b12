//! A running job's input, for [`run`](super::run): bytes for its standard input (or its
//! terminal), closing it, and signals for its process group, in the order the job tools sent
//! them. Served by a task of its own, so a program that does not read its input never holds
//! up the reading of its output.

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;

use super::Control;

/// Where a job's input bytes go: the write end of its stdin pipe, or its terminal.
pub(crate) type InputWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// Serves `control` until the channel closes or the task is aborted (when the command has
/// ended): writes go to `writer` (dropped on `CloseInput` or a failed write: the program
/// closed its input), signals to the process group `pgid`.
pub(crate) fn serve(
    mut control: UnboundedReceiver<Control>,
    mut writer: Option<InputWriter>,
    pgid: i32,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(message) = control.recv().await {
            match message {
                Control::Input(bytes) => {
                    if let Some(w) = writer.as_mut()
                        && (w.write_all(&bytes).await.is_err() || w.flush().await.is_err())
                    {
                        writer = None;
                    }
                }
                Control::CloseInput => writer = None,
                Control::Signal(signal) => signal_group(pgid, signal),
            }
        }
    })
}

/// Sends `signal` to the process group `pgid` (none when `pgid` is not a process id); a
/// group that is gone yields ESRCH, which is fine.
fn signal_group(pgid: i32, signal: i32) {
    if pgid <= 0 {
        return;
    }
    let Some(group) = rustix::process::Pid::from_raw(pgid) else {
        return;
    };
    match rustix::process::Signal::from_named_raw(signal) {
        Some(signal) => {
            let _ = rustix::process::kill_process_group(group, signal);
        }
        // A real-time signal: rustix names none of them (they depend on the C library),
        // so this one stays libc's.
        None if signal > 0 => {
            // SAFETY: killpg only sends a signal.
            unsafe {
                libc::killpg(pgid, signal);
            }
        }
        None => {}
    }
}
