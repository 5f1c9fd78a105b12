//! The environment a configuration describes for this machine: the one public way to turn
//! `[paths]` and `[sandbox]` into the [`LocalEnv`] the tools work in, used by the CLI's
//! `run` and `mcp` and by a program of one's own alike, so the configuration means the same
//! in every front.

use std::io;
use std::path::Path;

use super::Config;
use crate::env::LocalEnv;

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
        env.with_sandbox(self.sandbox.policy(self.allowed_roots.as_deref()))
    }
}
