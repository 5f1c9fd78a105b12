//! The environments of another machine: `SshEnv` (with the `ssh` feature) works on one
//! through OpenSSH, and the link carries its commands and calls to a `pi-tools env-server`
//! there. [`HostKeyPolicy`] is here in every build, so the configuration can name it.
//!
//! Nothing here uses the local environment: what both need sits in the interface
//! ([`crate::env`]) below them.

mod host_key;
// The link and owned children serve the SSH environment and mounted servers (and the
// CLI's `env-server`, which needs `mount`): a build with neither has no use for them.
#[cfg(any(feature = "ssh", feature = "mount"))]
pub(crate) mod link;
#[cfg(any(feature = "ssh", feature = "mount"))]
pub(crate) mod owned;
#[cfg(feature = "ssh")]
mod ssh;

pub use host_key::HostKeyPolicy;
#[cfg(feature = "ssh")]
pub use ssh::{SshEnv, SshTarget};
