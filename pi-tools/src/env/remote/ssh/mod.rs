//! [`SshEnv`]: the tools on another machine, through OpenSSH.
//!
//! One master connection (the user's own `ssh`, so `~/.ssh/config` aliases, the agent and
//! known_hosts all apply) carries every call of a session: files go over SFTP; commands and
//! beside-the-files tool calls go to one long-lived `pi-tools env-server` on the remote
//! machine (`served.rs`, started by `helper.rs`), which runs each command as `LocalEnv`
//! does there, so no shell starts per call. Where the remote has no pi-tools of our version
//! (and none may be uploaded), each command runs in an SSH session of its own instead
//! (`exec.rs`), which runs the remote shell's startup files every time. What the remote
//! side needs: sshd with the SFTP subsystem, a POSIX shell and `setsid`.
//!
//! A connection that drops fails the call that was using it with a clear error; the next
//! call connects again (and starts the remote server again).

mod connection;
mod exec;
mod files;
mod helper;
mod helper_cache;
mod master;
mod served;
mod watchdog;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::Mutex;

use connection::Connection;
pub use connection::SshTarget;
use served::Served;

use crate::core::BoxFuture;
use crate::env::session_files::SessionFiles;
use crate::env::{DirEntry, ExecutionEnv, FileReader, Metadata, MutationQueue, OutputSink};

/// The execution environment of a remote machine reached over SSH.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use std::sync::Arc;
/// use pi_tools::env::ExecutionEnv;
/// use pi_tools::env::remote::{SshEnv, SshTarget};
/// let env: Arc<dyn ExecutionEnv> =
///     Arc::new(SshEnv::connect(SshTarget::parse("me@build-box").map_err(std::io::Error::other)?, "/srv/project").await?);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SshEnv {
    target: SshTarget,
    cwd: PathBuf,
    home: Option<PathBuf>,
    roots: Vec<PathBuf>,
    fsync: bool,
    queue: MutationQueue,
    /// The connection, shared with the environments made by [`session`](Self::session).
    conn: Arc<Mutex<Option<Arc<Connection>>>>,
    /// Process groups of commands started in this session that may still run (commands
    /// run without the remote server).
    groups: std::sync::Mutex<Vec<u32>>,
    /// The remote server, shared with the environments made by [`session`](Self::session).
    served: Arc<Mutex<ServedSlot>>,
    /// This session's id at the remote server (its background jobs are the session's).
    session_id: u64,
    /// Local files of this session (bash's spill files), deleted when it ends.
    session_files: SessionFiles,
    /// This session's jobs (they run on the remote machine, without input).
    jobs: crate::env::Jobs,
}

impl SshEnv {
    /// Connects to `target` and works in `cwd` there (an absolute remote path, or one
    /// relative to the remote home directory). Fails with a clear error when the host cannot
    /// be reached, its key is unknown, authentication fails, or `cwd` is not a directory.
    pub async fn connect(target: SshTarget, cwd: impl Into<PathBuf>) -> io::Result<Self> {
        let conn = Arc::new(target.connect().await?);
        let mut fs = conn.sftp.fs();
        let home = fs.canonicalize(".").await.ok();
        let cwd = cwd.into();
        let cwd = match (&home, cwd.is_absolute()) {
            (Some(home), false) => home.join(cwd),
            _ => cwd,
        };
        let host = target.host().to_owned();
        let meta = fs.metadata(&cwd).await.map_err(|e| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "the remote working directory {} on {host} cannot be used ({}); give an \
                     existing directory",
                    cwd.display(),
                    files::describe(&e)
                ),
            )
        })?;
        if !meta.file_type().is_some_and(|t| t.is_dir()) {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!(
                    "the remote working directory {} on {host} is not a directory; give an \
                     existing directory",
                    cwd.display()
                ),
            ));
        }
        Ok(SshEnv {
            target,
            cwd,
            home,
            roots: Vec::new(),
            fsync: true,
            queue: MutationQueue::new(),
            conn: Arc::new(Mutex::new(Some(conn))),
            groups: std::sync::Mutex::new(Vec::new()),
            served: Arc::new(Mutex::new(ServedSlot::Unknown)),
            session_id: next_session_id(),
            session_files: SessionFiles::default(),
            jobs: crate::env::Jobs::default(),
        })
    }

    /// Another session on the same connection, working directory, confinement and mutation
    /// queue, with background jobs of its own: ending it (or dropping it) kills only the
    /// remote jobs its own commands started. An MCP server gives each client session one.
    pub fn session(&self) -> SshEnv {
        SshEnv {
            target: self.target.clone(),
            cwd: self.cwd.clone(),
            home: self.home.clone(),
            roots: self.roots.clone(),
            fsync: self.fsync,
            queue: self.queue.clone(),
            conn: Arc::clone(&self.conn),
            groups: std::sync::Mutex::new(Vec::new()),
            served: Arc::clone(&self.served),
            session_id: next_session_id(),
            session_files: SessionFiles::default(),
            jobs: crate::env::Jobs::default(),
        }
    }

    /// Confines every operation to these remote directories (relative ones resolve against
    /// the working directory): a path whose canonical form is not inside one is refused.
    pub async fn with_allowed_roots<I, P>(mut self, roots: I) -> io::Result<Self>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let conn = self.connection().await?;
        for root in roots {
            let given = self.cwd.join(root.as_ref());
            let canonical = conn.sftp.fs().canonicalize(&given).await.map_err(|e| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "allowed root {} cannot be used on {}: {}",
                        given.display(),
                        self.target.host(),
                        files::describe(&e)
                    ),
                )
            })?;
            self.roots.push(canonical);
        }
        Ok(self)
    }

    /// Whether atomic writes fsync the new content before renaming it into place (default
    /// `true`; needs the server's `fsync@openssh.com` extension, which OpenSSH has).
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// The target this environment connects to.
    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    /// The live connection, connecting again if the last one was lost.
    async fn connection(&self) -> io::Result<Arc<Connection>> {
        let mut slot = self.conn.lock().await;
        if let Some(conn) = slot.as_ref() {
            return Ok(Arc::clone(conn));
        }
        let conn = Arc::new(self.target.connect().await?);
        *slot = Some(Arc::clone(&conn));
        Ok(conn)
    }

    /// Forgets `conn` after it failed, so the next call connects again.
    async fn lost(&self, conn: &Arc<Connection>) {
        let mut slot = self.conn.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn)) {
            *slot = None;
        }
    }

    /// The remote server, started on first use and again after it was lost; `None` where
    /// the remote has no pi-tools to serve (then each command gets an SSH session).
    async fn served(&self) -> Option<Arc<Served>> {
        let mut slot = self.served.lock().await;
        match &*slot {
            ServedSlot::Absent => return None,
            ServedSlot::Live(served) if served.is_alive() => return Some(Arc::clone(served)),
            _ => {}
        }
        let conn = self.connection().await.ok()?;
        match self.start_served(&conn).await {
            Ok(Some(served)) => {
                let served = Arc::new(served);
                *slot = ServedSlot::Live(Arc::clone(&served));
                Some(served)
            }
            Ok(None) => {
                *slot = ServedSlot::Absent;
                None
            }
            // Perhaps the connection dropped: the call goes on without, and fails or not
            // on its own; the next call tries again.
            Err(_) => {
                if conn.session.check().await.is_err() {
                    self.lost(&conn).await;
                }
                *slot = ServedSlot::Unknown;
                None
            }
        }
    }

    /// After a call through `served` failed with a lost link: forgets the connection too
    /// when it is the master connection that dropped.
    async fn served_lost(&self, err: &io::Error) {
        if err.kind() != io::ErrorKind::ConnectionAborted {
            return;
        }
        let live = self.conn.lock().await.clone();
        if let Some(conn) = live
            && conn.session.check().await.is_err()
        {
            self.lost(&conn).await;
        }
    }

    /// Whether commands of this environment run through a long-lived remote pi-tools
    /// process (`true`), or in an SSH session each (`false`, where the remote has no
    /// pi-tools of this version and none may be uploaded; each then runs the remote
    /// shell's startup files). Starts the remote process if it is not running.
    pub async fn uses_remote_server(&self) -> bool {
        self.served().await.is_some()
    }

    /// Ends this session's remote background jobs through the server, from synchronous code.
    fn end_served_session_blocking(&self) {
        // Most often there is no server (or none yet): nothing to end, no thread to start.
        if let Ok(slot) = self.served.try_lock()
            && slot.live().is_none()
        {
            return;
        }
        let session = self.session_id;
        // A single-threaded runtime blocked here cannot send the request, nor let go of the
        // server's slot: the request goes out when the runtime runs again, without waiting
        // for the answer, and only if the slot is free now.
        let patience = match tokio::runtime::Handle::try_current() {
            Ok(handle)
                if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread =>
            {
                std::time::Duration::ZERO
            }
            _ => std::time::Duration::from_secs(5),
        };
        let slot = Arc::clone(&self.served);
        block_on_own_thread(|| async move {
            // The slot is held only for a moment (or while the server starts), but another
            // session of the same connection may be ending at this very moment: wait for it
            // rather than leave this session's jobs running.
            // (The timeout tries the lock once even with no patience.)
            let live = tokio::time::timeout(patience, slot.lock())
                .await
                .ok()
                .and_then(|slot| slot.live());
            if let Some(live) = live {
                live.end_session(session, patience).await;
            }
        });
    }
}

/// Runs the future `work` makes to its end, from synchronous code (ending a session,
/// dropping the environment), on a thread of its own with a runtime of its own: that works
/// inside a runtime as well as outside one. Nothing runs when no runtime can be built.
fn block_on_own_thread<F: Future<Output = ()>>(work: impl FnOnce() -> F + Send) {
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(work());
        });
    });
}

/// What is known of the remote server.
#[derive(Debug)]
enum ServedSlot {
    /// Not started yet, or lost: the next call starts it.
    Unknown,
    /// The remote has no pi-tools to serve.
    Absent,
    Live(Arc<Served>),
}

impl ServedSlot {
    /// The server, when it runs.
    fn live(&self) -> Option<Arc<Served>> {
        match self {
            ServedSlot::Live(served) if served.is_alive() => Some(Arc::clone(served)),
            _ => None,
        }
    }
}

fn next_session_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl ExecutionEnv for SshEnv {
    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn allowed_roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn mutation_queue(&self) -> &MutationQueue {
        &self.queue
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            files::read(&conn.sftp, &path).await
        }))
    }

    fn open_read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileReader>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            files::open_read(&conn.sftp, &path).await
        }))
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: Vec<u8>) -> BoxFuture<'a, io::Result<()>> {
        let fsync = self.fsync;
        Box::pin(self.with_sftp(path, move |conn, path| async move {
            files::atomic_write(&conn.sftp, &path, &data, fsync, None).await
        }))
    }

    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Metadata>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            files::metadata(&conn.sftp, &path).await
        }))
    }

    fn list_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<DirEntry>>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            files::list_dir(&conn.sftp, &path).await
        }))
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            files::create_dir_all(&conn.sftp, &path).await
        }))
    }

    /// Over SFTP, after the same confinement check as every file operation.
    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            conn.sftp
                .fs()
                .remove_file(&path)
                .await
                .map_err(files::io_error)
        }))
    }

    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>> {
        Box::pin(self.with_sftp(path, |conn, path| async move {
            conn.sftp
                .fs()
                .canonicalize(&path)
                .await
                .map_err(files::io_error)
        }))
    }

    fn run_beside_files<'a>(
        &'a self,
        tool: &'a str,
        arguments: serde_json::Value,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Option<BoxFuture<'a, io::Result<crate::core::ToolResultMessage>>> {
        // A confined environment works through its own file operations, which check every
        // path against the allowed roots; the remote side knows none.
        if !self.roots.is_empty() {
            return None;
        }
        Some(Box::pin(async move {
            let Some(served) = self.served().await else {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "{} has no pi-tools {} to run the call",
                        self.target.host(),
                        env!("CARGO_PKG_VERSION")
                    ),
                ));
            };
            let result = served.call(tool, self.cwd.clone(), arguments, cancel).await;
            if let Err(err) = &result {
                self.served_lost(err).await;
            }
            result
        }))
    }

    fn exec<'a>(
        &'a self,
        request: crate::env::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: OutputSink,
    ) -> BoxFuture<'a, io::Result<crate::env::ExecOutcome>> {
        Box::pin(self.run_command(request, cancel, on_chunk, None))
    }

    fn exec_with_stderr<'a>(
        &'a self,
        request: crate::env::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: OutputSink,
        on_stderr: OutputSink,
    ) -> BoxFuture<'a, io::Result<crate::env::ExecOutcome>> {
        Box::pin(self.run_command(request, cancel, on_chunk, Some(on_stderr)))
    }

    fn jobs(&self) -> Option<&crate::env::Jobs> {
        Some(&self.jobs)
    }

    fn end_session(&self) {
        self.jobs.end_all();
        self.end_served_session_blocking();
        self.kill_remote_jobs_blocking();
        self.session_files.remove_all();
    }

    fn remove_at_session_end(&self, path: PathBuf) {
        self.session_files.keep(path);
    }
}

impl Drop for SshEnv {
    /// Nothing can end the session's remote jobs once the environment is gone, so they end
    /// with it.
    fn drop(&mut self) {
        self.jobs.end_all();
        self.end_served_session_blocking();
        self.kill_remote_jobs_blocking();
        self.session_files.remove_all();
    }
}

impl SshEnv {
    /// Runs a command through the remote server, or in an SSH session of its own where
    /// there is none.
    async fn run_command(
        &self,
        request: crate::env::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: OutputSink,
        on_stderr: Option<OutputSink>,
    ) -> io::Result<crate::env::ExecOutcome> {
        let conn = self.connection().await?;
        self.check_allowed(&conn, &request.cwd).await?;
        if let Some(served) = self.served().await {
            let result = served
                .exec(self.session_id, request, cancel, on_chunk, on_stderr)
                .await;
            if let Err(err) = &result {
                self.served_lost(err).await;
            }
            return result;
        }
        let conn = self.connection().await?;
        let result = exec::run(self, &conn, request, cancel, on_chunk).await;
        if let Err(err) = &result
            && err.kind() == io::ErrorKind::ConnectionAborted
        {
            self.lost(&conn).await;
        }
        result
    }
}
