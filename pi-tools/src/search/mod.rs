//! The search engine grep and find share. They say what they want ([`SearchStart`], then a
//! [`ContentQuery`] or a [`PathQuery`]); the route is chosen in one place ([`SearchStart::route`]): the
//! search index (`index`), an ordered, ignore-aware directory walk (`walk`) over
//! allocation-light listings (`listing`) with ripgrep's gitignore matchers (`ignore_rules`)
//! and the path glob, feeding the parallel content scan (`scan`, and its search of one file,
//! `one_file`); or, for an environment whose files are elsewhere, the same walk and scan
//! through the environment's own file operations (`env_walk`, `through_env`). What could not
//! be read is reported ([`Skipped`]).
//!
//! Nothing here knows a tool: the tools name themselves in what they say.

mod collect;
mod env_walk;
mod ignore_rules;
mod index;
mod listing;
mod one_file;
mod path_glob;
mod root;
mod route;
mod scan;
mod skipped;
mod through_env;
mod walk;

pub use index::IndexStats;
pub use path_glob::PathGlob;
pub use route::{
    ContentQuery, PathQuery, PathsFound, Route, SearchStart, index_exists, index_stats,
};
pub use scan::{FileHits, HitLine, SearchOutcome, reason};
pub use skipped::Skipped;
