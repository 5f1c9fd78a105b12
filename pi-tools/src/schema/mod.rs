//! Tool schemas: the canonical form every tool's `parameters()` returns (see
//! [`canonical_schema`] and [`canonicalize`]).

mod canonical;

pub use canonical::{canonical_schema, canonicalize};
