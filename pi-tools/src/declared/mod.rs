//! Tools declared in the configuration file: a `[tool.<name>]` section with a `command` or a
//! `script`. The idea in one folder, in two layers:
//!
//! - [`spec`]: what the file says (`DeclaredTool` and its parts) and the reader that checks
//!   it as the configuration loads, every mistake at its key. It sits below
//!   [`config`](crate::config), which holds the declared tools of a file and calls the
//!   reader; it needs no feature.
//! - `run` (feature `process`): the tools that run them, through the environment's shell as
//!   bash runs a command; [`definitions`] gives a configuration's declared tools and a
//!   [`Toolbox`](crate::toolbox::Toolbox) adds them to the registered ones. It sits above
//!   `config`.
//!
// The links go to the items when they are built (feature `process`), else to their pages on
// docs.rs.
#![cfg_attr(
    feature = "process",
    doc = "[`definitions`]: crate::declared::definitions"
)]
#![cfg_attr(
    not(feature = "process"),
    doc = "[`definitions`]: https://docs.rs/pi-tools/latest/pi_tools/declared/fn.definitions.html"
)]

#[cfg(feature = "process")]
mod run;
pub mod spec;

#[cfg(feature = "process")]
pub use run::{definition, definitions};
