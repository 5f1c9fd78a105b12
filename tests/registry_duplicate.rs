//! Two `#[tool]`s registering one name: the registry refuses, naming both `file:line`s.
//! (Its own test binary: the duplicate would break every other registry test.)

use pi_tools::{Registry, RegistryError, ToolError, tool};

mod first {
    use super::*;

    /// Say hello.
    #[tool(name = "greet")]
    pub async fn hello() -> Result<String, ToolError> {
        Ok("hello".to_owned())
    }
}

mod second {
    use super::*;

    /// Say hi.
    #[tool(name = "greet")]
    pub async fn hi() -> Result<String, ToolError> {
        Ok("hi".to_owned())
    }
}

#[test]
fn a_duplicate_registration_is_an_error_naming_both_locations() {
    let err = Registry::from_inventory().expect_err("two tools are named greet");
    let RegistryError::DuplicateName {
        name,
        first,
        second,
    } = &err;
    assert_eq!(name, "greet");
    let mut locations = [first.as_str(), second.as_str()];
    locations.sort_unstable();
    let file = "registry_duplicate.rs";
    assert!(
        locations[0].ends_with(&format!("{file}:11")),
        "{locations:?}"
    );
    assert!(
        locations[1].ends_with(&format!("{file}:21")),
        "{locations:?}"
    );
    let text = err.to_string();
    assert!(text.contains(first) && text.contains(second), "{text}");
    assert!(
        text.ends_with("rename one of them with #[tool(name = \"...\")]"),
        "{text}"
    );
}

#[tokio::test]
async fn the_fns_stay_callable() {
    assert_eq!(first::hello().await, Ok("hello".to_owned()));
    assert_eq!(second::hi().await, Ok("hi".to_owned()));
}
