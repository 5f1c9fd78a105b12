//! The kernel, the tool API and the `#[tool]` macro, one module per subject: the runner,
//! argument validation, canonical schemas and the provider dialects, provider replies, the
//! prompt, config, the catalog, the wire types, and what the crate page and rustdoc show.

mod catalog;
mod catalog_output;
mod config;
mod config_trust;
mod crate_page;
mod dialects;
mod dialects_proptest;
mod errors_from_main;
mod macro_config;
mod macro_e2e;
mod macro_forms;
mod prompt;
mod providers;
mod runner;
mod schema_canonical;
mod toolbox;
mod typed_results;
mod validation;
mod wire;
