//! Opening paths so that the kernel, not a path check done earlier, keeps a confined
//! environment inside its allowed roots.
//!
//! Each allowed root is held open as a directory handle. A path inside a root is opened
//! relative to that handle with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: every
//! component, `..` and symbolic link is resolved by the kernel at open time, and anything
//! that would lead out of the root fails there (`EXDEV`), however the tree is changed
//! between a check and the open. Where `openat2` is missing (Linux before 5.6, other
//! Unixes), [`Beneath::manual`] does the same resolution one component at a time with
//! `O_NOFOLLOW` opens and `readlinkat`, holding a handle to every directory on the way.
//!
//! A link that names an absolute path (which `RESOLVE_BENEATH` always refuses) gets a
//! second chance: the path is canonicalised in user space and, when that lands inside a
//! root, opened again beneath that root, so the kernel still has the last word.
//!
//! An idle session may let its roots' handles go ([`Roots::release`]), so that a server
//! holding thousands of sleeping sessions holds no descriptor for them. The next open
//! opens the root again by its canonical path and checks it is the same directory
//! (device and inode) as the one first opened: a root replaced meanwhile is refused.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::env::path::{MAX_LINKS, canonical_lenient_sync, follow_final_links, lexical_join};

/// An allowed directory: as configured, as canonicalised, and held open (until released).
#[derive(Debug)]
struct Root {
    given: PathBuf,
    canonical: PathBuf,
    fd: Mutex<Option<Arc<OwnedFd>>>,
    /// The directory's identity when first opened: device and inode.
    identity: (u64, u64),
}

impl Root {
    /// The root's handle, opened again (and checked to be the same directory) when it was
    /// released.
    fn handle(&self) -> io::Result<Arc<OwnedFd>> {
        let mut held = self.fd.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = &*held {
            return Ok(Arc::clone(fd));
        }
        let fd = open_root(&self.given, &self.canonical)?;
        if identity(&fd)? != self.identity {
            return Err(io::Error::other(format!(
                "The allowed root {} is no longer the directory this session started with: it was replaced while the session was idle. Start a new session to work in the directory there now.",
                self.given.display()
            )));
        }
        let fd = Arc::new(fd);
        *held = Some(Arc::clone(&fd));
        Ok(fd)
    }
}

/// Opens a root's directory, with an error that names it or, when the process is out of
/// descriptors, says that (`EMFILE` and the limit) rather than blame the root.
fn open_root(given: &Path, canonical: &Path) -> io::Result<OwnedFd> {
    rustix::fs::open(
        canonical,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|err| {
        let err = io::Error::from(err);
        if crate::env::descriptors::out_of_descriptors(&err).is_some() {
            return crate::env::descriptors::named(
                err,
                &format!("opening the allowed root {}", given.display()),
            );
        }
        io::Error::new(
            err.kind(),
            format!(
                "allowed root {} cannot be used: it is not a directory that can be opened ({err})",
                given.display()
            ),
        )
    })
}

/// A directory's device and inode.
fn identity(fd: &OwnedFd) -> io::Result<(u64, u64)> {
    let st = rustix::fs::fstat(fd)?;
    Ok((st.st_dev, st.st_ino))
}

/// The allowed roots of an environment, held open; empty means unconfined.
#[derive(Debug, Default)]
pub(crate) struct Roots {
    roots: Vec<Root>,
    canonical: Vec<PathBuf>,
}

/// How the last component of a path is treated when it is a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Last {
    /// Followed (staying inside the roots).
    Follow,
    /// Opened as the link itself (with `O_PATH`).
    Link,
}

/// Set once `openat2` answered `ENOSYS`: every later open goes the manual way.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

impl Roots {
    /// Opens `given` (absolute) as a root.
    pub(crate) fn add(&mut self, given: PathBuf) -> io::Result<()> {
        // `/a/b/.` reads as `/a/b` in messages; links are resolved by `canonical`.
        let given = lexical_join(Path::new("/"), &given.components().collect::<Vec<_>>());
        let canonical = std::fs::canonicalize(&given).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("allowed root {} cannot be used: {err}", given.display()),
            )
        })?;
        let fd = open_root(&given, &canonical)?;
        let identity = identity(&fd)?;
        self.canonical.push(canonical.clone());
        self.roots.push(Root {
            given,
            canonical,
            fd: Mutex::new(Some(Arc::new(fd))),
            identity,
        });
        Ok(())
    }

    /// Lets every root's handle go (an idle session holds no descriptor); the next open
    /// opens them again, refusing a root that is another directory by then.
    pub(crate) fn release(&self) {
        for root in &self.roots {
            *root.fd.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// How many roots' handles are held now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.roots
            .iter()
            .filter(|r| r.fd.lock().unwrap_or_else(|e| e.into_inner()).is_some())
            .count()
    }

    /// Whether there are roots to stay inside.
    pub(crate) fn is_confined(&self) -> bool {
        !self.roots.is_empty()
    }

    /// The canonical roots.
    pub(crate) fn canonical(&self) -> &[PathBuf] {
        &self.canonical
    }

    /// Opens `path` (absolute) with `flags`; when confined, only inside a root. `O_CLOEXEC`
    /// is always added.
    pub(crate) fn open(
        &self,
        path: &Path,
        flags: OFlags,
        mode: Mode,
        last: Last,
    ) -> io::Result<OwnedFd> {
        let flags = flags
            | OFlags::CLOEXEC
            | match last {
                Last::Follow => OFlags::empty(),
                Last::Link => OFlags::PATH | OFlags::NOFOLLOW,
            };
        if self.roots.is_empty() {
            return Ok(rustix::fs::open(path, flags, mode)?);
        }
        if let Some((root, rel)) = self.locate(path) {
            match open_beneath(root.handle()?.as_fd(), rel, flags, mode, false) {
                Err(err) if err.raw_os_error() == Some(Errno::XDEV.raw_os_error()) => {}
                other => return other.map_err(|e| self.explain(path, e)),
            }
        }
        // Outside lexically, or through a link the kernel would not follow beneath the
        // root (an absolute one, or one into another root): where does it really lead?
        let canonical = self.real_location(path, last)?;
        for root in &self.roots {
            if let Ok(rel) = canonical.strip_prefix(&root.canonical) {
                return open_beneath(root.handle()?.as_fd(), rel, flags, mode, false)
                    .map_err(|e| self.explain(path, e));
            }
        }
        Err(self.outside(path, &canonical))
    }

    /// The root whose given or canonical spelling `path` starts with (the longest), and the
    /// rest of the path.
    fn locate<'p>(&self, path: &'p Path) -> Option<(&Root, &'p Path)> {
        self.roots
            .iter()
            .flat_map(|root| {
                [&root.canonical, &root.given]
                    .into_iter()
                    .filter_map(move |prefix| path.strip_prefix(prefix).ok().map(|r| (root, r)))
            })
            .min_by_key(|(_, rel)| rel.as_os_str().len())
    }

    fn real_location(&self, path: &Path, last: Last) -> io::Result<PathBuf> {
        let followed = match last {
            Last::Follow => follow_final_links(path)?,
            Last::Link => path.to_path_buf(),
        };
        canonical_lenient_sync(&followed)
    }

    /// Refuses a path that leads outside the roots, saying how.
    fn outside(&self, path: &Path, canonical: &Path) -> io::Error {
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
                "{} goes through a symbolic link to {}, which is outside the allowed directories ({listed}). Use a path whose real location is inside them",
                path.display(),
                canonical.display()
            )
        } else {
            format!(
                "{} is outside the allowed directories ({listed}). Use a path inside them",
                path.display()
            )
        };
        io::Error::new(io::ErrorKind::PermissionDenied, message)
    }

    /// An escape the kernel caught (the tree changed while we looked) reads like any other.
    fn explain(&self, path: &Path, err: io::Error) -> io::Error {
        if err.raw_os_error() == Some(Errno::XDEV.raw_os_error()) {
            let canonical = self
                .real_location(path, Last::Follow)
                .unwrap_or_else(|_| path.to_path_buf());
            return self.outside(path, &canonical);
        }
        err
    }
}

/// Opens `rel` beneath `root`: never outside it, and with `no_links` through no symbolic
/// link at all.
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
    no_links: bool,
) -> io::Result<OwnedFd> {
    let open = Beneath {
        root,
        rel: if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        },
        flags: flags | OFlags::CLOEXEC,
        mode,
        no_links,
    };
    #[cfg(target_os = "linux")]
    if let Some(opened) = open.by_kernel() {
        return opened;
    }
    let _ = &NO_OPENAT2;
    open.manual()
}

/// One open of [`open_beneath`]: `rel` (not empty) beneath `root`, with `flags` and `mode`,
/// and with `no_links` through no symbolic link at all.
#[derive(Clone, Copy)]
struct Beneath<'a> {
    root: BorrowedFd<'a>,
    rel: &'a Path,
    flags: OFlags,
    mode: Mode,
    no_links: bool,
}

impl Beneath<'_> {
    /// The open done by `openat2`; `None` where the kernel does not have it (from then on,
    /// every open goes the [`manual`](Self::manual) way).
    #[cfg(target_os = "linux")]
    fn by_kernel(self) -> Option<io::Result<OwnedFd>> {
        use rustix::fs::ResolveFlags;
        if NO_OPENAT2.load(Ordering::Relaxed) {
            return None;
        }
        let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        if self.no_links {
            resolve |= ResolveFlags::NO_SYMLINKS;
        }
        for _ in 0..8 {
            match rustix::fs::openat2(self.root, self.rel, self.flags, self.mode, resolve) {
                // A rename somewhere on the system raced with a `..`: try again.
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    return None;
                }
                other => return Some(other.map_err(io::Error::from)),
            }
        }
        Some(Err(Errno::AGAIN.into()))
    }

    /// The open without `openat2`: each component opened with `O_NOFOLLOW` relative to a
    /// handle of the one before it, `..` popping back to a handle already held (never above
    /// `root`), and a relative link's target spliced into the components still to go. An
    /// absolute link, or a `..` above `root`, fails with `EXDEV` as `openat2` does.
    fn manual(self) -> io::Result<OwnedFd> {
        let Beneath {
            root,
            rel,
            flags,
            mode,
            no_links,
        } = self;
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, rel)?;
        let mut held: Vec<OwnedFd> = Vec::new();
        let mut links = 0;
        let wants_link = flags.contains(OFlags::NOFOLLOW);
        loop {
            let current = held.last().map_or(root, |fd| fd.as_fd());
            let Some(name) = pending.pop() else {
                // The path ended on a directory reached through `..` or `.`.
                return Ok(rustix::fs::openat(
                    current,
                    ".",
                    flags & !(OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW),
                    mode,
                )?);
            };
            if name == ".." {
                if held.pop().is_none() {
                    return Err(Errno::XDEV.into());
                }
                continue;
            }
            let is_last = pending.is_empty();
            let attempt = if is_last {
                rustix::fs::openat(current, &*name, flags | OFlags::NOFOLLOW, mode)
            } else {
                rustix::fs::openat(
                    current,
                    &*name,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )
            };
            let failure = match attempt {
                Ok(fd) if is_last => {
                    // `O_PATH | O_NOFOLLOW` opens a link itself: follow it unless asked not to.
                    let is_link = flags.contains(OFlags::PATH)
                        && !wants_link
                        && rustix::fs::fstat(&fd).is_ok_and(|st| {
                            FileType::from_raw_mode(st.st_mode) == FileType::Symlink
                        });
                    if !is_link {
                        return Ok(fd);
                    }
                    Errno::LOOP
                }
                Ok(fd) => {
                    held.push(fd);
                    continue;
                }
                Err(err) => err,
            };
            if is_last && wants_link {
                return Err(failure.into());
            }
            // ELOOP (a link with O_NOFOLLOW) or ENOTDIR (a link where a directory was wanted):
            // a link to follow, if it is one.
            let target = match rustix::fs::readlinkat(current, &*name, Vec::new()) {
                Ok(target) => target,
                Err(_) => return Err(failure.into()),
            };
            if no_links {
                return Err(Errno::LOOP.into());
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(Errno::LOOP.into());
            }
            push_components(
                &mut pending,
                Path::new(OsStr::from_bytes(target.as_bytes())),
            )?;
        }
    }
}
/// Pushes `path`'s components onto `stack` so that the first is popped first; an absolute
/// path leads out of any root.
fn push_components(stack: &mut Vec<OsString>, path: &Path) -> io::Result<()> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => return Err(Errno::XDEV.into()),
            Component::CurDir => {}
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::Normal(name) => parts.push(name.to_os_string()),
        }
    }
    stack.extend(parts.into_iter().rev());
    Ok(())
}

/// What kind of file a stat describes, in words, for refusals.
pub(crate) fn kind_name(st: &Stat) -> &'static str {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "not a regular file",
    }
}

/// Refuses anything but a regular file: reading a FIFO, socket or device could block for
/// ever or consume input that belongs to someone else.
pub(crate) fn require_regular(path: &Path, st: &Stat) -> io::Result<()> {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", path.display()),
        )),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file. The file tools only open regular files; use bash if you really mean to use it",
                path.display(),
                kind_name(st)
            ),
        )),
    }
}

/// Stats `name` in `dir` without following a link.
pub(crate) fn stat_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Stat> {
    Ok(rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_fd(path: &Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).expect("open root")
    }

    /// Released roots hold no handle; the next open opens them again, and a root replaced
    /// meanwhile (moved aside, another directory made in its place) is refused.
    #[test]
    fn a_released_root_is_opened_again_only_if_it_is_the_same_directory() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        std::fs::write(root.join("f.txt"), "in").expect("write");
        let mut roots = Roots::default();
        roots.add(root.clone()).expect("add");
        let open = |roots: &Roots| {
            roots.open(
                &root.join("f.txt"),
                OFlags::RDONLY,
                Mode::empty(),
                Last::Follow,
            )
        };
        roots.release();
        assert_eq!(roots.held(), 0);
        open(&roots).expect("opened again");
        assert_eq!(roots.held(), 1);
        roots.release();
        std::fs::rename(&root, top.path().join("aside")).expect("move aside");
        std::fs::create_dir(&root).expect("mkdir");
        std::fs::write(root.join("f.txt"), "planted").expect("write");
        let err = open(&roots).expect_err("another directory");
        assert!(
            err.to_string()
                .contains("was replaced while the session was idle"),
            "{err}"
        );
    }

    /// The fallback resolves inside the root as `openat2` would and refuses every escape.
    #[test]
    fn the_manual_fallback_stays_beneath_the_root() {
        let top = tempfile::tempdir().expect("tempdir");
        let root = top.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        std::fs::write(root.join("a/b/f.txt"), "in").expect("write");
        std::fs::write(top.path().join("secret"), "out").expect("write");
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(target, root.join(at)).expect("symlink")
        };
        link("a/b", "to_b");
        link("../../secret", "a/up");
        link(top.path().join("secret").to_str().expect("utf8"), "abs");
        link("b/../b/f.txt", "a/rel");
        link("loop", "loop");
        let fd = dir_fd(&root);
        let read = |rel: &str, no_links: bool| {
            Beneath {
                root: fd.as_fd(),
                rel: Path::new(rel),
                flags: OFlags::RDONLY,
                mode: Mode::empty(),
                no_links,
            }
            .manual()
            .map(|f| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::fs::File::from(f), &mut text)
                    .expect("read");
                text
            })
            .map_err(|e| e.raw_os_error())
        };
        assert_eq!(read("a/b/f.txt", false), Ok("in".into()));
        assert_eq!(read("to_b/f.txt", false), Ok("in".into()));
        assert_eq!(read("a/rel", false), Ok("in".into()));
        assert_eq!(read("a/b/../../a/b/f.txt", false), Ok("in".into()));
        let xdev = Err(Some(Errno::XDEV.raw_os_error()));
        assert_eq!(read("../secret", false), xdev);
        assert_eq!(read("a/../../secret", false), xdev);
        assert_eq!(read("a/up", false), xdev);
        assert_eq!(read("abs", false), xdev);
        assert_eq!(read("loop", false), Err(Some(Errno::LOOP.raw_os_error())));
        assert_eq!(
            read("to_b/f.txt", true),
            Err(Some(Errno::LOOP.raw_os_error()))
        );
        // The same answers from openat2, where the kernel has it.
        let kernel = |rel: &str| {
            open_beneath(
                fd.as_fd(),
                Path::new(rel),
                OFlags::RDONLY,
                Mode::empty(),
                false,
            )
            .map(|_| ())
            .map_err(|e| e.raw_os_error())
        };
        assert_eq!(kernel("to_b/f.txt"), Ok(()));
        let kernel_xdev = Err(Some(Errno::XDEV.raw_os_error()));
        assert_eq!(kernel("a/up"), kernel_xdev);
        assert_eq!(kernel("abs"), kernel_xdev);
    }
}
