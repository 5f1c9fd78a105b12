//! File operations of [`SshEnv`] over SFTP, with the same meaning as [`LocalEnv`]'s: atomic
//! replacement through a temporary file in the same remote directory (fsync, then an atomic
//! `posix-rename`), permissions kept, symbolic links followed to the file they name, paths
//! confined to the allowed roots.
//!
//! [`LocalEnv`]: crate::env::local::LocalEnv

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use openssh_sftp_client::error::SftpErrorKind;
use openssh_sftp_client::file::TokioCompatFile;
use openssh_sftp_client::metadata::Permissions;
use openssh_sftp_client::{Error, Sftp};

use super::SshEnv;
use super::connection::Connection;
use crate::env::{DirEntry, FileReader, Metadata};

/// The [`io::Error`] for an SFTP error: the server's verdicts become the errors the local
/// system would give (so tools word them the same way); anything else means the connection
/// is no longer usable and becomes [`io::ErrorKind::ConnectionAborted`].
pub(super) fn io_error(err: Error) -> io::Error {
    match err {
        Error::SftpError(kind, msg) => match kind {
            SftpErrorKind::NoSuchFile => io::Error::from_raw_os_error(libc::ENOENT),
            SftpErrorKind::PermDenied => io::Error::from_raw_os_error(libc::EACCES),
            SftpErrorKind::OpUnsupported => io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the SFTP server does not support this operation ({msg})"),
            ),
            _ => io::Error::other(format!("the SFTP server refused: {msg}")),
        },
        Error::IOError(err) if err.kind() != io::ErrorKind::BrokenPipe => err,
        other => io::Error::new(io::ErrorKind::ConnectionAborted, other.to_string()),
    }
}

/// An SFTP error in words, for messages.
pub(super) fn describe(err: &Error) -> String {
    match err {
        Error::SftpError(SftpErrorKind::NoSuchFile, _) => "no such file or directory".into(),
        Error::SftpError(SftpErrorKind::PermDenied, _) => "permission denied".into(),
        other => other.to_string(),
    }
}

impl SshEnv {
    /// Runs one file operation on the live connection after the confinement check; a lost
    /// connection fails this call with a clear error and is dropped, so the next call
    /// reconnects.
    pub(super) async fn with_sftp<T, F, Fut>(&self, path: &Path, op: F) -> io::Result<T>
    where
        F: FnOnce(Arc<Connection>, PathBuf) -> Fut,
        Fut: Future<Output = io::Result<T>>,
    {
        let conn = self.connection().await?;
        let result = match self.check_allowed(&conn, path).await {
            Ok(()) => op(Arc::clone(&conn), path.to_path_buf()).await,
            Err(err) => Err(err),
        };
        match result {
            Err(err) if err.kind() == io::ErrorKind::ConnectionAborted => {
                self.lost(&conn).await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!(
                        "the SSH connection to {} was lost during the call ({err}); retry the \
                         call, which connects again",
                        self.target.host()
                    ),
                ))
            }
            other => other,
        }
    }

    /// Refuses a path whose real location is outside the allowed roots (no-op when
    /// unconfined).
    pub(super) async fn check_allowed(&self, conn: &Connection, path: &Path) -> io::Result<()> {
        if self.roots.is_empty() {
            return Ok(());
        }
        let canonical = canonical_lenient(&conn.sftp, path).await?;
        if self.roots.iter().any(|r| canonical.starts_with(r)) {
            return Ok(());
        }
        let listed = self
            .roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is outside the allowed directories ({listed}). Use a path whose real \
                 location is inside them.",
                path.display()
            ),
        ))
    }
}

/// The canonical path, or for a path that does not exist yet its nearest existing ancestor
/// canonicalised plus the rest (the same algorithm as locally, with the server's
/// `realpath`); a link whose target does not exist yet stands for it.
async fn canonical_lenient(sftp: &Sftp, path: &Path) -> io::Result<PathBuf> {
    let realpath =
        |probe: PathBuf| async move { sftp.fs().canonicalize(&probe).await.map_err(io_error) };
    match realpath(path.to_path_buf()).await {
        Ok(c) => return Ok(c),
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        Err(_) => {}
    }
    let followed = follow_final_links(sftp, path).await?;
    crate::env::path::canonical_lenient(&followed, realpath).await
}

/// Follows the links `path` itself is, as far as they go (40 at most, as the kernel does),
/// by the env's one algorithm over SFTP.
async fn follow_final_links(sftp: &Sftp, path: &Path) -> io::Result<PathBuf> {
    pi_tools_sandbox::path::follow_final_links_with(path, |probe| async move {
        let mut fs = sftp.fs();
        match fs.symlink_metadata(&probe).await.map_err(io_error) {
            Ok(meta) if meta.file_type().is_some_and(|t| t.is_symlink()) => {
                fs.read_link(&probe).await.map_err(io_error).map(Some)
            }
            Ok(_) => Ok(None),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        }
    })
    .await
}

pub(super) async fn read(sftp: &Sftp, path: &Path) -> io::Result<Vec<u8>> {
    let bytes = sftp.fs().read(path).await.map_err(io_error)?;
    Ok(bytes.to_vec())
}

pub(super) async fn open_read(sftp: &Sftp, path: &Path) -> io::Result<FileReader> {
    let file = sftp.open(path).await.map_err(io_error)?;
    Ok(Box::new(Box::pin(TokioCompatFile::new(file))) as FileReader)
}

pub(super) async fn metadata(sftp: &Sftp, path: &Path) -> io::Result<Metadata> {
    let mut fs = sftp.fs();
    let link = fs.symlink_metadata(path).await.map_err(io_error)?;
    let is_symlink = link.file_type().is_some_and(|t| t.is_symlink());
    let meta = if is_symlink {
        fs.metadata(path).await.map_err(io_error)?
    } else {
        link
    };
    let file_type = meta.file_type();
    Ok(Metadata {
        is_dir: file_type.is_some_and(|t| t.is_dir()),
        is_file: file_type.is_some_and(|t| t.is_file()),
        is_symlink,
        len: meta.len().unwrap_or(0),
        mode: meta.permissions().map(|p| p.as_raw().bits() & 0o7777),
        modified: meta.modified().map(|t| t.as_system_time()),
    })
}

pub(super) async fn list_dir(sftp: &Sftp, path: &Path) -> io::Result<Vec<DirEntry>> {
    let mut fs = sftp.fs();
    let dir = fs.open_dir(path).await.map_err(io_error)?;
    let mut stream = Box::pin(dir.read_dir());
    let mut entries = Vec::new();
    while let Some(entry) = stream.next().await {
        let entry = entry.map_err(io_error)?;
        let name = entry.filename().to_string_lossy().into_owned();
        if name == "." || name == ".." {
            continue;
        }
        let is_symlink = entry.file_type().is_some_and(|t| t.is_symlink());
        let followed = if is_symlink {
            fs.metadata(path.join(&name))
                .await
                .ok()
                .and_then(|m| m.file_type())
        } else {
            entry.file_type()
        };
        entries.push(DirEntry {
            name,
            is_dir: followed.is_some_and(|t| t.is_dir()),
            is_file: followed.is_some_and(|t| t.is_file()),
            is_symlink,
        });
    }
    Ok(entries)
}

pub(super) async fn create_dir_all(sftp: &Sftp, path: &Path) -> io::Result<()> {
    let mut fs = sftp.fs();
    let mut missing = Vec::new();
    let mut current = Some(path);
    while let Some(dir) = current {
        if dir.as_os_str().is_empty() {
            break;
        }
        match fs.metadata(dir).await.map_err(io_error) {
            Ok(meta) if meta.file_type().is_some_and(|t| t.is_dir()) => break,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} exists and is not a directory", dir.display()),
                ));
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => missing.push(dir),
            Err(err) => return Err(err),
        }
        current = dir.parent();
    }
    for dir in missing.into_iter().rev() {
        if let Err(err) = fs.create_dir(dir).await.map_err(io_error) {
            // Another writer may have made it meanwhile.
            let made = fs
                .metadata(dir)
                .await
                .ok()
                .and_then(|m| m.file_type())
                .is_some_and(|t| t.is_dir());
            if !made {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// Writes `data` to a temporary file in the target's directory, fsyncs it, then renames it
/// over the target with `posix-rename` (atomic), so a reader, or a connection lost half-way,
/// leaves the old or the new content, never a mix. Permissions are kept (`mode`, when given,
/// replaces them: the file has it before it takes the target's name); a symbolic link is
/// followed so the link stays and its target is replaced.
pub(super) async fn atomic_write(
    sftp: &Sftp,
    path: &Path,
    data: &[u8],
    fsync: bool,
    mode: Option<u16>,
) -> io::Result<()> {
    let mut fs = sftp.fs();
    let target = match fs.canonicalize(path).await.map_err(io_error) {
        Ok(real) => real,
        Err(err) if err.kind() == io::ErrorKind::NotFound => follow_final_links(sftp, path).await?,
        Err(err) => return Err(err),
    };
    let existing = fs.metadata(&target).await.ok();
    if existing
        .as_ref()
        .and_then(|m| m.file_type())
        .is_some_and(|t| t.is_dir())
    {
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
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = sftp
        .options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .await
        .map_err(io_error)?;
    let result = async {
        if let Some(mode) = mode {
            file.set_permissions(Permissions::from(mode))
                .await
                .map_err(io_error)?;
        } else if let Some(perm) = existing.as_ref().and_then(|m| m.permissions()) {
            file.set_permissions(perm).await.map_err(io_error)?;
        } else {
            // New files get 0644, as a umask of 022 would give.
            file.set_permissions(Permissions::from(0o644))
                .await
                .map_err(io_error)?;
        }
        // Sent as it is: `write_all` would encode the data byte by byte.
        file.write_all_zero_copy(&mut [bytes::Bytes::copy_from_slice(data)])
            .await
            .map_err(io_error)?;
        if fsync && sftp.support_fsync() {
            file.sync_all().await.map_err(io_error)?;
        }
        file.close().await.map_err(io_error)?;
        fs.rename(&temp, &target).await.map_err(io_error)
    }
    .await;
    if result.is_err() {
        let _ = sftp.fs().remove_file(&temp).await;
    }
    result
}
