//! Where a path leads, without requiring it to exist: the one algorithm behind the
//! sandbox's roots and protected paths and the callers that must agree with them (a
//! program's own confinement of file operations, its keys for queued writes). The
//! asynchronous forms take the file system's operations as closures, so a remote file
//! system resolves paths the same way.
//!
//! ```
//! use std::path::{Component, Path};
//! use pi_tools_sandbox::path::lexical_join;
//! let rest: Vec<Component<'_>> = Path::new("b/../c/./d").components().collect();
//! assert_eq!(lexical_join(Path::new("/a"), &rest), Path::new("/a/c/d"));
//! ```

use std::future::Future;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The canonical form of `path`, or for a path that does not exist yet, its nearest existing
/// ancestor canonicalised (by `canonicalize`) plus the rest of the path, resolved lexically.
/// The one algorithm behind pi-tools' `mutation_key` and the sandbox's view of where a path
/// leads. `canonicalize` is the file system's (this machine's, or a remote one's).
pub async fn canonical_lenient<F, Fut>(path: &Path, mut canonicalize: F) -> io::Result<PathBuf>
where
    F: FnMut(PathBuf) -> Fut,
    Fut: Future<Output = io::Result<PathBuf>>,
{
    match canonicalize(path.to_path_buf()).await {
        Ok(canonical) => return Ok(canonical),
        Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
        Err(_) => {}
    }
    let mut rest: Vec<Component<'_>> = Vec::new();
    let mut ancestor = path;
    loop {
        let Some(parent) = ancestor.parent() else {
            return Ok(lexical_join(path, &[]));
        };
        if let Some(last) = ancestor.components().next_back() {
            rest.push(last);
        }
        ancestor = parent;
        let probe = if ancestor.as_os_str().is_empty() {
            Path::new(".")
        } else {
            ancestor
        };
        match canonicalize(probe.to_path_buf()).await {
            Ok(base) => {
                rest.reverse();
                return Ok(lexical_join(&base, &rest));
            }
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            Err(_) => {}
        }
    }
}

/// [`canonical_lenient`] on this machine's file system, from synchronous code (the probes
/// are plain `canonicalize` calls, so the future is ready at once).
pub fn canonical_lenient_sync(path: &Path) -> io::Result<PathBuf> {
    futures::executor::block_on(canonical_lenient(path, |probe| {
        std::future::ready(std::fs::canonicalize(probe))
    }))
}

/// Follows the symbolic links `path` itself is (its parents are left alone) as far as they
/// go: for a link whose target does not exist yet, that target. Stops after 40 links, as the
/// kernel does. `read_link` tells what a path is: `Some(target)` for a link, `None` for
/// anything else or nothing at all. The one algorithm behind [`follow_final_links`] and the
/// SSH environment's in pi-tools.
pub async fn follow_final_links_with<F, Fut>(path: &Path, mut read_link: F) -> io::Result<PathBuf>
where
    F: FnMut(PathBuf) -> Fut,
    Fut: Future<Output = io::Result<Option<PathBuf>>>,
{
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match read_link(current.clone()).await? {
            Some(target) => {
                current = match current.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                };
            }
            None => return Ok(current),
        }
    }
    Err(too_many_links(path))
}

/// [`follow_final_links_with`] on this machine's file system, from synchronous code.
pub fn follow_final_links(path: &Path) -> io::Result<PathBuf> {
    futures::executor::block_on(follow_final_links_with(path, |probe| {
        std::future::ready(match std::fs::symlink_metadata(&probe) {
            Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(&probe).map(Some),
            Ok(_) => Ok(None),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err),
        })
    }))
}

/// How many symbolic links a path may go through, as the kernel allows.
pub const MAX_LINKS: usize = 40;

/// The error for a path that goes through more than [`MAX_LINKS`] links.
pub fn too_many_links(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} goes through more than {MAX_LINKS} symbolic links (a loop?)",
        path.display()
    ))
}

/// Appends components, resolving `.` and `..` lexically (they name directories that do
/// not exist yet, so there is no link to follow).
pub fn lexical_join(base: &Path, rest: &[Component<'_>]) -> PathBuf {
    let mut out = base.to_path_buf();
    for component in rest {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
