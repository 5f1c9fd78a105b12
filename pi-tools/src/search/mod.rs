//! The search engine grep and find share: where a search starts (`root`), an ordered,
//! ignore-aware directory walk (`walk`) over allocation-light listings (`listing`),
//! ripgrep's gitignore matchers (`ignore_rules`), the path glob, the parallel content scan
//! behind grep (`scan`, and its search of one file, `one_file`), the report of what could not
//! be read (`skipped`), and the same walk through an execution environment whose files are
//! elsewhere (`env_walk`).
//!
//! Used only by the built-in tools; nothing here knows a tool: the tools name themselves in
//! what they say.

mod collect;
pub(crate) mod env_walk;
mod ignore_rules;
pub(crate) mod index;
mod listing;
mod one_file;
pub(crate) mod path_glob;
pub(crate) mod root;
pub(crate) mod scan;
pub(crate) mod skipped;
pub(crate) mod walk;
