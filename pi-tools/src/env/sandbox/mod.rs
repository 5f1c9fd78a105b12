//! The sandbox commands run in: the kernel confines what a command (and everything it
//! starts) may write and whether it may reach the network.
//!
//! - **Writes**: Landlock grants the write rights only beneath the writable roots (the
//!   working directory and a private `TMPDIR` by default) and on `/dev/null` and its kin.
//!   Reads and execution are not confined.
//! - **Protected paths** (`.git/hooks`, `.git/config` by default) stay read-only inside the
//!   writable roots through read-only bind mounts in a private user + mount namespace, so
//!   commits still work but no hook or git setting can be planted.
//! - **Network** off: a seccomp filter makes `socket()` fail with EPERM for every family
//!   but `AF_UNIX`.
//!
//! All of it is applied in the child between `fork` and `exec` ([`LocalEnv::exec`]), so
//! background jobs, `setsid` and double forks inherit it. The write and edit tools apply
//! the same roots and protected paths in-process ([`ResolvedSandbox::check_write`]). When
//! the kernel cannot enforce the policy, commands fail with an error saying so.
//!
//! [`LocalEnv::exec`]: crate::env::LocalEnv

#[cfg(feature = "process")]
mod child;
#[cfg(all(target_os = "linux", feature = "process"))]
mod landlock;
#[cfg(all(target_os = "linux", feature = "process"))]
mod mounts;
mod policy;
mod probe;
#[cfg(all(target_os = "linux", feature = "process"))]
mod seccomp;
mod tempdir;

#[cfg(feature = "process")]
pub(crate) use child::ChildSandbox;
pub use policy::{DEFAULT_PROTECTED, ResolvedSandbox, SandboxMode, SandboxPolicy};
pub use probe::KernelSupport;
pub use tempdir::PrivateTemp;
