//! The execution environment: everything a tool does to a file system or a process goes
//! through an [`ExecutionEnv`], so the same tools can run against the local machine, a
//! confined directory, or another system entirely.
//!
//! A tool reaches its environment through its context ([`ToolContextExt::env`]); a batch's
//! tools get one with `RunnerConfig::default().with_env(env)`, a tool called directly with
//! `ToolContext::new(..).with_env(env)` ([`WithEnv`]).
//!
//! This module is the interface: the trait and its value types, how a batch carries an
//! environment, jobs, paths and the mutation queue. The implementations sit below it in
//! folders of their own, and neither uses the other: [`local`] holds [`LocalEnv`] (this
//! machine, its files beneath the allowed roots, processes through the sandbox) and the
//! fallback of tools given no environment; [`remote`] holds the SSH environment and the
//! link to a `pi-tools env-server`. What both need (the files to delete at a session's end,
//! the temporary files' names, this process's guard) sits here, below both.
//!
//! [`LocalEnv`]: local::LocalEnv

// Telling a process out of file descriptors (EMFILE) from other failures: both sides and
// the fronts say it the same way.
pub(crate) mod descriptors;
// What this process's commands leave should it be killed: the guard that ends them, the
// marks that find them. Local jobs, the link's serving end and mounted servers use it.
#[cfg(feature = "mount")]
pub(crate) mod guard;
pub mod jobs;
pub mod local;
mod path;
mod queue;
pub mod remote;
/// The sandbox commands run in and the file tools' writes are checked against: the
/// [`pi_tools_sandbox`] crate, whose main items are also here in `env`.
pub use pi_tools_sandbox as sandbox;
mod session_files;
mod temp_name;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use tokio::io::AsyncRead;
use tokio_util::sync::CancellationToken;

use crate::core::{BoxFuture, Extensions, RunnerConfig, ToolContext};

#[cfg(feature = "mcp")]
pub(crate) use descriptors::descriptor_limit;
#[cfg(feature = "process")]
pub(crate) use descriptors::out_of_descriptors;
pub use jobs::{JobControl, JobInput, Jobs, TerminalSize};
pub use path::{expand_tilde, mutation_key, normalize_path_input, resolve_path, resolve_read_path};
pub use pi_tools_sandbox::exec::{ExecOutcome, ExecRequest, OutputSink};
#[cfg(feature = "process")]
pub use pi_tools_sandbox::procs::ProcessTracking;
pub use pi_tools_sandbox::{GitAccess, KernelSupport, Sandbox, SandboxMode, SandboxPolicy};
pub use queue::MutationQueue;
#[cfg(feature = "process")]
pub(crate) use session_files::spill_dir;
pub use temp_name::is_temp_file_name;

/// The sandbox as resolved for one environment, now [`Sandbox`].
#[deprecated(note = "renamed `Sandbox` (in the `pi-tools-sandbox` crate)")]
pub type ResolvedSandbox = Sandbox;

/// What a stat of a path tells (symbolic links followed, except for `is_symlink`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The path (after following links) is a directory.
    pub is_dir: bool,
    /// The path (after following links) is a regular file.
    pub is_file: bool,
    /// The path itself is a symbolic link.
    pub is_symlink: bool,
    /// Size in bytes.
    pub len: u64,
    /// Unix permission bits (e.g. `0o644`), when the system has them.
    pub mode: Option<u32>,
    /// Last modification time, when known.
    pub modified: Option<SystemTime>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's file name (lossily converted to UTF-8).
    pub name: String,
    /// It is a directory (symbolic links followed).
    pub is_dir: bool,
    /// It is a regular file (symbolic links followed): not a directory, FIFO, socket or
    /// device, so reading it cannot block.
    pub is_file: bool,
    /// It is a symbolic link.
    pub is_symlink: bool,
}

/// A streaming reader over a file's bytes.
pub type FileReader = Box<dyn AsyncRead + Send + Unpin>;

/// A file's start, read with its metadata in one step by [`ExecutionEnv::read_head`].
pub struct FileHead {
    /// The file's metadata (`is_symlink` is `false`: the path's links were followed).
    pub metadata: Metadata,
    /// The file's first bytes, up to the size asked for; empty for a directory.
    pub bytes: Vec<u8>,
    /// The rest of the file, when `bytes` does not hold all of it.
    pub rest: Option<FileReader>,
}

/// A change [`ExecutionEnv::modify_file`] makes to a file: the old bytes in, the new bytes
/// (or an error, which leaves the file as it was) out. It runs on a blocking thread.
pub type FileChange = Box<dyn FnOnce(Vec<u8>) -> io::Result<Vec<u8>> + Send>;

/// The error for a file over a size limit (`ErrorKind::FileTooLarge`).
pub(crate) fn too_large(path: &Path, size: u64, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{} is {size} bytes, over the limit of {max} bytes",
            path.display()
        ),
    )
}

/// When grep and find keep a trigram index of a working directory's files
/// ([`ExecutionEnv::search_index`]). The index is built on a thread of its own at idle
/// priority, while the search that started it reads every file; it pays only where searches
/// come again. Results are the same either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchIndex {
    /// Never: every search reads every file.
    #[default]
    Off,
    /// Once the directory is searched a second time in this process. A one-shot search (a
    /// script's `pi-tools run` or `call`) starts no build that would compete with its own
    /// scan and then be thrown away. [`LocalEnv`](local::LocalEnv)'s default.
    WhenReused,
    /// From the first search: for a long-lived session that will search again (the MCP
    /// server's), or when a program asks for it.
    Always,
}

impl From<bool> for SearchIndex {
    /// `true`: [`SearchIndex::Always`]; `false`: [`SearchIndex::Off`].
    fn from(on: bool) -> Self {
        if on {
            SearchIndex::Always
        } else {
            SearchIndex::Off
        }
    }
}

/// Where tools read, write and run things. Object-safe; used as `Arc<dyn ExecutionEnv>`.
///
/// Implementations should apply any confinement they have to every operation, so a tool
/// cannot step outside it by accident.
pub trait ExecutionEnv: Send + Sync + 'static {
    /// The directory relative paths resolve against.
    fn cwd(&self) -> &Path;

    /// The home directory `~` expands to, if the environment has one.
    fn home_dir(&self) -> Option<PathBuf> {
        None
    }

    /// `true` when paths name files on this machine's own file system, so tools may walk
    /// them in-process (grep and find do, with ripgrep's crates). Remote environments
    /// answer `false`.
    fn is_local(&self) -> bool {
        false
    }

    /// When grep and find may keep a search index of the working directory (see the search
    /// index in the benchmarks document): only an environment whose files are on this
    /// machine can, and only when it says so.
    fn search_index(&self) -> SearchIndex {
        SearchIndex::Off
    }

    /// The canonical directories the environment is confined to; empty when unconfined.
    fn allowed_roots(&self) -> &[PathBuf] {
        &[]
    }

    /// What this environment enforces on commands and file edits, as one sentence for the
    /// model (where they may write, whether the network is on), or `None` when it enforces
    /// nothing worth telling. A toolbox adds it to the shell tool's description and to the
    /// prompt, so the model is told of a sandbox exactly when one is there; an environment
    /// must never describe a limit it does not enforce.
    fn confinement(&self) -> Option<String> {
        None
    }

    /// The per-file queue that serialises read-modify-write operations in this environment.
    fn mutation_queue(&self) -> &MutationQueue;

    /// Reads a whole file.
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>>;

    /// Opens a file for streaming reads, so callers never hold more than they need.
    fn open_read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileReader>>;

    /// Stats a path (following links) and, when it is a regular file, reads up to `max`
    /// bytes of it, keeping the rest open for reading: what a reader of small files needs,
    /// in one step where the environment can (the local one makes one trip to a blocking
    /// thread). A directory comes back with no bytes; anything else that is not a regular
    /// file is refused as [`open_read`](Self::open_read) refuses it.
    ///
    /// The default composes [`metadata`](Self::metadata) and `open_read`.
    fn read_head<'a>(&'a self, path: &'a Path, max: usize) -> BoxFuture<'a, io::Result<FileHead>> {
        Box::pin(async move {
            let metadata = self.metadata(path).await?;
            if metadata.is_dir {
                return Ok(FileHead {
                    metadata,
                    bytes: Vec::new(),
                    rest: None,
                });
            }
            let mut reader = self.open_read(path).await?;
            let mut bytes = vec![0; max];
            let mut filled = 0;
            while filled < max {
                let n = tokio::io::AsyncReadExt::read(&mut reader, &mut bytes[filled..]).await?;
                if n == 0 {
                    bytes.truncate(filled);
                    return Ok(FileHead {
                        metadata,
                        bytes,
                        rest: None,
                    });
                }
                filled += n;
            }
            Ok(FileHead {
                metadata,
                bytes,
                rest: Some(reader),
            })
        })
    }

    /// Replaces (or creates) a file atomically: readers see the old or the new content,
    /// never a mix. An existing file keeps its permissions; a symbolic link keeps pointing
    /// at its target, which is what gets replaced. Parent directories must exist.
    fn write_file<'a>(&'a self, path: &'a Path, data: Vec<u8>) -> BoxFuture<'a, io::Result<()>>;

    /// Reads a file, applies `change` to its bytes and replaces the file with the result,
    /// atomically, as one read-modify-write: an environment that can should keep other
    /// writers (other processes too) out from the read to the replacement. A file over
    /// `max_bytes` is refused (`ErrorKind::FileTooLarge`) before it is read.
    ///
    /// The default reads with [`read_file`](Self::read_file) and writes with
    /// [`write_file`](Self::write_file), so it is only as safe from other processes as
    /// they are.
    fn modify_file<'a>(
        &'a self,
        path: &'a Path,
        max_bytes: Option<u64>,
        change: FileChange,
    ) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            if let Some(max) = max_bytes {
                let len = self.metadata(path).await?.len;
                if len > max {
                    return Err(too_large(path, len, max));
                }
            }
            let bytes = self.read_file(path).await?;
            let new = change(bytes)?;
            self.write_file(path, new).await
        })
    }

    /// Stats a path (following symbolic links).
    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Metadata>>;

    /// Lists a directory, in no particular order.
    fn list_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<DirEntry>>>;

    /// Creates a directory and its missing parents.
    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>>;

    /// The absolute path with every symbolic link, `.` and `..` resolved; the path must exist.
    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>>;

    /// Removes a file (a symbolic link itself, never its target; a directory is refused),
    /// under the same confinement as [`write_file`](Self::write_file). The default answers
    /// `ErrorKind::Unsupported`: an environment that cannot delete says so.
    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "this environment cannot delete files, so {} was left as it is",
                    path.display()
                ),
            ))
        })
    }

    /// Runs a tool call on the machine that holds the files, by that machine's own registered
    /// tool of the name `tool` gives, where this environment can (a remote machine with
    /// pi-tools of the same version): a tool whose work is many small file operations (a
    /// search over a tree) asks for this, instead of making each operation a round trip.
    /// Returns the result message, or `None` when the environment cannot (the default), and
    /// the tool goes on as usual; so it does when the future fails with
    /// `ErrorKind::Unsupported` (the environment found out it cannot after all).
    fn run_beside_files<'a>(
        &'a self,
        tool: &'a str,
        arguments: serde_json::Value,
        cancel: CancellationToken,
    ) -> Option<BoxFuture<'a, io::Result<crate::core::ToolResultMessage>>> {
        let _ = (tool, arguments, cancel);
        None
    }

    /// Runs a shell command, streaming its merged output to `on_chunk` as it arrives, until
    /// it exits, times out or `cancel` fires (then every process it started is killed).
    ///
    /// The default refuses: not every environment can run processes.
    fn exec<'a>(
        &'a self,
        request: ExecRequest,
        cancel: CancellationToken,
        on_chunk: OutputSink,
    ) -> BoxFuture<'a, io::Result<ExecOutcome>> {
        let _ = (request, cancel, on_chunk);
        Box::pin(async {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this execution environment cannot run processes",
            ))
        })
    }

    /// [`exec`](Self::exec), with each chunk the command writes to stderr also handed to
    /// `on_stderr` (it still reaches `on_chunk` too). Stderr then has a pipe of its own, so
    /// between stdout and stderr `on_chunk` sees the order of arrival, not of writing.
    ///
    /// The default runs [`exec`](Self::exec) and hands nothing to `on_stderr`: an
    /// environment that cannot tell stderr apart still runs the command.
    fn exec_with_stderr<'a>(
        &'a self,
        request: ExecRequest,
        cancel: CancellationToken,
        on_chunk: OutputSink,
        on_stderr: OutputSink,
    ) -> BoxFuture<'a, io::Result<ExecOutcome>> {
        let _ = on_stderr;
        self.exec(request, cancel, on_chunk)
    }

    /// [`exec`](Self::exec) for a job (see [`Jobs`]): the command also takes what the job
    /// tools send through `input` (bytes for its standard input, signals for its process
    /// group) and, when `input.terminal` says so, runs on a pseudo-terminal.
    ///
    /// The default runs [`exec`](Self::exec) and drops `input`, so a job in an environment
    /// that cannot pass input runs with none: the job tools then say that writing to it or
    /// signalling it is not possible there (ending it still is, through `cancel`).
    fn exec_job<'a>(
        &'a self,
        request: ExecRequest,
        input: JobInput,
        cancel: CancellationToken,
        on_chunk: OutputSink,
    ) -> BoxFuture<'a, io::Result<ExecOutcome>> {
        drop(input);
        self.exec(request, cancel, on_chunk)
    }

    /// The session's jobs: commands handed back to the model while they run (bash's
    /// `background` and `yield`), ended with the session. `None` (the default) when the
    /// environment keeps none; bash then runs every command to its end.
    fn jobs(&self) -> Option<&Jobs> {
        None
    }

    /// Ends every process this environment started that is still running (background jobs
    /// included), and deletes the files handed to [`remove_at_session_end`]; called when a
    /// session ends.
    ///
    /// [`remove_at_session_end`]: ExecutionEnv::remove_at_session_end
    fn end_session(&self) {}

    /// Lets go of what an idle session takes up again by itself at its next call: open
    /// descriptors, change watches and the memory they use, an empty private temporary
    /// directory. Called when a server puts an idle session to sleep; nothing the session
    /// made or still runs is lost. The default keeps everything.
    fn hibernate(&self) {}

    /// Takes a file of this process's own local disk (such as a command's spill file) to
    /// delete when the session ends. The default keeps nothing: an environment without
    /// sessions leaves the file to whoever made it.
    fn remove_at_session_end(&self, path: PathBuf) {
        let _ = path;
    }
}

/// Gives tools their execution environment.
pub trait ToolContextExt {
    /// The environment the batch was given (an `Arc<dyn ExecutionEnv>` in the context's
    /// extensions), or else the process-wide local environment on the current directory
    /// ([`local::process_env`]: the implementation for [`ToolContext`] lives there).
    fn env(&self) -> Arc<dyn ExecutionEnv>;
}

/// Reads the environment [`WithEnv`] gave a batch: the one place, beside `with_env`, that
/// knows how the extensions keep it.
///
/// ```
/// use std::sync::Arc;
/// use pi_tools::env::local::LocalEnv;
/// use pi_tools::env::{EnvOf, WithEnv};
/// use pi_tools::RunnerConfig;
///
/// let config = RunnerConfig::default().with_env(Arc::new(LocalEnv::new("/srv/project")));
/// assert_eq!(config.env().map(|e| e.cwd().to_path_buf()), Some("/srv/project".into()));
/// assert!(RunnerConfig::default().env().is_none());
/// ```
pub trait EnvOf {
    /// The environment, if one was given.
    fn env(&self) -> Option<&Arc<dyn ExecutionEnv>>;
}

impl EnvOf for Extensions {
    fn env(&self) -> Option<&Arc<dyn ExecutionEnv>> {
        self.get::<Arc<dyn ExecutionEnv>>()
    }
}

impl EnvOf for RunnerConfig {
    fn env(&self) -> Option<&Arc<dyn ExecutionEnv>> {
        self.extensions.env()
    }
}

/// Says which environment the tools work in, on what carries it to them: the extensions of
/// a batch ([`RunnerConfig`] or [`Extensions`]) or of one call ([`ToolContext`], for a
/// program that calls a tool directly).
///
/// The environment is looked up as an `Arc<dyn ExecutionEnv>`; an `Arc<LocalEnv>` put in
/// the extensions as it is would not be found, and the tools would work in the process's
/// current directory. `with_env` takes care of that.
///
/// ```
/// use std::sync::Arc;
/// use pi_tools::env::local::LocalEnv;
/// use pi_tools::env::{ToolContextExt, WithEnv};
/// use pi_tools::{CancellationToken, RunnerConfig, ToolContext};
///
/// let ctx = ToolContext::new("call-1", CancellationToken::new())
///     .with_env(Arc::new(LocalEnv::new("/srv/project")));
/// assert_eq!(ctx.env().cwd(), std::path::Path::new("/srv/project"));
/// let config = RunnerConfig::default().with_env(Arc::new(LocalEnv::new("/srv/project")));
/// ```
pub trait WithEnv: Sized {
    /// This, with `env` as the environment (in place of any other).
    fn with_env(self, env: Arc<dyn ExecutionEnv>) -> Self;
}

impl WithEnv for Extensions {
    fn with_env(self, env: Arc<dyn ExecutionEnv>) -> Self {
        // The notes of the environment's jobs go onto the next result the runner finishes.
        let notices = env
            .jobs()
            .map(|jobs| jobs.notices().clone())
            .unwrap_or_default();
        self.with(env).with(notices)
    }
}

impl WithEnv for ToolContext {
    fn with_env(self, env: Arc<dyn ExecutionEnv>) -> Self {
        let extensions = self.extensions().clone().with_env(env);
        self.with_extensions(extensions)
    }
}

impl WithEnv for RunnerConfig {
    fn with_env(mut self, env: Arc<dyn ExecutionEnv>) -> Self {
        self.extensions = std::mem::take(&mut self.extensions).with_env(env);
        self
    }
}
