//! Tool names: what every provider accepts, how a mounted server's tool is named
//! (`server__tool`), and the globs that select tools (`server__*`, a server's allow-list).
//! One home for these rules, used by the configuration, the mounts and the command line.

use crate::core::glob::{Glob, GlobSyntax};

/// The separator between a server's name and its tool's name: `github__create_issue`.
pub const MOUNT_SEPARATOR: &str = "__";

/// The longest tool name every provider accepts (OpenAI and Gemini allow 64 characters).
pub const MAX_TOOL_NAME: usize = 64;

/// The name a mounted server's tool takes: `server__tool`.
pub fn mounted_name(server: &str, tool: &str) -> String {
    format!("{server}{MOUNT_SEPARATOR}{tool}")
}

/// The server and the tool of a mounted tool's name (`github__create_issue` →
/// `("github", "create_issue")`), split at the first separator; `None` for a name without one.
pub fn split_mounted(name: &str) -> Option<(&str, &str)> {
    name.split_once(MOUNT_SEPARATOR)
}

/// `name` with each character a provider refuses in tool names replaced by `_`
/// (`math.factorial` → `math_factorial`): MCP allows `.` and `/`, the provider dialects do
/// not. A mounted tool keeps its own name for the call.
pub fn provider_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters and `?` for
/// one character (one byte of a character beyond ASCII); every other character stands for
/// itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    Glob::matches(pattern, GlobSyntax::Text, name)
}

/// Whether `name` has glob characters.
pub fn is_glob(name: &str) -> bool {
    name.contains(['*', '?'])
}

/// Why `name` cannot be a tool name every provider accepts, if it cannot: 1 to 64
/// characters, each a letter, digit, `_` or `-`, starting with a letter or `_`.
pub fn tool_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if name.chars().count() > MAX_TOOL_NAME {
        return Some(format!(
            "it is {} characters long and providers accept at most {MAX_TOOL_NAME}",
            name.chars().count()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Some(format!(
            "it contains `{bad}`, and providers accept only letters, digits, `_` and `-`"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Some("it must start with a letter or `_` (Gemini's rule)".to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_runs_and_single_characters() {
        assert!(glob_match("*", "echo"));
        assert!(glob_match("get-*", "get-sum"));
        assert!(!glob_match("get-*", "echo"));
        assert!(glob_match("e?ho", "echo"));
        assert!(glob_match("*-*-*", "get-tiny-image"));
        assert!(!glob_match("*-*-*", "get-sum"));
        assert!(glob_match("echo", "echo"));
        assert!(!glob_match("echo", "echo2"));
    }

    #[test]
    fn mounted_names_split_at_the_first_separator() {
        assert_eq!(
            mounted_name("github", "create_issue"),
            "github__create_issue"
        );
        assert_eq!(split_mounted("a__b__c"), Some(("a", "b__c")));
        assert_eq!(split_mounted("read"), None);
        assert_eq!(provider_safe("math.factorial"), "math_factorial");
        assert_eq!(provider_safe("a/b c"), "a_b_c");
        assert_eq!(provider_safe("get-sum"), "get-sum");
    }

    #[test]
    fn names_providers_forbid_are_explained() {
        assert_eq!(tool_name_problem("everything__get-sum"), None);
        assert!(tool_name_problem("fs__read.file").unwrap().contains("`.`"));
        assert!(tool_name_problem(&"a".repeat(65)).unwrap().contains("65"));
        assert!(tool_name_problem("1x").unwrap().contains("start"));
    }
}
