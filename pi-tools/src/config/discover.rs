//! Which configuration file applies: `--config`, then the `PI_TOOLS_CONFIG` environment
//! variable, then `pi-tools.toml` in the working directory, then the embedded default.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::trust::{Consent, TrustState, TrustStore};
use super::{Config, ConfigError};
use crate::tool::ToolDefinition;

/// The environment variable naming a configuration file when `--config` is not given.
pub const CONFIG_ENV: &str = "PI_TOOLS_CONFIG";

/// The file name looked for in the working directory.
pub const CONFIG_FILE_NAME: &str = "pi-tools.toml";

/// Where the configuration in use comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// Named on the command line (`--config`).
    Flag(PathBuf),
    /// Named by [`CONFIG_ENV`].
    Env(PathBuf),
    /// [`CONFIG_FILE_NAME`] found in the working directory.
    WorkingDirectory(PathBuf),
    /// No file: the embedded default.
    Embedded,
}

impl ConfigSource {
    /// Finds the configuration: `flag` when given, else `env` (the value of
    /// [`CONFIG_ENV`]) when set and not empty, else `cwd/pi-tools.toml` when that file
    /// exists, else the embedded default. A named file that does not exist is still chosen
    /// (loading it then says it cannot be read): a typo must not silently fall back.
    pub fn discover(flag: Option<&Path>, env: Option<OsString>, cwd: &Path) -> ConfigSource {
        if let Some(path) = flag {
            return ConfigSource::Flag(path.to_owned());
        }
        if let Some(value) = env.filter(|v| !v.is_empty()) {
            return ConfigSource::Env(PathBuf::from(value));
        }
        let local = cwd.join(CONFIG_FILE_NAME);
        if local.is_file() {
            return ConfigSource::WorkingDirectory(local);
        }
        ConfigSource::Embedded
    }

    /// [`ConfigSource::discover`] with this process's environment and current directory.
    pub fn from_process(flag: Option<&Path>) -> ConfigSource {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        ConfigSource::discover(flag, std::env::var_os(CONFIG_ENV), &cwd)
    }

    /// The file to load, or `None` for the embedded default.
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigSource::Flag(path)
            | ConfigSource::Env(path)
            | ConfigSource::WorkingDirectory(path) => Some(path),
            ConfigSource::Embedded => None,
        }
    }

    /// Loads and validates the configuration this source names. A file found in the
    /// working directory applies only when it tightens the embedded default or the user
    /// has trusted its content (see [`trust`](super::trust)); the trust records are the
    /// user's ([`TrustStore::from_env`]).
    pub fn load(&self, registered: &[Arc<dyn ToolDefinition>]) -> Result<Config, ConfigError> {
        self.load_trusted(registered, TrustStore::from_env().as_ref())
            .map(|(config, _)| config)
    }

    /// [`load`](Self::load) with the trust records of `store`, and the trust state.
    pub fn load_trusted(
        &self,
        registered: &[Arc<dyn ToolDefinition>],
        store: Option<&TrustStore>,
    ) -> Result<(Config, TrustState), ConfigError> {
        let ConfigSource::WorkingDirectory(path) = self else {
            return self.load_named(registered).map(|c| (c, TrustState::Named));
        };
        // The text weighed is the text loaded: read once.
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            problems: vec![super::ConfigProblem {
                origin: path.display().to_string(),
                line: 0,
                column: 0,
                message: format!(
                    "cannot read the configuration file found in the working directory ({e}); fix its permissions, or name another file with --config"
                ),
            }],
        })?;
        let config = Config::parse(&text, &path.display().to_string(), registered)?;
        let state = Consent::weigh(path, &text, &config, registered)?.decide(store)?;
        Ok((config, state))
    }

    fn load_named(&self, registered: &[Arc<dyn ToolDefinition>]) -> Result<Config, ConfigError> {
        Config::load(self.path(), registered).map_err(|mut error| {
            if let ConfigSource::Env(_) = self {
                // An unreadable file: point at the variable that named it, not at --config.
                for problem in &mut error.problems {
                    problem.message = problem.message.replace(
                        "the path given with --config",
                        &format!("the path in {CONFIG_ENV}"),
                    );
                }
            }
            error
        })
    }
}

impl std::fmt::Display for ConfigSource {
    /// `pi-tools.toml (from --config)`, `… (from PI_TOOLS_CONFIG)`, `… (found in the
    /// working directory)` or `the embedded default`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigSource::Flag(path) => write!(f, "{} (from --config)", path.display()),
            ConfigSource::Env(path) => write!(f, "{} (from {CONFIG_ENV})", path.display()),
            ConfigSource::WorkingDirectory(path) => {
                write!(f, "{} (found in the working directory)", path.display())
            }
            ConfigSource::Embedded => f.write_str("the embedded default"),
        }
    }
}
