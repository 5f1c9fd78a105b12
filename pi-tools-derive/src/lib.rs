//! The `#[tool]` attribute macro of pi-tools. Use it through `pi_tools::tool`.
