//! The sandbox commands run in: the kernel confines what a command (and everything it
//! starts) may write and whether it may reach the network.
//!
//! - **Writes**: Landlock grants the write rights only beneath the writable roots (the
//!   working directory and a private `TMPDIR` by default) and on `/dev/null` and its kin.
//!   Reads and execution are not confined.
//! - **No host privileges**: every command runs in a user namespace of its own (or, where
//!   none can be made, with every capability dropped), so root inside cannot make device
//!   nodes, change the network or the host name; Landlock refuses device nodes anyway and,
//!   from ABI 6, keeps signals and abstract Unix sockets inside the sandbox. Its own IPC
//!   namespace and the session's `/dev/shm` keep the host's shared memory out of reach.
//! - **Nothing privileged left behind**: a seccomp filter refuses set-user-ID and
//!   set-group-ID modes and extended attributes (file capabilities), see `seccomp.rs`.
//! - **Git**: a repository's `.git` is mounted read-only (`git = "read-only"`), or
//!   writable for commits with its settings and hooks read-only and the redirect files a
//!   command writes undone after each call (`git = "commit"`); see `env/sandbox/git.rs`.
//! - **Protected paths** (git's hooks and settings, `pi-tools.toml`, `.envrc`, `.vscode/`
//!   and the other files programs run by themselves, see `protected.rs`) stay read-only
//!   inside the writable roots through read-only bind mounts in the command's mount
//!   namespace; one a command creates is undone after the call (`plant_guard.rs`).
//! - **Network** off: a seccomp filter makes `socket()` fail with EPERM for every family
//!   but `AF_UNIX`.
//!
//! All of it is applied in the child before `exec` ([`LocalEnv::exec`]; the child is made by
//! `clone` sharing this process's memory until then, or by `fork`, see `env/spawn.rs`), so
//! background jobs, `setsid` and double forks inherit it. The write and edit tools apply
//! the same roots and protected paths in-process ([`ResolvedSandbox::check_write`]). When
//! the kernel cannot enforce the policy, commands fail with an error saying so.
//!
//! [`LocalEnv::exec`]: crate::env::LocalEnv

#[cfg(feature = "process")]
mod child;
mod describe;
mod dir_walker;
mod dir_watch;
mod git;
mod git_bare;
mod git_follow;
mod git_guard;
mod git_index;
mod git_nested;
mod git_protect;
mod git_trees;
#[cfg(all(target_os = "linux", feature = "process"))]
mod landlock;
#[cfg(all(target_os = "linux", feature = "process"))]
mod mounts;
mod nofollow;
#[cfg(feature = "process")]
mod notes;
mod plant_guard;
mod plant_way;
mod policy;
#[cfg(all(target_os = "linux", feature = "process"))]
mod privileges;
mod probe;
mod protected;
#[cfg(all(target_os = "linux", feature = "process"))]
mod seccomp;
mod session;
mod shared;
mod tempdir;

#[cfg(feature = "process")]
pub(crate) use child::ChildSandbox;
pub use git::GitAccess;
#[cfg(feature = "process")]
pub(crate) use notes::CallNotes;
pub use policy::{ResolvedSandbox, SandboxMode, SandboxPolicy};
pub use probe::KernelSupport;
pub use protected::DEFAULT_PROTECTED;
pub use tempdir::PrivateTemp;
