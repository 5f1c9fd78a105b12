//! [`LocalEnv`]: the execution environment of this machine, optionally confined to a set of
//! directories.
//!
//! Every file operation opens its path through `Roots`: when the environment is confined,
//! relative to a held handle of an allowed root, so the kernel refuses an escape at open
//! time (see `beneath.rs`). Only regular files are read or replaced, opened without
//! blocking, never on a kernel file system, and the blocking work is bounded (see
//! `blocking.rs`); replacing one goes through `replace.rs`.
//!
//! It is also the environment of tools given none ([`process_env`]).

mod beneath;
mod blocking;
mod fallback;
mod open;
mod remove;
mod replace;
#[cfg(feature = "process")]
mod sandbox_notes;
mod stat;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(feature = "process")]
use pi_tools_sandbox::procs::{ProcessTracking, Tracker};
use pi_tools_sandbox::{Sandbox, SandboxPolicy};
use rustix::fs::{Mode, OFlags};

use crate::core::BoxFuture;
use crate::env::path::{canonical_lenient_sync, follow_final_links};
use crate::env::session_files::SessionFiles;
use crate::env::{
    DirEntry, ExecutionEnv, FileChange, FileHead, FileReader, Metadata, MutationQueue, SearchIndex,
};
use blocking::SlotReader;
use open::{canonicalize_of, create_dir_all_of, open_regular, read_head_of};
use replace::Target;
use stat::{list_dir_of, metadata_of};

#[cfg(feature = "builtins")]
pub(crate) use beneath::open_beneath;
pub(crate) use beneath::{Last, Roots};
pub use fallback::process_env;

/// The local file system and local processes.
///
/// The environment owns the processes its commands start: those a command leaves running
/// in the background outlive the call, but not the environment. [`ExecutionEnv::end_session`]
/// ends them, and so does dropping the environment.
///
/// ```
/// use std::sync::Arc;
/// use pi_tools::env::ExecutionEnv;
/// use pi_tools::env::local::LocalEnv;
/// let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new("/tmp"));
/// assert!(env.is_local());
/// ```
#[derive(Debug)]
pub struct LocalEnv {
    cwd: PathBuf,
    home: Option<PathBuf>,
    roots: Arc<Roots>,
    fsync: bool,
    /// Whether files on kernel file systems (procfs, sysfs, ...) may be read.
    pseudo_files: bool,
    queue: MutationQueue,
    #[cfg(feature = "process")]
    processes: Tracker,
    sandbox: Option<Sandbox>,
    /// Files to delete when the session ends (bash's spill files).
    session_files: SessionFiles,
    /// When grep and find keep a search index of the working directory.
    search_index: SearchIndex,
    /// The session's jobs (commands handed back to the model while they run).
    jobs: crate::env::Jobs,
}

impl LocalEnv {
    /// An unconfined environment whose relative paths resolve against `cwd` (made absolute
    /// against the process's current directory if it is relative).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        let cwd = if cwd.is_absolute() {
            cwd
        } else {
            std::env::current_dir().map(|d| d.join(&cwd)).unwrap_or(cwd)
        };
        LocalEnv {
            cwd,
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
                .or_else(std::env::home_dir),
            roots: Arc::new(Roots::default()),
            fsync: true,
            pseudo_files: false,
            queue: MutationQueue::new(),
            #[cfg(feature = "process")]
            processes: Tracker::new(ProcessTracking::Auto),
            sandbox: None,
            session_files: SessionFiles::default(),
            search_index: SearchIndex::WhenReused,
            jobs: crate::env::Jobs::default(),
        }
    }

    /// When grep and find keep a trigram index of the working directory's files, kept up to
    /// date with the files; without it every search reads every file. Results are the same
    /// either way. The default, [`SearchIndex::WhenReused`], builds it when the directory is
    /// searched a second time; `true` ([`SearchIndex::Always`]) at the first search, for a
    /// long-lived session; `false` never.
    pub fn with_search_index(mut self, when: impl Into<SearchIndex>) -> Self {
        self.search_index = when.into();
        self
    }

    /// Confines every file operation to these directories: a path whose real location
    /// (symbolic links resolved) is not inside one of them is refused, and the kernel
    /// enforces it when the file is opened (see [the safety document](https://github.com/pi-tools/pi-tools/blob/main/docs/safety.md)). Fails if a
    /// root does not exist.
    pub fn with_allowed_roots<I, P>(mut self, roots: I) -> io::Result<Self>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let all = Arc::get_mut(&mut self.roots).ok_or_else(|| {
            io::Error::other("allowed roots can only be set before the environment is shared")
        })?;
        for root in roots {
            all.add(self.cwd.join(root.as_ref()))?;
        }
        Ok(self)
    }

    /// Sets the home directory `~` expands to.
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Whether atomic writes flush the new content to disk before renaming it into place
    /// (default `true`: after a crash the file holds the old or the new content, never an
    /// empty one). Turning it off trades that for speed on slow disks.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    /// Whether the file tools may read files on kernel file systems (procfs, sysfs,
    /// debugfs, tracefs, securityfs, configfs; default `false`): some of them block a reader
    /// forever, such as `/proc/kmsg`. Reads stay non-blocking either way.
    pub fn with_pseudo_files(mut self, allowed: bool) -> Self {
        self.pseudo_files = allowed;
        self
    }

    /// How the processes of commands are found (default [`ProcessTracking::Auto`]: a
    /// cgroup per command where the system allows it, else a scan of `/proc`).
    #[cfg(feature = "process")]
    pub fn with_process_tracking(mut self, tracking: ProcessTracking) -> Self {
        self.processes = Tracker::new(tracking);
        self
    }

    /// Runs a command for `exec` and `exec_with_stderr`: in an allowed directory, with the
    /// sandbox's private TMPDIR.
    #[cfg(feature = "process")]
    async fn run_command(
        &self,
        mut request: crate::env::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: crate::env::OutputSink,
        on_stderr: Option<crate::env::OutputSink>,
        input: Option<crate::env::JobInput>,
    ) -> io::Result<crate::env::ExecOutcome> {
        self.check_allowed(&request.cwd)?;
        let tracker = &self.processes;
        let Some(sandbox) = &self.sandbox else {
            return pi_tools_sandbox::exec::run(
                request, cancel, on_chunk, on_stderr, tracker, None, input,
            )
            .await;
        };
        if let Some(tmp) = sandbox.tmp_dir() {
            request
                .env
                .push(("TMPDIR".to_owned(), tmp.display().to_string()));
        }
        let (notes, on_chunk) = sandbox_notes::CallNotes::wrap(on_chunk);
        sandbox.before_call();
        let outcome = pi_tools_sandbox::exec::run(
            request,
            cancel,
            on_chunk,
            on_stderr,
            tracker,
            Some(sandbox),
            input,
        )
        .await;
        let still_running = sandbox.guards_calls() && self.processes.any_alive();
        notes.finish(sandbox, outcome, still_running)
    }

    /// Refuses a path outside the allowed roots (no-op when unconfined). A check only: the
    /// file operations themselves open paths beneath the roots and do not rely on it.
    pub fn check_allowed(&self, path: &Path) -> io::Result<()> {
        if !self.roots.is_confined() {
            return Ok(());
        }
        match self.roots.open(
            &self.absolute(path),
            OFlags::PATH,
            Mode::empty(),
            Last::Follow,
        ) {
            Ok(_) => Ok(()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                // Not there yet: where would it be?
                let canonical = canonical_lenient_sync(&follow_final_links(path)?)?;
                if self
                    .roots
                    .canonical()
                    .iter()
                    .any(|root| canonical.starts_with(root))
                {
                    Ok(())
                } else {
                    self.roots
                        .open(&canonical, OFlags::PATH, Mode::empty(), Last::Follow)
                        .map(drop)
                }
            }
            Err(err) if err.kind() == io::ErrorKind::PermissionDenied => Err(err),
            Err(_) => Ok(()),
        }
    }

    /// The single place where a write or edit asks whether it may replace `real_path` (the
    /// target's real location, links resolved), after confinement and before anything is
    /// written: the sandbox's writable roots and protected paths, the same rules bash gets
    /// from the kernel.
    fn check_write(&self, real_path: &Path) -> io::Result<()> {
        self.sandbox
            .as_ref()
            .map_or(Ok(()), |s| s.check_write(real_path))
    }

    /// Confines commands and writes by `policy` (resolved here against the working
    /// directory): `exec` applies it in the child before the command starts, `write_file`,
    /// `modify_file` and `create_dir_all` refuse what it refuses. Fails when a writable root
    /// does not exist or the private temporary directory cannot be made.
    pub fn with_sandbox(mut self, policy: SandboxPolicy) -> io::Result<Self> {
        self.sandbox = Some(policy.resolve(&self.cwd)?);
        Ok(self)
    }

    /// The sandbox, as resolved by [`with_sandbox`](Self::with_sandbox).
    pub fn sandbox(&self) -> Option<&Sandbox> {
        self.sandbox.as_ref()
    }

    fn absolute(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        }
    }

    /// Runs a file operation on a blocking thread (holding one of the bounded slots) with
    /// the roots and the absolute path.
    async fn blocking<T, F>(&self, path: &Path, op: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Roots, &Path) -> io::Result<T> + Send + 'static,
    {
        let roots = Arc::clone(&self.roots);
        let path = self.absolute(path);
        blocking::run(move || op(&roots, &path)).await
    }
}

impl ExecutionEnv for LocalEnv {
    fn cwd(&self) -> &Path {
        &self.cwd
    }

    fn home_dir(&self) -> Option<PathBuf> {
        self.home.clone()
    }

    fn is_local(&self) -> bool {
        true
    }

    fn search_index(&self) -> SearchIndex {
        self.search_index
    }

    fn allowed_roots(&self) -> &[PathBuf] {
        self.roots.canonical()
    }

    fn confinement(&self) -> Option<String> {
        self.sandbox
            .as_ref()
            .and_then(Sandbox::describe)
            .map(str::to_owned)
    }

    fn mutation_queue(&self) -> &MutationQueue {
        &self.queue
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        let pseudo_files = self.pseudo_files;
        Box::pin(self.blocking(path, move |roots, path| {
            let (file, st) = open_regular(roots, path, pseudo_files)?;
            blocking::read_all(&file, path, usize::try_from(st.st_size).unwrap_or(0))
        }))
    }

    fn open_read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileReader>> {
        let pseudo_files = self.pseudo_files;
        Box::pin(async move {
            let file = self
                .blocking(path, move |roots, path| {
                    Ok(open_regular(roots, path, pseudo_files)?.0)
                })
                .await?;
            // The reader holds a slot of its own for as long as it (or a read of it) lives.
            let slot = blocking::slot().await?;
            Ok(Box::new(SlotReader::new(file, path, slot)) as FileReader)
        })
    }

    fn read_head<'a>(&'a self, path: &'a Path, max: usize) -> BoxFuture<'a, io::Result<FileHead>> {
        Box::pin(async move {
            let pseudo_files = self.pseudo_files;
            let (head, file) = self
                .blocking(path, move |roots, path| {
                    read_head_of(roots, path, max, pseudo_files)
                })
                .await?;
            let rest = match file {
                // The reader holds a slot of its own, as open_read's does.
                Some(file) => {
                    let slot = blocking::slot().await?;
                    Some(Box::new(SlotReader::new(file, path, slot)) as FileReader)
                }
                None => None,
            };
            Ok(FileHead { rest, ..head })
        })
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: Vec<u8>) -> BoxFuture<'a, io::Result<()>> {
        let fsync = self.fsync;
        Box::pin(async move {
            let target = self.blocking(path, Target::locate).await?;
            self.check_write(&target.real_path())?;
            blocking::run(move || {
                let locked = target.lock()?;
                target.replace(locked.as_ref().map(|l| l.stat()), &data, fsync)
            })
            .await
        })
    }

    fn modify_file<'a>(
        &'a self,
        path: &'a Path,
        max_bytes: Option<u64>,
        change: FileChange,
    ) -> BoxFuture<'a, io::Result<()>> {
        let fsync = self.fsync;
        Box::pin(async move {
            let target = self.blocking(path, Target::locate).await?;
            self.check_write(&target.real_path())?;
            let shown = path.to_path_buf();
            blocking::run(move || {
                let Some(mut locked) = target.lock()? else {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("{} does not exist", shown.display()),
                    ));
                };
                let size = u64::try_from(locked.stat().st_size).unwrap_or(0);
                if let Some(max) = max_bytes.filter(|&max| size > max) {
                    return Err(crate::env::too_large(&shown, size, max));
                }
                let bytes = locked.read_all(max_bytes)?;
                let new = change(bytes)?;
                target.replace(Some(locked.stat()), &new, fsync)
            })
            .await
        })
    }

    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Metadata>> {
        Box::pin(self.blocking(path, metadata_of))
    }

    fn list_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<DirEntry>>> {
        Box::pin(self.blocking(path, list_dir_of))
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            self.check_write(&self.absolute(path))?;
            self.blocking(path, create_dir_all_of).await
        })
    }

    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>> {
        Box::pin(self.blocking(path, canonicalize_of))
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let found = self.blocking(path, remove::locate_for_removal).await?;
            self.check_write(&found.real)?;
            blocking::run(move || remove::unlink(found)).await
        })
    }

    // Without the `process` feature the trait's default refuses to run processes.
    #[cfg(feature = "process")]
    fn exec<'a>(
        &'a self,
        request: crate::env::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: crate::env::OutputSink,
    ) -> BoxFuture<'a, io::Result<crate::env::ExecOutcome>> {
        Box::pin(self.run_command(request, cancel, on_chunk, None, None))
    }

    #[cfg(feature = "process")]
    fn exec_job<'a>(
        &'a self,
        request: crate::env::ExecRequest,
        input: crate::env::JobInput,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: crate::env::OutputSink,
    ) -> BoxFuture<'a, io::Result<crate::env::ExecOutcome>> {
        Box::pin(self.run_command(request, cancel, on_chunk, None, Some(input)))
    }

    fn jobs(&self) -> Option<&crate::env::Jobs> {
        Some(&self.jobs)
    }

    #[cfg(feature = "process")]
    fn exec_with_stderr<'a>(
        &'a self,
        request: crate::env::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: crate::env::OutputSink,
        on_stderr: crate::env::OutputSink,
    ) -> BoxFuture<'a, io::Result<crate::env::ExecOutcome>> {
        Box::pin(self.run_command(request, cancel, on_chunk, Some(on_stderr), None))
    }

    fn end_session(&self) {
        self.jobs.end_all();
        #[cfg(feature = "process")]
        self.processes.end_session();
        self.session_files.remove_all();
        if let Some(sandbox) = &self.sandbox {
            sandbox.end_session();
        }
    }

    fn remove_at_session_end(&self, path: PathBuf) {
        self.session_files.keep(path);
    }

    fn hibernate(&self) {
        self.roots.release();
        if let Some(sandbox) = &self.sandbox {
            #[cfg(feature = "process")]
            let running = self.processes.any_alive();
            #[cfg(not(feature = "process"))]
            let running = false;
            sandbox.hibernate(running);
        }
    }
}

impl Drop for LocalEnv {
    /// Nothing can end the environment's processes, delete its session's files or undo what
    /// they did to git's files once it is gone, so that happens with it.
    fn drop(&mut self) {
        ExecutionEnv::end_session(self);
    }
}
