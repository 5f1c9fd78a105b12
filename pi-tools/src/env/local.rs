//! [`LocalEnv`]: the execution environment of this machine, optionally confined to a set of
//! directories.

use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::path::lexical_join;
use super::{DirEntry, ExecutionEnv, FileReader, Metadata, MutationQueue};
use crate::core::BoxFuture;

/// The local file system (and, once the process runner is attached, local processes).
///
/// ```
/// use std::sync::Arc;
/// use pi_tools::env::{ExecutionEnv, LocalEnv};
/// let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new("/tmp"));
/// assert!(env.is_local());
/// ```
#[derive(Debug)]
pub struct LocalEnv {
    cwd: PathBuf,
    home: Option<PathBuf>,
    roots: Vec<Root>,
    canonical_roots: Vec<PathBuf>,
    fsync: bool,
    queue: MutationQueue,
}

/// An allowed directory as configured and as canonicalised (they differ when it was given
/// through a symbolic link).
#[derive(Debug, Clone)]
struct Root {
    given: PathBuf,
    canonical: PathBuf,
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
            roots: Vec::new(),
            canonical_roots: Vec::new(),
            fsync: true,
            queue: MutationQueue::new(),
        }
    }

    /// Confines every operation to these directories: a path whose canonical form (symbolic
    /// links resolved) is not inside one of them is refused. Fails if a root does not exist.
    pub fn with_allowed_roots<I, P>(mut self, roots: I) -> io::Result<Self>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        for root in roots {
            let given = self.cwd.join(root.as_ref());
            let canonical = fs::canonicalize(&given).map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!("allowed root {} cannot be used: {err}", given.display()),
                )
            })?;
            self.canonical_roots.push(canonical.clone());
            self.roots.push(Root { given, canonical });
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

    /// Refuses a path outside the allowed roots (no-op when unconfined).
    pub fn check_allowed(&self, path: &Path) -> io::Result<()> {
        if self.roots.is_empty() {
            return Ok(());
        }
        let canonical = canonical_lenient(path)?;
        if self
            .roots
            .iter()
            .any(|r| canonical.starts_with(&r.canonical))
        {
            return Ok(());
        }
        let lexical = lexical_join(Path::new("/"), &path.components().collect::<Vec<_>>());
        let listed = self
            .roots
            .iter()
            .map(|r| r.given.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let looks_inside = self
            .roots
            .iter()
            .any(|r| lexical.starts_with(&r.given) || lexical.starts_with(&r.canonical));
        let message = if looks_inside {
            format!(
                "{} goes through a symbolic link to {}, which is outside the allowed directories ({listed}). Use a path whose real location is inside them.",
                path.display(),
                canonical.display()
            )
        } else {
            format!(
                "{} is outside the allowed directories ({listed}). Use a path inside them.",
                path.display()
            )
        };
        Err(io::Error::new(io::ErrorKind::PermissionDenied, message))
    }

    async fn blocking<T, F>(&self, path: &Path, op: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(PathBuf) -> io::Result<T> + Send + 'static,
    {
        self.check_allowed(path)?;
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || op(path))
            .await
            .map_err(|err| io::Error::other(format!("a file operation failed to finish: {err}")))?
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

    fn allowed_roots(&self) -> &[PathBuf] {
        &self.canonical_roots
    }

    fn mutation_queue(&self) -> &MutationQueue {
        &self.queue
    }

    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(self.blocking(path, fs::read))
    }

    fn open_read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileReader>> {
        Box::pin(async move {
            self.check_allowed(path)?;
            let file = tokio::fs::File::open(path).await?;
            Ok(Box::new(file) as FileReader)
        })
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: Vec<u8>) -> BoxFuture<'a, io::Result<()>> {
        let fsync = self.fsync;
        Box::pin(self.blocking(path, move |p| atomic_write(&p, &data, fsync)))
    }

    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Metadata>> {
        Box::pin(self.blocking(path, |p| {
            let link = fs::symlink_metadata(&p)?;
            let meta = if link.file_type().is_symlink() {
                fs::metadata(&p)?
            } else {
                link.clone()
            };
            Ok(Metadata {
                is_dir: meta.is_dir(),
                is_file: meta.is_file(),
                is_symlink: link.file_type().is_symlink(),
                len: meta.len(),
                mode: mode_of(&meta),
                modified: meta.modified().ok(),
            })
        }))
    }

    fn list_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<DirEntry>>> {
        Box::pin(self.blocking(path, |p| {
            let mut entries = Vec::new();
            for entry in fs::read_dir(&p)? {
                let Ok(entry) = entry else { continue };
                let Ok(file_type) = entry.file_type() else {
                    continue;
                };
                let is_symlink = file_type.is_symlink();
                let is_dir = if is_symlink {
                    fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
                } else {
                    file_type.is_dir()
                };
                entries.push(DirEntry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    is_dir,
                    is_symlink,
                });
            }
            Ok(entries)
        }))
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(self.blocking(path, fs::create_dir_all))
    }

    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<PathBuf>> {
        Box::pin(self.blocking(path, fs::canonicalize))
    }

    // Without the `process` feature the trait's default refuses to run processes.
    #[cfg(feature = "process")]
    fn exec<'a>(
        &'a self,
        request: super::ExecRequest,
        cancel: tokio_util::sync::CancellationToken,
        on_chunk: super::OutputSink,
    ) -> BoxFuture<'a, io::Result<super::ExecOutcome>> {
        Box::pin(async move {
            self.check_allowed(&request.cwd)?;
            super::exec::run(request, cancel, on_chunk).await
        })
    }
}

#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_meta: &fs::Metadata) -> Option<u32> {
    None
}

/// The canonical path, or for a path that does not exist yet, its nearest existing
/// ancestor canonicalised plus the rest (resolved lexically).
/// A symbolic link whose target does not exist yet stands for that target.
fn canonical_lenient(path: &Path) -> io::Result<PathBuf> {
    match fs::canonicalize(path) {
        Ok(c) => return Ok(c),
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        Err(_) => {}
    }
    let followed = follow_final_links(path)?;
    if followed != path {
        return canonical_lenient(&followed);
    }
    let mut rest: Vec<Component<'_>> = Vec::new();
    let mut ancestor = path;
    while let Some(parent) = ancestor.parent() {
        if let Some(last) = ancestor.components().next_back() {
            rest.push(last);
        }
        ancestor = parent;
        match fs::canonicalize(if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        }) {
            Ok(base) => {
                rest.reverse();
                return Ok(lexical_join(&base, &rest));
            }
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            Err(_) => {}
        }
    }
    Ok(path.to_path_buf())
}

/// Follows the symbolic links `path` itself is (its parents are left alone) as far as they
/// go: for a link whose target does not exist yet, that target. Stops after 40 links, as the
/// kernel does.
fn follow_final_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(current),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::other(format!(
        "{} goes through more than 40 symbolic links (a loop?)",
        path.display()
    )))
}

/// Writes `data` to a temporary file beside the target, then renames it over the target, so
/// a reader sees either the old or the new file. The target's permissions are kept; a
/// symbolic link is followed so the link stays and its target is replaced (or, for a link
/// whose target does not exist yet, created).
fn atomic_write(path: &Path, data: &[u8], fsync: bool) -> io::Result<()> {
    let target = match fs::canonicalize(path) {
        Ok(real) => real,
        Err(err) if err.kind() == io::ErrorKind::NotFound => follow_final_links(path)?,
        Err(err) => return Err(err),
    };
    let existing = fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", path.display()),
        ));
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (temp_path, mut file) = create_temp(&dir, &name)?;
    let result = (|| {
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        file.write_all(data)?;
        if fsync {
            file.sync_all()?;
        }
        drop(file);
        fs::rename(&temp_path, &target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp_path);
    }
    result
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, fs::File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // New files get the usual 0o666 less the umask, like any other created file.
            options.mode(0o666);
        }
        match options.open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
}
