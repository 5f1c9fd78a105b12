//! What mounting needs beyond the servers' own entries: the sandbox a server with
//! `sandbox = true` runs under, and the largest message a server may send. A program that
//! mounts servers in code sets these; the command line takes them from its configuration.

use crate::config::{Config, DEFAULT_MAX_MESSAGE_BYTES, SandboxSettings};
use crate::env::sandbox::SandboxPolicy;

/// The settings every mounted server shares.
#[derive(Debug, Clone)]
pub struct MountOptions {
    /// The sandbox of stdio servers whose entry says `sandbox = true` (default: the
    /// default `[sandbox]`: writes only in the working directory and the temporary one).
    pub sandbox: SandboxPolicy,
    /// The largest message a server may send (default [`DEFAULT_MAX_MESSAGE_BYTES`]).
    pub max_message_bytes: usize,
}

impl Default for MountOptions {
    fn default() -> Self {
        MountOptions {
            sandbox: SandboxSettings::default().policy(None),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl MountOptions {
    /// The options a configuration gives: its `[sandbox]` (with `[paths] allowed_roots` as
    /// the writable roots when it names none) and `[mcp] max_message_bytes`.
    pub fn from_config(config: &Config) -> Self {
        MountOptions {
            sandbox: config.sandbox_policy(config.allowed_roots.as_deref()),
            max_message_bytes: config
                .mcp_max_message_bytes
                .unwrap_or(DEFAULT_MAX_MESSAGE_BYTES),
        }
    }
}
