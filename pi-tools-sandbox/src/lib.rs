//! Confinement for the commands an LLM agent runs on Linux: the kernel confines what a
//! command (and everything it starts) may write and whether it may reach the network, and
//! the command's processes are tracked until they are ended.
//!
//! A [`SandboxPolicy`] says what is allowed; [`SandboxPolicy::resolve`] turns it, against a
//! working directory, into a [`Sandbox`]: the canonical writable roots, the protected paths
//! found in them, the private temporary directory, and the guards that undo what a command
//! did to git's settings and to files other programs run by themselves. A program asks the
//! [`Sandbox`] before it writes a file itself ([`Sandbox::check_write`]), and hands it to
//! [`exec::run`] (feature `process`), which confines each command in its child before `exec`
//! ([`Confinement`]).
//!
//! ```no_run
//! use pi_tools_sandbox::{SandboxMode, SandboxPolicy};
//!
//! let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_network(false);
//! let sandbox = policy.resolve("/home/me/project".as_ref())?;
//! assert!(sandbox.check_write("/home/me/project/src/main.rs".as_ref()).is_ok());
//! assert!(sandbox.check_write("/etc/passwd".as_ref()).is_err());
//! // A file other programs run by themselves stays read-only inside the writable root.
//! assert!(sandbox.check_write("/home/me/project/.envrc".as_ref()).is_err());
//! sandbox.end_session();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! What is enforced:
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
//!   command writes undone after each call (`git = "commit"`); see [`GitAccess`].
//! - **Protected paths** (git's hooks and settings, `pi-tools.toml`, `.envrc`, `.vscode/`
//!   and the other files programs run by themselves, see [`DEFAULT_PROTECTED`]) stay read-only
//!   inside the writable roots through read-only bind mounts in the command's mount
//!   namespace; one a command creates is undone after the call (`plant_guard.rs`).
//! - **Network** off: a seccomp filter makes `socket()` fail with EPERM for every family
//!   but `AF_UNIX`.
//!
//! All of it is applied in the child before `exec` ([`Confinement`]; the child is made by
//! `clone` sharing this process's memory until then, or by `fork`, see `exec/spawn.rs`), so
//! background jobs, `setsid` and double forks inherit it. A program's own writes get the
//! same roots and protected paths in-process ([`Sandbox::check_write`]). When the kernel
//! cannot enforce the policy, commands fail with an error saying so.
//!
//! The crate knows nothing of the program that uses it beyond its name in a few messages:
//! the policy comes from the caller, and the messages for a person or a model name the
//! `[sandbox]` settings of pi-tools' configuration, which the policy's fields mirror.
//!
//! Features: `process` adds running commands ([`exec::run`], [`Confinement`],
//! [`procs::Tracker`]); without it, the policy, its checks and its guards remain.
//!
// Without `process`, the items it adds are linked on docs.rs (a build with every feature).
#![cfg_attr(
    feature = "process",
    doc = "[`Confinement`]: crate::Confinement\n\
           [`exec::run`]: crate::exec::run\n\
           [`procs::Tracker`]: crate::procs::Tracker"
)]
#![cfg_attr(
    not(feature = "process"),
    doc = "[`Confinement`]: https://docs.rs/pi-tools-sandbox/latest/pi_tools_sandbox/struct.Confinement.html\n\
           [`exec::run`]: https://docs.rs/pi-tools-sandbox/latest/pi_tools_sandbox/exec/fn.run.html\n\
           [`procs::Tracker`]: https://docs.rs/pi-tools-sandbox/latest/pi_tools_sandbox/procs/struct.Tracker.html"
)]
// Every `unsafe` block says why it is sound (`clippy::undocumented_unsafe_blocks`, denied in
// the manifest), and `unsafe fn`s say what their callers must uphold.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "process")]
mod child;
mod describe;
mod dir_names;
mod dir_walker;
mod dir_watch;
pub mod exec;
mod git;
mod git_bare;
mod git_config;
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
pub mod path;
mod plant_guard;
mod plant_way;
mod policy;
#[cfg(all(target_os = "linux", feature = "process"))]
mod privileges;
mod probe;
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub mod procs;
mod protected;
#[cfg(all(target_os = "linux", feature = "process"))]
mod seccomp;
mod session;
mod shared;
mod tempdir;

#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use child::Confinement;
pub use git::GitAccess;
pub use policy::{Sandbox, SandboxMode, SandboxPolicy};
pub use probe::KernelSupport;
pub use protected::DEFAULT_PROTECTED;
pub use tempdir::PrivateTemp;
