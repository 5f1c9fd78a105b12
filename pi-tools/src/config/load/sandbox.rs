//! Reading `[sandbox]` into [`SandboxSettings`].

use std::path::PathBuf;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::Loader;
use crate::config::SandboxSettings;
use crate::env::{GitAccess, SandboxMode};

const SANDBOX_KEYS: [&str; 6] = [
    "mode",
    "network",
    "writable_roots",
    "protected",
    "default_protected",
    "git",
];

impl<'a> Loader<'a> {
    pub(in crate::config) fn sandbox_section(&mut self, table: &DeTable<'a>) -> SandboxSettings {
        let mut settings = SandboxSettings::default();
        let mut extra = Vec::new();
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "mode" => match value.get_ref().as_str().map(str::parse::<SandboxMode>) {
                    Some(Ok(mode)) => settings.mode = mode,
                    _ => self.report(
                        value.span(),
                        "`mode` must be \"off\", \"read-only\" or \"workspace-write\"",
                    ),
                },
                "network" => {
                    if let Some(network) = self.boolean(value, "network") {
                        settings.network = network;
                    }
                }
                "writable_roots" => {
                    if let Some(list) = self.strings(value, "writable_roots", "directory paths") {
                        settings.writable_roots =
                            Some(list.into_iter().map(PathBuf::from).collect());
                    }
                }
                "git" => match value.get_ref().as_str().map(str::parse::<GitAccess>) {
                    Some(Ok(git)) => settings.git = git,
                    _ => self.report(value.span(), "`git` must be \"read-only\" or \"commit\""),
                },
                "protected" => {
                    if let Some(list) = self.relative_paths(value) {
                        extra = list;
                    }
                }
                "default_protected" => {
                    if let Some(defaults) = self.boolean(value, "default_protected") {
                        settings.default_protected = defaults;
                    }
                }
                other => self.unknown_key(key.span(), other, "[sandbox]", &SANDBOX_KEYS),
            }
        }
        // `protected` adds to the defaults; `default_protected = false` drops them.
        if !settings.default_protected {
            settings.protected.clear();
        }
        for path in extra {
            if !settings.protected.contains(&path) {
                settings.protected.push(path);
            }
        }
        settings
    }

    /// `protected`: paths relative to a writable root, without `..`.
    fn relative_paths(&mut self, value: &Spanned<DeValue<'a>>) -> Option<Vec<PathBuf>> {
        let list = self.strings(value, "protected", "paths relative to a writable root")?;
        let bad = list.iter().find(|p| {
            let path = std::path::Path::new(p);
            path.is_absolute()
                || path
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
        });
        if let Some(bad) = bad {
            self.report(
                value.span(),
                format!(
                    "`protected` entries are relative to each writable root, so `{bad}` cannot be one; write it like \".git/hooks\""
                ),
            );
            return None;
        }
        Some(list.into_iter().map(PathBuf::from).collect())
    }
}
