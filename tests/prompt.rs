//! The system prompt's "Available tools" and "Guidelines" sections.

mod support;

use std::sync::Arc;

use pi_tools::ToolDefinition;
use pi_tools::prompt::{PromptSections, available_tools, guidelines};
use support::FakeTool;

fn tools(list: Vec<FakeTool>) -> Vec<Arc<dyn ToolDefinition>> {
    list.into_iter().map(FakeTool::arc).collect()
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
    let active = tools(vec![FakeTool::new("read"), FakeTool::new("bash")]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Use bash for file operations such as listing directories, finding files and \
             searching their contents (ls, find, rg)."
        ]
    );
}

#[test]
fn bash_with_exploration_tools_prefers_them() {
    let active = tools(vec![FakeTool::new("bash"), FakeTool::new("ls")]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Prefer the ls tool over bash for exploring files: it is faster and respects .gitignore."
        ]
    );
    let active = tools(vec![
        FakeTool::new("ls"),
        FakeTool::new("bash"),
        FakeTool::new("grep"),
        FakeTool::new("find"),
    ]);
    assert_eq!(
        guidelines(&active, &[]),
        vec![
            "Prefer the grep, find and ls tools over bash for exploring files: they are faster \
             and respect .gitignore."
        ]
    );
}

#[test]
fn no_exploration_rule_without_bash() {
    let active = tools(vec![FakeTool::new("grep"), FakeTool::new("read")]);
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
        FakeTool::new("bash").guidelines(&["  Read a file before editing it.  ", "Quote paths."]),
        FakeTool::new("grep").guidelines(&["Keep edits small"]),
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
        FakeTool::new("bash")
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
