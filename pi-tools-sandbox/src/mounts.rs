//! The child's own user namespace, and protected paths inside writable roots.
//!
//! Every sandboxed command runs in a user namespace of its own, so it holds no capability
//! over anything the rest of the system owns: root inside cannot make device nodes, change
//! the network, the host name or the mounts of the system, whatever the workspace holds.
//! It gets an IPC namespace of its own too, so System V IPC objects are its own.
//!
//! Landlock only adds rights, so it cannot keep `.git` read-only beneath a writable
//! workspace; a private mount namespace (in that user namespace) can: the child bind-mounts
//! each protected path onto itself read-only before Landlock is applied (then Landlock
//! forbids changing mounts), and bind-mounts each anchor (a `.git` directory, and each
//! directory on the way to a protected path below the top of its root) onto itself so it
//! cannot be renamed away and replaced.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Everything the child needs, prepared by the parent (no allocation after `fork`).
#[derive(Debug)]
pub(super) struct MountPlan {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    targets: Vec<Target>,
    /// The session's directory to mount on `/dev/shm`, hiding the host's.
    shm: Option<CString>,
}

#[derive(Debug)]
struct Target {
    path: CString,
    /// Remount flags: read-only plus the flags the mount already has, which a user
    /// namespace may not drop.
    read_only: Option<libc::c_ulong>,
}

impl MountPlan {
    /// A plan that anchors `anchors` (writable), protects `protected` (read-only) and
    /// mounts `shm` on `/dev/shm`; the protected paths that do not exist are left out
    /// (there is nothing to mount on). With nothing to mount, the plan is the user and IPC
    /// namespaces alone.
    ///
    /// A protected path of `in_place` deeper than the top of its writable root in `roots`
    /// (such as `.cargo/config.toml`) also gets each directory on its way below the root
    /// anchored: a read-only mount holds only the path itself, and a command could
    /// otherwise rename its directory away and make a new one with a file of its own at the
    /// protected name. A mount point cannot be renamed or removed; what is inside it stays
    /// writable. (Git's paths are not in `in_place`: a repository may be moved, and the git
    /// guard follows it.)
    pub(super) fn new(
        anchors: &[impl AsRef<Path>],
        protected: &[impl AsRef<Path>],
        in_place: &[impl AsRef<Path>],
        roots: &[impl AsRef<Path>],
        shm: Option<&Path>,
    ) -> io::Result<MountPlan> {
        // Most protected paths are missing; their directories are read once each.
        let exist = crate::dir_names::exist(protected);
        let existing: Vec<&Path> = protected
            .iter()
            .zip(exist)
            .filter(|(_, exists)| *exists)
            .map(|(path, _)| path.as_ref())
            .collect();
        let mut anchored: Vec<&Path> = anchors.iter().map(AsRef::as_ref).collect();
        let held = existing
            .iter()
            // Both sides are canonical: their bytes are compared, not their components
            // (this runs before every call).
            .filter(|path| {
                in_place
                    .iter()
                    .any(|p| p.as_ref().as_os_str() == path.as_os_str())
            });
        for path in held {
            for way in ways(path, roots) {
                if !anchored.contains(&way) {
                    anchored.push(way);
                }
            }
        }
        // A directory before what is inside it: a bind mount made later onto a directory
        // would hide the mounts below it.
        anchored.sort_by_key(|path| path.components().count());
        let mut targets = Vec::new();
        for anchor in anchored {
            targets.push(Target {
                path: c_path(anchor)?,
                read_only: None,
            });
        }
        for path in existing {
            targets.push(Target {
                path: c_path(path)?,
                read_only: Some(
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked_flags(path),
                ),
            });
        }
        if targets.iter().all(|t| t.read_only.is_none()) {
            targets.clear();
        }
        let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
        let (uid, gid) = (uid.as_raw(), gid.as_raw());
        Ok(MountPlan {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            targets,
            shm: shm.map(c_path).transpose()?,
        })
    }

    /// The namespaces the child needs: its own user and IPC namespaces, and a mount namespace
    /// when there is something to mount.
    pub(super) fn namespace_flags(&self) -> libc::c_int {
        // An IPC namespace of its own: the host's System V shared memory, message queues
        // and semaphores (and POSIX message queues) are out of sight, and what the command
        // makes there is gone once its last process is.
        if self.mounts() {
            libc::CLONE_NEWUSER | libc::CLONE_NEWIPC | libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWUSER | libc::CLONE_NEWIPC
        }
    }

    fn mounts(&self) -> bool {
        !self.targets.is_empty() || self.shm.is_some()
    }

    /// In a forked child: the namespaces ([`namespace_flags`](Self::namespace_flags)), then
    /// what [`apply_inside`](Self::apply_inside) does.
    pub(super) fn apply(&self) -> io::Result<()> {
        // SAFETY: unshare takes flags only.
        check(unsafe { libc::unshare(self.namespace_flags()) })?;
        self.apply_inside()
    }

    /// In a child already in the namespaces of [`namespace_flags`](Self::namespace_flags)
    /// (made by `unshare` or by `clone`): its user and group maps, then the bind mounts. Only
    /// system calls on data prepared before the child started; writes no memory but its
    /// own stack.
    pub(super) fn apply_inside(&self) -> io::Result<()> {
        // The mounts stay libc's: rustix's safe mount calls (its `mount` feature) split a
        // bind remount's MS_* word, prepared in the parent with the file system's locked
        // flags, into typed flag sets; these steps run in a child that shares this
        // process's memory, and are left as they were proven by the attack tests.
        // SAFETY: plain system calls on NUL-terminated strings prepared before fork.
        unsafe {
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &self.uid_map)?;
            write_proc(c"/proc/self/gid_map", &self.gid_map)?;
            if !self.mounts() {
                return Ok(());
            }
            // Private, so nothing done here reaches the mounts of the rest of the system.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for target in &self.targets {
                check(libc::mount(
                    target.path.as_ptr(),
                    target.path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
                if let Some(flags) = target.read_only {
                    check(libc::mount(
                        std::ptr::null(),
                        target.path.as_ptr(),
                        std::ptr::null(),
                        flags,
                        std::ptr::null(),
                    ))?;
                }
            }
            if let Some(shm) = &self.shm {
                check(libc::mount(
                    shm.as_ptr(),
                    c"/dev/shm".as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }
}

/// The directories between the writable root of `roots` that holds `path` (the deepest
/// one) and `path`, both left out: none for a path at the top of its root or outside every
/// root.
fn ways<'a>(path: &'a Path, roots: &[impl AsRef<Path>]) -> Vec<&'a Path> {
    let Some(root) = roots
        .iter()
        .map(AsRef::as_ref)
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.components().count())
    else {
        return Vec::new();
    };
    path.ancestors()
        .skip(1)
        .take_while(|dir| *dir != root && dir.starts_with(root))
        .collect()
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} contains a NUL byte and cannot be protected",
                path.display()
            ),
        )
    })
}

/// The mount flags of the file system `path` is on that a bind remount must keep.
fn locked_flags(path: &Path) -> libc::c_ulong {
    use rustix::fs::StatVfsMountFlags as St;
    let Ok(stat) = rustix::fs::statvfs(path) else {
        return 0;
    };
    // The mount flags stay libc's: the remount itself is a raw `mount` (see `apply_inside`).
    let pairs = [
        (St::NOSUID, libc::MS_NOSUID),
        (St::NODEV, libc::MS_NODEV),
        (St::NOEXEC, libc::MS_NOEXEC),
        (St::NOATIME, libc::MS_NOATIME),
        (St::NODIRATIME, libc::MS_NODIRATIME),
        (St::RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st, _)| stat.f_flag.contains(*st))
        .fold(0, |acc, (_, ms)| acc | ms)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `data` to a /proc file with raw calls (safe after fork).
///
/// # Safety
///
/// Only for a child between `fork` (or `clone`) and `exec`, where it may be called: it
/// allocates nothing and touches no memory but `path`, `data` and its own stack. `path` is
/// a valid NUL-terminated string (a `&CStr` is).
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: the caller passes a valid path; the fd is closed on every path.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if written < 0 || written as usize != data.len() {
            return Err(err);
        }
    }
    Ok(())
}

/// Whether this process can give a child its own user and mount namespaces: tried once in a
/// forked child (a switch that allows them can still be overridden by a seccomp profile or a
/// security module, as in many containers).
pub(super) fn namespaces_work() -> bool {
    let Ok(plan) = MountPlan::new(
        &[] as &[&Path],
        &[] as &[&Path],
        &[] as &[&Path],
        &[] as &[&Path],
        None,
    ) else {
        return false;
    };
    // fork stays libc's: rustix's is unsafe too, and meant for a runtime of its own.
    // SAFETY: the child only makes system calls on data prepared before fork, then _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return false;
    }
    if pid == 0 {
        // SAFETY: as above; the child never returns from this block.
        unsafe {
            let ok = plan.apply().is_ok()
                && libc::unshare(libc::CLONE_NEWNS) == 0
                && libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0;
            libc::_exit(if ok { 0 } else { 1 });
        }
    }
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    loop {
        match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()) {
            Ok(Some((_, status))) => return status.exit_status() == Some(0),
            Ok(None) => return false,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ways_are_the_directories_below_the_deepest_root_holding_the_path() {
        let roots = [
            Path::new("/w"),
            Path::new("/w/sub/tmp"),
            Path::new("/other"),
        ];
        let ways_of = |path: &str| -> Vec<String> {
            ways(Path::new(path), &roots)
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        assert_eq!(ways_of("/w/.cargo/config.toml"), ["/w/.cargo"]);
        assert_eq!(ways_of("/w/a/b/c.sh"), ["/w/a/b", "/w/a"]);
        assert_eq!(ways_of("/w/pi-tools.toml"), Vec::<String>::new());
        assert_eq!(ways_of("/w/sub/tmp/x/y"), ["/w/sub/tmp/x"]);
        assert_eq!(ways_of("/elsewhere/a/b"), Vec::<String>::new());
        // A root named by its components, not its bytes: `/w2` is not below `/w`.
        assert_eq!(ways_of("/w2/a/b"), Vec::<String>::new());
    }
}
