//! Tools declared in separate files are all found through the registry, with no list naming
//! them.
#![cfg(feature = "builtins")]

mod files;
mod search;

use std::sync::Arc;

use pi_tools::{Registry, RegistryError, ToolDefinition};

#[test]
fn every_registered_tool_is_found_sorted_by_name() {
    let registry = Registry::from_inventory().expect("no duplicate names");
    let names: Vec<&str> = registry.names().collect();
    // This binary links the crate's thirteen built-ins (the seven coding tools, the two
    // that serve providers' native shapes and the four job tools) beside the three tools of
    // this test.
    assert_eq!(
        names,
        [
            "apply_patch",
            "bash",
            "edit",
            "find",
            "grep",
            "job_input",
            "job_kill",
            "job_list",
            "job_output",
            "list_files",
            "ls",
            "read",
            "remove_file",
            "search-text",
            "str_replace_based_edit_tool",
            "write"
        ]
    );
    assert_eq!(registry.len(), 16);
}

#[test]
fn tools_are_looked_up_by_name_with_their_metadata() {
    let registry = Registry::from_inventory().expect("no duplicate names");
    let search = registry.get("search-text").expect("registered");
    assert_eq!(search.spec().description, "Search for text.");
    assert!(search.spec().read_only);
    assert!(!search.spec().destructive);
    let remove = registry.get("remove_file").expect("registered");
    assert!(remove.spec().destructive);
    assert_eq!(remove.spec().mode, pi_tools::ExecutionMode::Sequential);
    assert!(registry.get("search_text").is_none());
    let location = remove.spec().source.expect("a location");
    assert!(location.file.ends_with("files.rs"), "{location}");
}

#[test]
fn schemas_are_computed_once_and_shared() {
    let registry = Registry::from_inventory().expect("no duplicate names");
    let first: *const serde_json::Value = &registry
        .get("list_files")
        .expect("registered")
        .spec()
        .parameters;
    let again = Registry::from_inventory().expect("no duplicate names");
    let second: *const serde_json::Value = &again
        .get("list_files")
        .expect("registered")
        .spec()
        .parameters;
    assert_eq!(first, second);
}

#[test]
fn a_duplicate_name_among_definitions_names_both_locations() {
    let one = registry_tool("search-text");
    let two = registry_tool("search-text");
    let err = Registry::from_definitions(vec![one, two]).expect_err("duplicate");
    let RegistryError::DuplicateName {
        name,
        first,
        second,
    } = &err;
    assert_eq!(name, "search-text");
    assert!(first.contains("search.rs:"), "{first}");
    assert!(second.contains("search.rs:"), "{second}");
    assert!(
        err.to_string()
            .starts_with("two tools are named `search-text`: one declared at ")
    );
}

fn registry_tool(name: &str) -> Arc<dyn ToolDefinition> {
    Registry::from_inventory()
        .expect("no duplicate names")
        .get(name)
        .expect("registered")
        .clone()
}
