//! File work that cannot stall the tools.
//!
//! - **Kernel files are refused.** A file on a pseudo file system (procfs, sysfs, debugfs,
//!   tracefs, securityfs, configfs) can be a regular file whose read never ends
//!   (`/proc/kmsg`); the file tools refuse them, found by one `fstatfs` on the handle
//!   already open, unless `[paths] pseudo_files = true`.
//! - **Nothing waits on a read that may not end.** Files stay open with `O_NONBLOCK`, and a
//!   read that answers `EAGAIN` is refused with a sentence instead of retried.
//! - **Blocking work is bounded.** Every blocking file operation of [`LocalEnv`] and every
//!   read of a file it opened holds one of [`SLOTS`] permits until its thread is done (even
//!   when the call that asked for it is gone), so reads hung on a dead network mount take at
//!   most that many threads; a call that finds none free within [`WAIT`] fails with a
//!   sentence, and the other tools keep answering.
//!
//! [`LocalEnv`]: super::LocalEnv

use std::fs::File;
use std::future::Future;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

/// Blocking file operations (and open readers) at once, across the process.
pub(crate) const SLOTS: usize = 64;

/// How long a file operation waits for a free slot before it fails.
pub(crate) const WAIT: Duration = Duration::from_secs(5);

/// The most one read asks of the file at a time.
const CHUNK: usize = 2 * 1024 * 1024;

fn slots() -> &'static Arc<Semaphore> {
    static SLOTS_LEFT: std::sync::OnceLock<Arc<Semaphore>> = std::sync::OnceLock::new();
    SLOTS_LEFT.get_or_init(|| Arc::new(Semaphore::new(SLOTS)))
}

/// A slot for one blocking operation, or the error that says none came free.
pub(crate) async fn slot() -> io::Result<OwnedSemaphorePermit> {
    let semaphore = Arc::clone(slots());
    if let Ok(permit) = Arc::clone(&semaphore).try_acquire_owned() {
        return Ok(permit);
    }
    match tokio::time::timeout(WAIT, semaphore.acquire_owned()).await {
        Ok(Ok(permit)) => Ok(permit),
        _ => Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            format!(
                "the file tools are busy: {SLOTS} file operations have been running for over {} seconds (most likely reads of a file that never answers, such as one on an unreachable network mount). Try again later, or use bash with a timeout for such files",
                WAIT.as_secs()
            ),
        )),
    }
}

/// Runs `op` on a blocking thread holding a slot until it returns.
pub(crate) async fn run<T, F>(op: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> io::Result<T> + Send + 'static,
{
    let permit = slot().await?;
    tokio::task::spawn_blocking(move || {
        let result = op();
        drop(permit);
        result
    })
    .await
    .map_err(|err| io::Error::other(format!("a file operation failed to finish: {err}")))?
}

/// `(magic, name)` of the pseudo file systems the file tools stay out of.
const PSEUDO: [(u64, &str); 6] = [
    (0x9fa0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x6265_6570, "configfs"),
];

/// Refuses a file on a pseudo file system (one `fstatfs` on `fd`).
pub(crate) fn refuse_pseudo(path: &Path, fd: impl AsFd) -> io::Result<()> {
    let stat = rustix::fs::fstatfs(fd)?;
    #[allow(
        clippy::unnecessary_cast,
        clippy::useless_conversion,
        reason = "f_type is u64 on some targets and a signed or narrower integer on others, \
                  so the cast is needed here and there only (an `expect` would fail on one)"
    )]
    let magic = stat.f_type as u64;
    match PSEUDO.iter().find(|(m, _)| *m == magic) {
        None => Ok(()),
        Some((_, name)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is on {name}, a kernel file system whose files can block a reader forever, so the file tools do not read it. Use bash (e.g. `timeout 5 cat {}`), or allow such files with [paths] pseudo_files = true",
                path.display(),
                path.display()
            ),
        )),
    }
}

/// `err`, or for `EAGAIN` the sentence that says `path` would have blocked.
pub(crate) fn would_block(err: io::Error, path: &Path) -> io::Error {
    if err.kind() != io::ErrorKind::WouldBlock {
        return err;
    }
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!(
            "{} has no data to give now and a read would wait for it (a kernel or device file), so the file tools do not read it. Use bash with a timeout instead (e.g. `timeout 5 cat {}`).",
            path.display(),
            path.display()
        ),
    )
}

/// Reads all of `file` (opened with `O_NONBLOCK`), refusing it if it would block.
pub(crate) fn read_all(mut file: &File, path: &Path, capacity: usize) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(capacity);
    file.read_to_end(&mut bytes)
        .map_err(|e| would_block(e, path))?;
    Ok(bytes)
}

/// An open file read on blocking threads, each read holding the reader's slot, so a read
/// hung in the kernel keeps counting after the reader is dropped.
pub(crate) struct SlotReader {
    file: Arc<File>,
    path: Arc<Path>,
    permit: Arc<OwnedSemaphorePermit>,
    pending: Option<JoinHandle<io::Result<Vec<u8>>>>,
    buffered: Vec<u8>,
    pos: usize,
}

impl SlotReader {
    pub(crate) fn new(file: File, path: &Path, permit: OwnedSemaphorePermit) -> Self {
        SlotReader {
            file: Arc::new(file),
            path: Arc::from(path),
            permit: Arc::new(permit),
            pending: None,
            buffered: Vec::new(),
            pos: 0,
        }
    }
}

impl AsyncRead for SlotReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pos < this.buffered.len() {
                let n = (this.buffered.len() - this.pos).min(buf.remaining());
                buf.put_slice(&this.buffered[this.pos..this.pos + n]);
                this.pos += n;
                return Poll::Ready(Ok(()));
            }
            if let Some(pending) = this.pending.as_mut() {
                let done = ready!(Pin::new(pending).poll(cx));
                this.pending = None;
                let bytes = done.map_err(|err| {
                    io::Error::other(format!("a file read failed to finish: {err}"))
                })??;
                if bytes.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.buffered = bytes;
                this.pos = 0;
                continue;
            }
            if buf.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let want = buf.remaining().min(CHUNK);
            let file = Arc::clone(&this.file);
            let permit = Arc::clone(&this.permit);
            let path = Arc::clone(&this.path);
            let mut bytes = std::mem::take(&mut this.buffered);
            this.pending = Some(tokio::task::spawn_blocking(move || {
                bytes.clear();
                bytes.resize(want, 0);
                let n = (&*file)
                    .read(&mut bytes)
                    .map_err(|e| would_block(e, &path))?;
                bytes.truncate(n);
                drop(permit);
                Ok(bytes)
            }));
        }
    }
}
