//! The `[sandbox]` section: how far commands (and the write and edit tools) are confined.
//!
//! ```toml
//! [sandbox]
//! mode = "workspace-write"          # or "read-only", or "off"
//! network = true                    # false: commands cannot open network sockets
//! writable_roots = ["."]            # default: [paths] allowed_roots, else the working directory
//! protected = ["secrets"]          # read-only inside the writable roots, besides the defaults
//! default_protected = true          # false: drop the defaults (git's hooks and settings,
//!                                   # pi-tools.toml, .envrc, .vscode/, ...; see DEFAULT_PROTECTED)
//! git = "read-only"                 # or "commit": commands may commit (see the safety document, docs/safety.md in the repository)
//! ```

use std::path::PathBuf;

use crate::env::sandbox::DEFAULT_PROTECTED;
use crate::env::{GitAccess, SandboxMode, SandboxPolicy};

/// `[sandbox]` as configured. Absent keys take the defaults: workspace-write, network on,
/// the default writable roots and [`DEFAULT_PROTECTED`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// How far writes are confined.
    pub mode: SandboxMode,
    /// Whether commands may open network sockets.
    pub network: bool,
    /// Writable directories (`None`: `[paths] allowed_roots`, else the working directory);
    /// relative ones are taken from the working directory.
    pub writable_roots: Option<Vec<PathBuf>>,
    /// Paths relative to each writable root that stay read-only: [`DEFAULT_PROTECTED`]
    /// (unless `default_protected` is false) and those of `[sandbox] protected`.
    pub protected: Vec<PathBuf>,
    /// `[sandbox] default_protected`: whether [`DEFAULT_PROTECTED`] is part of `protected`
    /// (default `true`; `false` is a loosening that needs the user's trust in a found
    /// file).
    pub default_protected: bool,
    /// How commands may use a repository's `.git` (default read-only).
    pub git: GitAccess,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: SandboxMode::WorkspaceWrite,
            network: true,
            writable_roots: None,
            protected: DEFAULT_PROTECTED.iter().map(PathBuf::from).collect(),
            default_protected: true,
            git: GitAccess::default(),
        }
    }
}

impl SandboxSettings {
    /// The policy these settings describe; `allowed_roots` (from `[paths]`) are the writable
    /// roots when the section names none.
    pub fn policy(&self, allowed_roots: Option<&[PathBuf]>) -> SandboxPolicy {
        let policy = SandboxPolicy::new(self.mode)
            .with_network(self.network)
            .with_protected(self.protected.iter().cloned())
            .with_git(self.git);
        match (&self.writable_roots, allowed_roots) {
            (Some(roots), _) => policy.with_writable_roots(roots.iter().cloned()),
            (None, Some(roots)) => policy.with_writable_roots(roots.iter().cloned()),
            (None, None) => policy,
        }
    }

    /// Where commands may write and whether they reach the network, as one sentence for
    /// the model (`None` when the sandbox is off with the network on): what
    /// [`SandboxPolicy::describe`] says of [`policy`](Self::policy). A toolbox takes the
    /// sentence from the environment the tools work in, never from here, so that it is only
    /// said where a sandbox enforces it.
    pub fn describe(&self, allowed_roots: Option<&[PathBuf]>) -> Option<String> {
        self.policy(allowed_roots).describe()
    }
}
