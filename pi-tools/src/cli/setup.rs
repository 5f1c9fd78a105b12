//! What every subcommand starts from: the registered tools, the loaded configuration, the
//! toolbox, and (for the commands that run tools) the workspace: the working directory and
//! the execution environment handed to the tools, on this machine or over SSH.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{Config, ConfigSource, EnvSettings, SshSettings};
use crate::core::Extensions;
use crate::env::{ExecutionEnv, SearchIndex, WithEnv};
use crate::tool::Registry;
use crate::tool::ToolDefinition;
use crate::toolbox::Toolbox;

use super::mounted::{self, Need};
use super::{Failure, WorkspaceArgs};
use crate::mount::Mounts;

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

/// The toolbox for commands that only describe tools, with the mounted servers `need`
/// names started in the current directory; end them when done. Its descriptions and prompt
/// are what `run` and `mcp` would give there: with the sandbox the configuration describes
/// for this machine, and with none for an SSH `[env]`, where commands run unconfined.
pub(super) async fn describing_toolbox(
    source: &ConfigSource,
    need: Need<'_>,
) -> Result<(Toolbox, Arc<Mounts>), Failure> {
    let mut registered = registered()?;
    let config = config(source, &registered)?;
    let cwd = working_directory(None)?;
    let mounts = mounted::mount(&config, &cwd, &mut registered, need).await?;
    // A sandbox that cannot be set up here (a writable root that does not exist) is
    // `run`'s error to report; describing goes on without it, and so claims none.
    let extensions = match config.env {
        EnvSettings::Local => {
            extensions(&cwd, &config, SearchIndex::WhenReused).unwrap_or_default()
        }
        EnvSettings::Ssh(_) => Extensions::new(),
    };
    Ok((Toolbox::new(registered, &config, extensions), mounts))
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

/// The values every tool's context carries when this binary runs tools in `cwd`: the
/// environment the configuration describes ([`Config::local_env`]: `[paths]` and
/// `[sandbox]`), the same one a program of one's own gets. `run` and `mcp` both start from
/// here. `index`: when grep and find keep a search index (a server's sessions live long; a
/// `run` searches once).
pub(super) fn extensions(
    cwd: &Path,
    config: &Config,
    index: SearchIndex,
) -> Result<Extensions, Failure> {
    let env = config
        .local_env(cwd)
        .map_err(|e| Failure::general(e.to_string()))?
        .with_search_index(index);
    Ok(Extensions::new().with_env(Arc::new(env)))
}

/// Whether the command line uploads itself to serve commands on a remote machine that has
/// no pi-tools of its version, when `[env]` has no `upload_helper` key. Yes: without the
/// remote process every command opens an SSH session that runs the remote shell's startup
/// files (about 160 ms a call against 3 ms measured side by side), and this binary runs
/// `cli::main`, so it can serve `env-server` there. (The library's own default, for a
/// program that may not be a command line, stays off: `SshSettings::target`.)
pub(super) const UPLOAD_HELPER: bool = true;

/// Where `run` and `mcp` work.
pub(super) enum Workspace {
    /// In this directory of this machine.
    Local(PathBuf),
    /// On another machine, through one SSH connection.
    #[cfg(feature = "ssh")]
    Ssh(Arc<crate::env::remote::SshEnv>),
}

impl Workspace {
    /// The workspace `args` and `[env]` name: `--ssh` (with `[env]`'s other SSH keys and
    /// `--ssh-config`), else an SSH `[env]`, else `--cwd` or the current directory. An SSH
    /// workspace is connected here, once, so a bad host or key fails before anything runs;
    /// `[sandbox]` then does not apply (it confines processes of this machine) and is
    /// turned off in `config` so the prompt does not claim it.
    pub(super) async fn open(args: &WorkspaceArgs, config: &mut Config) -> Result<Self, Failure> {
        let ssh = match (&args.ssh, &config.env) {
            (Some(spec), env) => Some(SshSettings::from_spec(spec, env).map_err(Failure::usage)?),
            (None, EnvSettings::Ssh(settings)) => {
                if let Some(cwd) = &args.cwd {
                    return Err(Failure::usage(format!(
                        "--cwd `{}` names a local directory, but [env] in {} says the tools work over SSH; give the remote directory with --ssh [user@]host[:port]/path, or [env] cwd",
                        cwd.display(),
                        config.origin
                    )));
                }
                Some(settings.clone())
            }
            (None, EnvSettings::Local) => None,
        };
        let Some(mut settings) = ssh else {
            if args.ssh_config.is_some() {
                return Err(Failure::usage(
                    "--ssh-config applies to an SSH workspace; give --ssh [user@]host[:port]/path, or [env] kind = \"ssh\" in the configuration",
                ));
            }
            return working_directory(args.cwd.as_deref()).map(Workspace::Local);
        };
        if let Some(file) = &args.ssh_config {
            settings.ssh_config = Some(file.clone());
        }
        Self::connect(settings, config).await
    }

    #[cfg(feature = "ssh")]
    async fn connect(settings: SshSettings, config: &mut Config) -> Result<Self, Failure> {
        use crate::config::SandboxSettings;
        use crate::env::SandboxMode;
        use crate::env::remote::SshEnv;
        let host = settings.host.clone();
        let mut target = settings.target();
        target.upload_helper = settings.upload_helper.unwrap_or(UPLOAD_HELPER);
        let mut env = SshEnv::connect(target, &settings.cwd)
            .await
            .map_err(|e| Failure::general(e.to_string()))?;
        if let Some(roots) = &config.allowed_roots {
            env = env.with_allowed_roots(roots).await.map_err(|e| {
                Failure::general(format!(
                    "{e}; fix [paths] allowed_roots in the configuration or create the directory on {host}"
                ))
            })?;
        }
        let unconfined = SandboxSettings {
            mode: SandboxMode::Off,
            network: true,
            ..SandboxSettings::default()
        };
        if config.sandbox != SandboxSettings::default() && config.sandbox != unconfined {
            eprintln!(
                "pi-tools: [sandbox] confines commands run on this machine only; on {host} commands run unconfined"
            );
        }
        config.sandbox = unconfined;
        Ok(Workspace::Ssh(Arc::new(env)))
    }

    #[cfg(not(feature = "ssh"))]
    async fn connect(settings: SshSettings, _config: &mut Config) -> Result<Self, Failure> {
        Err(Failure::usage(format!(
            "this pi-tools was built without the `ssh` feature, so it cannot work on {}; build it with `--features ssh`",
            settings.host
        )))
    }

    /// Where mounted stdio servers start: the local working directory, or this process's
    /// current directory for a remote workspace (they run on this machine either way).
    pub(super) fn server_dir(&self) -> Result<PathBuf, Failure> {
        match self {
            Workspace::Local(cwd) => Ok(cwd.clone()),
            #[cfg(feature = "ssh")]
            Workspace::Ssh(_) => working_directory(None),
        }
    }

    /// The values the tools' context carries: the workspace's environment (a fresh
    /// [`LocalEnv`](crate::env::local::LocalEnv) for a local one, with `index` its search index
    /// setting).
    pub(super) fn extensions(
        &self,
        config: &Config,
        index: SearchIndex,
    ) -> Result<Extensions, Failure> {
        match self {
            Workspace::Local(cwd) => extensions(cwd, config, index),
            #[cfg(feature = "ssh")]
            Workspace::Ssh(env) => Ok(Extensions::new().with_env(env.clone())),
        }
    }

    /// The environment of one more session of a server: one whose background jobs end with
    /// that session (over the same SSH connection for a remote workspace). A server's
    /// session lives long, so its searches keep an index from the first.
    pub(super) fn session_env(&self, config: &Config) -> Result<Arc<dyn ExecutionEnv>, Failure> {
        match self {
            Workspace::Local(cwd) => Ok(Arc::new(
                config
                    .local_env(cwd)
                    .map_err(|e| Failure::general(e.to_string()))?
                    .with_search_index(SearchIndex::Always),
            )),
            #[cfg(feature = "ssh")]
            Workspace::Ssh(env) => Ok(Arc::new(env.session())),
        }
    }
}
