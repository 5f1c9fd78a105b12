//! The environment of tools given none: one [`LocalEnv`] on the process's current
//! directory, shared by the whole process. The interface's [`ToolContextExt`] falls back to
//! it here, so the interface itself names no implementation.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::LocalEnv;
use crate::core::ToolContext;
use crate::env::{EnvOf, ExecutionEnv, ToolContextExt};

impl ToolContextExt for ToolContext {
    fn env(&self) -> Arc<dyn ExecutionEnv> {
        match self.extensions().env() {
            Some(env) => Arc::clone(env),
            None => process_env(),
        }
    }
}

/// The environment of tools given none: one [`LocalEnv`] on the process's current directory
/// (as it was when first asked for), shared by the whole process.
///
/// ```
/// let env = pi_tools::env::local::process_env();
/// assert!(env.is_local());
/// ```
pub fn process_env() -> Arc<dyn ExecutionEnv> {
    static DEFAULT: OnceLock<Arc<dyn ExecutionEnv>> = OnceLock::new();
    Arc::clone(DEFAULT.get_or_init(|| {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Arc::new(LocalEnv::new(cwd))
    }))
}
