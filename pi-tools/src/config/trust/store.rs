//! The trust records: which configuration files the user has trusted, each with a hash of
//! its content and of every file it reads. They live in the user's own configuration
//! directory (`$XDG_CONFIG_HOME/pi-tools/trusted.json`, else
//! `~/.config/pi-tools/trusted.json`), outside every workspace, and the sandbox protects
//! them.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The records' file name in [`TrustStore::dir`].
pub const TRUST_FILE: &str = "trusted.json";

/// What a missing file hashes to (so a file that appears later revokes the trust).
const MISSING: &str = "missing";

/// One trusted configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The file's canonical path.
    pub path: PathBuf,
    /// The SHA-256 of its content, in hex.
    pub sha256: String,
    /// The files it reads (scripts, token files, ...), each with its content's SHA-256.
    #[serde(default)]
    pub files: BTreeMap<PathBuf, String>,
    /// When it was trusted, in seconds since the Unix epoch.
    #[serde(default)]
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    version: u32,
    #[serde(default)]
    trusted: Vec<TrustRecord>,
}

/// The trust records of one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    dir: PathBuf,
}

impl TrustStore {
    /// The store in `dir` (its records in `dir/trusted.json`).
    pub fn at(dir: impl Into<PathBuf>) -> TrustStore {
        TrustStore { dir: dir.into() }
    }

    /// The user's store: `$XDG_CONFIG_HOME/pi-tools` when that is an absolute path, else
    /// `$HOME/.config/pi-tools`; `None` when neither is known.
    pub fn from_env() -> Option<TrustStore> {
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        let base = xdg.or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".config"))
        })?;
        Some(TrustStore::at(base.join("pi-tools")))
    }

    /// The directory holding the records.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every record, in the order they were made. A store that does not exist yet has none;
    /// one that cannot be read or parsed is an error (nothing is trusted from it).
    pub fn records(&self) -> io::Result<Vec<TrustRecord>> {
        let file = self.dir.join(TRUST_FILE);
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let records: Records = serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is not a trust record file ({e}); remove it and trust the files again",
                    file.display()
                ),
            )
        })?;
        Ok(records.trusted)
    }

    /// The record of `path` (canonical), if any.
    pub fn record(&self, path: &Path) -> io::Result<Option<TrustRecord>> {
        Ok(self.records()?.into_iter().find(|r| r.path == path))
    }

    /// Records `record`, replacing the one of the same path.
    pub fn insert(&self, record: TrustRecord) -> io::Result<()> {
        let mut records = self.records()?;
        records.retain(|r| r.path != record.path);
        records.push(record);
        self.save(records)
    }

    /// Removes the record of `path`; whether there was one.
    pub fn revoke(&self, path: &Path) -> io::Result<bool> {
        let mut records = self.records()?;
        let before = records.len();
        records.retain(|r| r.path != path);
        let removed = records.len() != before;
        if removed {
            self.save(records)?;
        }
        Ok(removed)
    }

    /// Writes the records whole: to a new file in the same directory, then renamed over the
    /// old one, so a reader never sees half a file.
    fn save(&self, trusted: Vec<TrustRecord>) -> io::Result<()> {
        create_private_dir(&self.dir)?;
        let text = serde_json::to_string_pretty(&Records {
            version: 1,
            trusted,
        })
        .map_err(io::Error::other)?;
        let file = self.dir.join(TRUST_FILE);
        let temp = self
            .dir
            .join(format!(".{TRUST_FILE}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut out = std::fs::File::create(&temp)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\n")?;
            out.sync_all()?;
            std::fs::rename(&temp, &file)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written
    }
}

/// Makes `dir` (and its parents) readable by its owner only, when it does not exist.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// The SHA-256 of `bytes`, in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// The hash of the file at `path` as a record holds it: its content's, or `missing`.
pub fn file_hash(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => sha256_hex(&bytes),
        Err(_) => MISSING.to_owned(),
    }
}
