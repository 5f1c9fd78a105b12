//! Reading `[paths]` (the file tools' confinement) and `[prompt]` (the closing guidelines).

use std::path::PathBuf;

use toml::de::DeTable;

use super::Loader;
use crate::config::Config;

impl<'a> Loader<'a> {
    pub(super) fn paths_section(&mut self, table: &DeTable<'a>, config: &mut Config) {
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "allowed_roots" => {
                    if let Some(list) = self.strings(value, "allowed_roots", "directory paths") {
                        config.allowed_roots = Some(list.into_iter().map(PathBuf::from).collect());
                    }
                }
                "pseudo_files" => {
                    if let Some(allowed) = self.boolean(value, "pseudo_files") {
                        config.pseudo_files = allowed;
                    }
                }
                other => self.unknown_key(
                    key.span(),
                    other,
                    "[paths]",
                    &["allowed_roots", "pseudo_files"],
                ),
            }
        }
    }

    pub(super) fn prompt_section(&mut self, table: &DeTable<'a>, config: &mut Config) {
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "guidelines" => {
                    if let Some(list) = self.strings(value, "guidelines", "sentences") {
                        config.guidelines = list;
                    }
                }
                other => self.unknown_key(key.span(), other, "[prompt]", &["guidelines"]),
            }
        }
    }
}
