//! `pi-tools trust`: the user's consent to a configuration file found in a working
//! directory, recorded with the hash of its content and of the files it reads (see
//! [`crate::config::trust`]); `--list` and `--revoke` manage the records.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::config::trust::{Consent, TrustRecord, TrustStore, file_hash, sha256_hex};
use crate::config::{CONFIG_FILE_NAME, Config};

use super::{Failure, emit, setup};

/// `pi-tools trust [PATH] [--list | --revoke]`.
#[derive(Debug, Args)]
pub(super) struct TrustArgs {
    /// The configuration file (default: ./pi-tools.toml).
    #[arg(value_name = "PATH")]
    path: Option<PathBuf>,
    /// List the trusted files, and whether each still has the content that was trusted.
    #[arg(long, conflicts_with_all = ["revoke", "path"])]
    list: bool,
    /// Remove the trust of PATH.
    #[arg(long)]
    revoke: bool,
}

pub(super) fn trust(args: TrustArgs) -> Result<ExitCode, Failure> {
    let store = TrustStore::from_env().ok_or_else(|| {
        Failure::general(
            "no trust record can be kept: set HOME (or XDG_CONFIG_HOME) to the user's own directory",
        )
    })?;
    if args.list {
        return list(&store);
    }
    let path = args.path.unwrap_or_else(|| PathBuf::from(CONFIG_FILE_NAME));
    let canonical = std::fs::canonicalize(&path)
        .or_else(|_| std::path::absolute(&path))
        .map_err(|e| Failure::usage(format!("cannot resolve `{}` ({e})", path.display())))?;
    if args.revoke {
        let removed = store
            .revoke(&canonical)
            .map_err(|e| Failure::general(format!("the trust records cannot be changed: {e}")))?;
        emit::print(&if removed {
            format!("revoked the trust of {}", canonical.display())
        } else {
            format!("{} was not trusted; nothing changed", canonical.display())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let text = std::fs::read_to_string(&canonical).map_err(|e| {
        Failure::usage(format!(
            "cannot read {} ({e}); give the path of the configuration file to trust",
            canonical.display()
        ))
    })?;
    let registered = setup::registered()?;
    // An invalid file is not trusted: what it means cannot be shown.
    let config = Config::parse(&text, &canonical.display().to_string(), &registered)
        .map_err(|e| Failure::general(format!("{e}\nnothing was trusted: fix the file first")))?;
    let consent = Consent::weigh(&canonical, &text, &config, &registered)
        .map_err(|e| Failure::general(e.to_string()))?;
    store
        .insert(consent.record.clone())
        .map_err(|e| Failure::general(format!("the trust records cannot be written: {e}")))?;
    emit::print(&describe(&consent))?;
    Ok(ExitCode::SUCCESS)
}

/// What was trusted, and what that lets the file do.
fn describe(consent: &Consent) -> String {
    let record = &consent.record;
    let mut lines = vec![format!(
        "trusted {} (sha256 {})",
        record.path.display(),
        record.sha256
    )];
    if consent.loosenings.is_empty() {
        lines.push(
            "it only tightens the embedded default, so it applied without trust too".to_owned(),
        );
    } else {
        lines.push("it may now:".to_owned());
        for loosening in &consent.loosenings {
            lines.push(format!("  {loosening}"));
        }
    }
    if !record.files.is_empty() {
        lines.push("files it reads (a change to any of them revokes the trust):".to_owned());
        for file in record.files.keys() {
            lines.push(format!("  {}", file.display()));
        }
    }
    lines.push("a change to the file revokes the trust by itself".to_owned());
    lines.join("\n")
}

fn list(store: &TrustStore) -> Result<ExitCode, Failure> {
    let records = store
        .records()
        .map_err(|e| Failure::general(format!("the trust records cannot be read: {e}")))?;
    if records.is_empty() {
        emit::print(&format!(
            "no configuration file is trusted (records: {})",
            store.dir().join(crate::config::trust::TRUST_FILE).display()
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let lines: Vec<String> = records
        .iter()
        .map(|r| format!("{}: {}", r.path.display(), state(r)))
        .collect();
    emit::print(&lines.join("\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// Whether the file still has the trusted content (the files it reads are checked when it
/// is loaded: they depend on what it says).
fn state(record: &TrustRecord) -> String {
    let short = &record.sha256[..12.min(record.sha256.len())];
    match std::fs::read(&record.path) {
        Ok(bytes) if sha256_hex(&bytes) == record.sha256 => {
            let changed = record
                .files
                .iter()
                .filter(|(f, h)| file_hash(Path::new(f)) != **h)
                .count();
            if changed == 0 {
                format!("trusted (sha256 {short})")
            } else {
                format!("not trusted now: {changed} file(s) it reads changed (sha256 {short})")
            }
        }
        Ok(_) => format!("not trusted now: changed since it was trusted (was sha256 {short})"),
        Err(_) => "not trusted now: the file is gone".to_owned(),
    }
}
