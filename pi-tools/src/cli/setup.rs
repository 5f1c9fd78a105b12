//! What every subcommand starts from: the registered tools, the loaded configuration, the
//! toolbox, and (for the commands that run tools) the working directory and the execution
//! environment handed to the tools.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{Config, ConfigSource};
use crate::core::Extensions;
use crate::env::{ExecutionEnv, LocalEnv};
use crate::tool::Registry;
use crate::tool::ToolDefinition;
use crate::toolbox::Toolbox;

use super::Failure;

/// Every `#[tool]` linked into this binary, sorted by name.
pub(super) fn registered() -> Result<Vec<Arc<dyn ToolDefinition>>, Failure> {
    let registry = Registry::from_inventory().map_err(|e| Failure::general(e.to_string()))?;
    Ok(registry.iter().cloned().collect())
}

/// The configuration `source` names, validated against `registered`. A problem fails with
/// the configuration's own `file:line:column` messages.
pub(super) fn config(
    source: &ConfigSource,
    registered: &[Arc<dyn ToolDefinition>],
) -> Result<Config, Failure> {
    source
        .load(registered)
        .map_err(|e| Failure::general(e.to_string()))
}

/// The toolbox for commands that only describe tools (no execution environment).
pub(super) fn describing_toolbox(source: &ConfigSource) -> Result<Toolbox, Failure> {
    let registered = registered()?;
    let config = config(source, &registered)?;
    Ok(Toolbox::new(registered, &config, Extensions::new()))
}

/// The toolbox for commands that run tools in `cwd`.
pub(super) fn running_toolbox(source: &ConfigSource, cwd: &Path) -> Result<Toolbox, Failure> {
    let registered = registered()?;
    let config = config(source, &registered)?;
    let extensions = extensions(cwd, &config)?;
    Ok(Toolbox::new(registered, &config, extensions))
}

/// The working directory: `--cwd` when given (it must be an existing directory), else the
/// process's current directory; absolute either way.
pub(super) fn working_directory(cwd: Option<&Path>) -> Result<PathBuf, Failure> {
    let Some(dir) = cwd else {
        return std::env::current_dir().map_err(|e| {
            Failure::general(format!(
                "cannot determine the current directory ({e}); pass the directory to work in with --cwd"
            ))
        });
    };
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => std::path::absolute(dir).map_err(|e| {
            Failure::usage(format!(
                "cannot resolve --cwd `{}` ({e}); pass an absolute directory path",
                dir.display()
            ))
        }),
        Ok(_) => Err(Failure::usage(format!(
            "--cwd `{}` is not a directory; pass the directory the tools should work in",
            dir.display()
        ))),
        Err(e) => Err(Failure::usage(format!(
            "--cwd `{}` is not an existing directory ({e}); create it or pass another directory",
            dir.display()
        ))),
    }
}

/// The values every tool's context carries when this binary runs tools in `cwd`: a
/// [`LocalEnv`] rooted there, confined to `[paths] allowed_roots` when the configuration
/// names any (relative roots are taken from `cwd`) and sandboxed by `[sandbox]`. `run` and
/// `mcp` both start from here.
pub(super) fn extensions(cwd: &Path, config: &Config) -> Result<Extensions, Failure> {
    let mut env = LocalEnv::new(cwd);
    if let Some(roots) = &config.allowed_roots {
        env = env.with_allowed_roots(roots).map_err(|e| {
            Failure::general(format!(
                "{e}; fix [paths] allowed_roots in the configuration or create the directory"
            ))
        })?;
    }
    let policy = config.sandbox.policy(config.allowed_roots.as_deref());
    let env = env
        .with_sandbox(policy)
        .map_err(|e| Failure::general(e.to_string()))?;
    let env: Arc<dyn ExecutionEnv> = Arc::new(env);
    Ok(Extensions::new().with(env))
}
