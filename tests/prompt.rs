//! The system prompt's "Available tools" and "Guidelines" sections.

use std::sync::Arc;

use pi_tools::prompt::{PromptSections, available_tools, guidelines};
use pi_tools::{ToolDefinition, ToolRole, tool};
use support::FakeTool;

fn tools(list: Vec<FakeTool>) -> Vec<Arc<dyn ToolDefinition>> {
    list.into_iter().map(FakeTool::arc).collect()
}

/// A tool that runs shell commands, as bash declares itself.
fn shell(name: &str) -> FakeTool {
    FakeTool::new(name).role(ToolRole::Shell)
}

/// A tool that explores files, as grep, find and ls declare themselves.
fn explorer(name: &str) -> FakeTool {
    FakeTool::new(name).role(ToolRole::Explore)
}

#[test]
fn no_snippets_gives_none() {
    assert_eq!(available_tools(&[]), vec!["(none)"]);
    let active = tools(vec![
        FakeTool::new("quiet"),
        FakeTool::new("blank").snippet("  \n "),
    ]);
    assert_eq!(available_tools(&active), vec!["(none)"]);
}

#[test]
fn snippets_are_listed_in_active_order_on_one_line_and_snippetless_tools_are_skipped() {
    let active = tools(vec![
        FakeTool::new("write").snippet("Create or overwrite\n   files"),
        FakeTool::new("hidden"),
        FakeTool::new("read").snippet("  Read file contents  "),
    ]);
    assert_eq!(
        available_tools(&active),
        vec![
            "- write: Create or overwrite files",
            "- read: Read file contents"
        ]
    );
}

#[test]
fn bash_without_exploration_tools_is_told_to_do_file_operations() {
    let active = tools(vec![FakeTool::new("read"), shell("bash")]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Use bash for file operations such as listing directories, finding files and \
             searching their contents (ls, find, rg)."
        ]
    );
}

#[test]
fn the_rule_names_tools_by_their_role_not_their_name() {
    // A "grep" without the role is not an exploration tool; a shell under another name is
    // the shell.
    let active = tools(vec![FakeTool::new("grep"), shell("sh")]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Use sh for file operations such as listing directories, finding files and \
             searching their contents (ls, find, rg)."
        ]
    );
}

#[test]
fn bash_with_exploration_tools_prefers_them() {
    let active = tools(vec![shell("bash"), explorer("ls")]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Prefer the ls tool over bash for exploring files: it is faster and respects .gitignore."
        ]
    );
    // Named in active order, as the "Available tools" section lists them.
    let active = tools(vec![
        explorer("ls"),
        shell("bash"),
        explorer("grep"),
        explorer("find"),
    ]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Prefer the ls, grep and find tools over bash for exploring files: they are faster \
             and respect .gitignore."
        ]
    );
}

#[test]
fn no_exploration_rule_without_bash() {
    let active = tools(vec![explorer("grep"), FakeTool::new("read")]);
    assert!(guidelines(&active, &[]).is_empty());
}

#[test]
fn guidelines_are_ordered_trimmed_and_deduplicated() {
    let active = tools(vec![
        FakeTool::new("edit").guidelines(&[
            "Read a file before editing it.",
            "  ",
            "Keep edits small.",
        ]),
        shell("bash").guidelines(&["  Read a file before editing it.  ", "Quote paths."]),
        explorer("grep").guidelines(&["Keep edits small"]),
    ]);
    let closing = vec![
        "Be concise.".to_owned(),
        "Quote paths.".to_owned(),
        String::new(),
    ];
    assert_eq!(
        guidelines(&active, &closing),
        vec![
            "Prefer the grep tool over bash for exploring files: it is faster and respects .gitignore.",
            "Read a file before editing it.",
            "Keep edits small.",
            "Quote paths.",
            "Keep edits small",
            "Be concise.",
        ]
    );
}

#[test]
fn sections_render_as_prompt_text() {
    let active = tools(vec![
        FakeTool::new("read").snippet("Read file contents"),
        shell("bash")
            .snippet("Run shell commands")
            .guidelines(&["Avoid interactive commands."]),
    ]);
    let sections = PromptSections::new(&active, &["Be concise.".to_owned()]);
    assert_eq!(
        sections.to_string(),
        "Available tools:\n\
         - read: Read file contents\n\
         - bash: Run shell commands\n\
         \n\
         Guidelines:\n\
         - Use bash for file operations such as listing directories, finding files and searching their contents (ls, find, rg).\n\
         - Avoid interactive commands.\n\
         - Be concise."
    );
}

/// Search the code base for a symbol's definition.
#[tool(role = explore)]
async fn find_symbol(
    /// The symbol's name.
    name: String,
) -> Result<String, String> {
    Ok(name)
}

#[test]
fn a_user_tool_declaring_the_explore_role_joins_the_rule() {
    let active: Vec<Arc<dyn ToolDefinition>> = vec![
        shell("bash").arc(),
        explorer("grep").arc(),
        Arc::new(FindSymbolTool),
    ];
    assert_eq!(FindSymbolTool.spec().role, ToolRole::Explore);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Prefer the grep and find_symbol tools over bash for exploring files: they are \
             faster and respect .gitignore."
        ]
    );
    let alone: Vec<Arc<dyn ToolDefinition>> = vec![shell("bash").arc(), Arc::new(FindSymbolTool)];
    assert_eq!(
        guidelines(&alone, &[]),
        vec![
            "Prefer the find_symbol tool over bash for exploring files: it is faster and \
             respects .gitignore."
        ]
    );
}
