//! The environment a configuration describes for this machine: the one public way to turn
//! `[paths]` and `[sandbox]` into the [`LocalEnv`] the tools work in, used by the CLI's
//! `run` and `mcp` and by a program of one's own alike, so the configuration means the same
//! in every front.

use std::io;
use std::path::{Path, PathBuf};

use super::trust::{TrustStore, files_to_protect};
use super::{Config, DEFAULT_ORIGIN};
use crate::env::local::LocalEnv;
use crate::env::{SandboxMode, SandboxPolicy};

impl Config {
    /// A [`LocalEnv`] working in `cwd`, confined to `[paths] allowed_roots` when the
    /// configuration names any (relative roots are taken from `cwd`), reading pseudo-files
    /// when `[paths] pseudo_files` says so, and sandboxed by `[sandbox]` (the default
    /// confines writes to the working directory). Hand it to the tools with
    /// [`with_env`](crate::env::WithEnv::with_env); a [`Toolbox`](crate::toolbox::Toolbox)
    /// built with it tells the model what its sandbox allows.
    ///
    /// `[env]` is not looked at: this is the environment of this machine whatever it says.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pi_tools::config::Config;
    /// use pi_tools::env::{ExecutionEnv, WithEnv};
    /// use pi_tools::toolbox::Toolbox;
    /// use pi_tools::Extensions;
    ///
    /// let registered = Vec::new(); // usually every tool of the registry
    /// let config = Config::embedded(&registered)?;
    /// let project = tempfile::tempdir()?;
    /// let env = config.local_env(project.path())?;
    /// assert!(env.confinement().is_some(), "the default configuration sandboxes commands");
    /// let toolbox = Toolbox::new(registered, &config, Extensions::new().with_env(Arc::new(env)));
    /// # let _ = toolbox;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn local_env(&self, cwd: impl AsRef<Path>) -> io::Result<LocalEnv> {
        let cwd = cwd.as_ref();
        let mut env = LocalEnv::new(cwd).with_pseudo_files(self.pseudo_files);
        if let Some(roots) = &self.allowed_roots {
            env = env.with_allowed_roots(roots).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{e}; fix [paths] allowed_roots in {} or create the directory",
                        self.origin
                    ),
                )
            })?;
        }
        env.with_sandbox(self.sandbox_policy(self.allowed_roots.as_deref()))
    }

    /// `[sandbox]` as a policy, with `roots` as the writable roots when the section names
    /// none (`[paths] allowed_roots`, or an MCP client's roots). Besides its paths it protects
    /// the configuration file itself, the files it names that pi-tools runs or reads (see
    /// [`files_read`](super::trust::files_read), and those it names by a path that do not
    /// exist yet) and the user's trust records wherever a writable root holds them, so
    /// that no command can rewrite what decides the next session's sandbox or what runs
    /// outside it.
    pub fn sandbox_policy(&self, roots: Option<&[PathBuf]>) -> SandboxPolicy {
        let policy = self.sandbox.policy(roots);
        if self.sandbox.mode != SandboxMode::WorkspaceWrite {
            return policy;
        }
        let mut protected = self.sandbox.protected.clone();
        // The origin is the path the file was opened by, so relative to this process's
        // directory.
        if self.origin != DEFAULT_ORIGIN
            && let Ok(file) = std::path::absolute(&self.origin)
        {
            // And what it makes pi-tools run or read (a declared tool's script, a mounted
            // server's program, a token file): a server started again later in this process
            // runs outside the sandbox.
            if let Some(dir) = file.parent() {
                protected.extend(files_to_protect(self, dir));
            }
            protected.push(file);
        }
        if let Some(store) = TrustStore::from_env() {
            protected.push(store.dir().to_path_buf());
        }
        policy.with_protected(protected)
    }
}
