//! The search engine grep and find share: an ordered, ignore-aware directory walk over
//! allocation-light listings, ripgrep's gitignore matchers, the path glob, and the parallel
//! content scan behind grep (and its search of one file, `one_file`); and the same walk through an execution environment whose
//! files are elsewhere.
//!
//! Used only by the built-in tools; nothing here knows a tool.

pub(crate) mod env_walk;
mod ignore_rules;
mod listing;
mod one_file;
pub(crate) mod path_glob;
pub(crate) mod scan;
pub(crate) mod walk;
