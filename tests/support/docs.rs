//! Doc examples that run here, as doc tests of this crate: those of the `#[tool]` macro's
//! crate (which cannot run them itself without building pi-tools a second time, as a
//! dependency of a proc-macro's tests) and of the repository's and the macro crate's READMEs.

/// `pi-tools-derive`'s crate documentation.
#[doc = include_str!("../../pi-tools-derive/src/docs/crate.md")]
pub struct DeriveCrateDocs;

/// The documentation of `#[tool]`.
#[doc = include_str!("../../pi-tools-derive/src/docs/tool.md")]
pub struct ToolMacroDocs;

/// The README of `pi-tools-derive`.
#[doc = include_str!("../../pi-tools-derive/README.md")]
pub struct DeriveReadme;

/// The repository's README, for contributors (the crate page, `pi-tools/README.md`, is a
/// doc test of the library itself).
#[doc = include_str!("../../README.md")]
pub struct Readme;
