//! Every tool registered with `#[tool]` in the binary, collected through `inventory`: no
//! central list names them.
//!
//! # Which registrations are found
//!
//! `#[tool]` submits a registration that runs before `main`. Tools declared in the binary
//! crate itself (any module, any file) are always found. Tools declared in a library crate
//! are found when that crate is linked into the binary, which rustc does when the binary
//! refers to the crate at least once: a dependency listed in `Cargo.toml` but never
//! mentioned in the code is not linked, and its tools are missing. Mention it once, e.g.
//! `use my_tools as _;` in `main.rs`.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::definition::ToolDefinition;
use super::spec::SourceLocation;

/// One `#[tool]` registration, as submitted by the generated code.
#[doc(hidden)]
pub struct ToolRegistration {
    /// Builds the definition (a unit struct: cheap).
    pub make: fn() -> Arc<dyn ToolDefinition>,
    /// Where the tool was declared.
    pub location: SourceLocation,
}

inventory::collect!(ToolRegistration);

/// Two tools share a name.
///
/// Its `Debug` is its `Display`, so `main` returning it with `?` prints the sentence.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two tools are registered under one name.
    #[error(
        "two tools are named `{name}`: one declared at {first}, the other at {second}; \
         rename one of them with #[tool(name = \"...\")]"
    )]
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where the first was declared (`unknown location` when it does not say).
        first: String,
        /// Where the second was declared.
        second: String,
    },
}

// Debug is the sentence (as `ConfigError`'s), so `main` returning it with `?` prints that.
impl std::fmt::Debug for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// The registered tools, sorted by name. Cloning is cheap.
///
/// Schemas are not computed here: each definition computes its own on the first call to
/// `parameters()` and keeps it.
#[derive(Clone, Default)]
pub struct Registry {
    tools: Vec<Arc<dyn ToolDefinition>>,
    by_name: HashMap<String, usize>,
}

impl Registry {
    /// Every tool registered with `#[tool]` in the binary (see the module docs for what
    /// gets linked).
    pub fn from_inventory() -> Result<Registry, RegistryError> {
        let tools = inventory::iter::<ToolRegistration>
            .into_iter()
            .map(|reg| (reg.make)())
            .collect();
        Registry::from_definitions(tools)
    }

    /// A registry of these definitions (for tests, or tools built at run time).
    pub fn from_definitions(
        tools: Vec<Arc<dyn ToolDefinition>>,
    ) -> Result<Registry, RegistryError> {
        let mut tools = tools;
        // Stable sort: of two same-named tools the first given is reported first.
        tools.sort_by(|a, b| a.spec().name.cmp(&b.spec().name));
        let mut by_name = HashMap::with_capacity(tools.len());
        for (index, tool) in tools.iter().enumerate() {
            if let Some(&earlier) = by_name.get(&tool.spec().name) {
                let first: &Arc<dyn ToolDefinition> = &tools[earlier];
                return Err(RegistryError::DuplicateName {
                    name: tool.spec().name.to_owned(),
                    first: location(first.as_ref()),
                    second: location(tool.as_ref()),
                });
            }
            by_name.insert(tool.spec().name.to_owned(), index);
        }
        Ok(Registry { tools, by_name })
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn ToolDefinition>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tools, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn ToolDefinition>> {
        self.tools.iter()
    }

    /// The names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.spec().name.as_str())
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

fn location(tool: &dyn ToolDefinition) -> String {
    tool.spec()
        .source
        .map_or_else(|| "an unknown location".to_owned(), |l| l.to_string())
}
