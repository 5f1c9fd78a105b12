//! Consent: a configuration that was found rather than named takes effect only once the
//! user has trusted that exact content, unless it only tightens the embedded default.
//!
//! *Found* is the working directory's `pi-tools.toml`, which anyone who could write to the
//! directory may have put there: a cloned repository, or a command of an earlier session.
//! *Named* is `--config` or `PI_TOOLS_CONFIG`: the user chose the file. A found file whose
//! keys loosen the default or run something ([`loosenings`]) is refused until
//! `pi-tools trust` records its canonical path with the SHA-256 of its content and of every
//! file it reads ([`files_read`]); any change to either revokes the trust by itself.
//!
//! ```
//! use pi_tools::config::{Config, ConfigSource};
//! use pi_tools::config::trust::TrustStore;
//!
//! let project = tempfile::tempdir()?;
//! std::fs::write(project.path().join("pi-tools.toml"), "[sandbox]\nmode = \"off\"\n")?;
//! let store = TrustStore::at(tempfile::tempdir()?.path());
//! let source = ConfigSource::discover(None, None, project.path());
//! let refused = source.load_trusted(&[], Some(&store)).unwrap_err().to_string();
//! assert!(refused.contains("needs the user's trust"), "{refused}");
//! assert!(refused.contains("pi-tools trust"), "{refused}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod loosening;
mod reads;
mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use loosening::{Loosening, loosenings};
pub use reads::files_read;
pub(crate) use reads::files_to_protect;
pub use store::{TRUST_FILE, TrustRecord, TrustStore, file_hash, sha256_hex};

use super::{Config, ConfigError, ConfigProblem};
use crate::tool::ToolDefinition;

/// Whether the configuration in use needed the user's trust, and why it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustState {
    /// Named by the user (`--config`, `PI_TOOLS_CONFIG`) or the embedded default.
    Named,
    /// Found, and it only tightens the embedded default: it applies without asking.
    NotNeeded,
    /// Found, loosening the default, and trusted with this content.
    Trusted(TrustRecord),
}

impl std::fmt::Display for TrustState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrustState::Named => f.write_str("not needed (a file the user named, or the default)"),
            TrustState::NotNeeded => {
                f.write_str("not needed (the file only tightens the embedded default)")
            }
            TrustState::Trusted(record) => write!(
                f,
                "trusted (this content, sha256 {}, and {} file(s) it reads)",
                &record.sha256[..12.min(record.sha256.len())],
                record.files.len()
            ),
        }
    }
}

/// What trusting a configuration file records, computed from its text as loaded.
#[derive(Debug, Clone)]
pub struct Consent {
    /// The file's canonical path.
    pub path: PathBuf,
    /// What in it needs trust (empty: nothing).
    pub loosenings: Vec<Loosening>,
    /// The record that trusts exactly this content and the files it reads now.
    pub record: TrustRecord,
}

impl Consent {
    /// Weighs `config`, loaded from `text` at `path`, against the embedded default for the
    /// same `registered` tools.
    pub fn weigh(
        path: &Path,
        text: &str,
        config: &Config,
        registered: &[Arc<dyn ToolDefinition>],
    ) -> Result<Consent, ConfigError> {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let default = Config::embedded(registered)?;
        let loosenings = loosenings(config, &default, &dir);
        let files = files_read(config, &dir)
            .into_iter()
            .map(|f| {
                let hash = file_hash(&f);
                (std::fs::canonicalize(&f).unwrap_or(f), hash)
            })
            .collect();
        let trusted_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ok(Consent {
            record: TrustRecord {
                path: path.clone(),
                sha256: sha256_hex(text.as_bytes()),
                files,
                trusted_at,
            },
            path,
            loosenings,
        })
    }

    /// The state under `store`: [`TrustState::NotNeeded`], [`TrustState::Trusted`], or an
    /// error naming the file, the keys that need trust and the command that grants it.
    /// Without a store (no home directory) nothing can be trusted.
    pub fn decide(&self, store: Option<&TrustStore>) -> Result<TrustState, ConfigError> {
        if self.loosenings.is_empty() {
            return Ok(TrustState::NotNeeded);
        }
        let recorded = match store.map(|s| s.record(&self.path)) {
            Some(Ok(recorded)) => recorded,
            Some(Err(e)) => {
                return Err(self.refusal(&format!("its trust record cannot be read: {e}")));
            }
            None => None,
        };
        match recorded {
            Some(record)
                if record.sha256 == self.record.sha256 && record.files == self.record.files =>
            {
                Ok(TrustState::Trusted(record))
            }
            Some(record) => {
                let what = if record.sha256 != self.record.sha256 {
                    "it changed since it was trusted".to_owned()
                } else {
                    let changed: Vec<String> = self
                        .record
                        .files
                        .iter()
                        .filter(|(f, h)| record.files.get(*f) != Some(h))
                        .map(|(f, _)| f.display().to_string())
                        .chain(
                            record
                                .files
                                .keys()
                                .filter(|f| !self.record.files.contains_key(*f))
                                .map(|f| f.display().to_string()),
                        )
                        .collect();
                    format!(
                        "a file it reads changed since it was trusted ({})",
                        changed.join(", ")
                    )
                };
                Err(self.refusal(&what))
            }
            None if store.is_none() => Err(self
                .refusal("no trust record can be kept (neither XDG_CONFIG_HOME nor HOME is set)")),
            None => Err(self.refusal("it has never been trusted")),
        }
    }

    fn refusal(&self, state: &str) -> ConfigError {
        let keys: Vec<String> = self.loosenings.iter().map(ToString::to_string).collect();
        ConfigError {
            problems: vec![ConfigProblem {
                origin: self.path.display().to_string(),
                line: 0,
                column: 0,
                message: format!(
                    "this configuration was found in the working directory, and it needs the user's trust before it applies, but {state}. It needs trust because of: {}. Nothing from it was run. Read it (and the files it names), then run `pi-tools trust {}` to trust this exact content; or name a file you trust with --config.",
                    keys.join("; "),
                    self.path.display()
                ),
            }],
        }
    }
}
