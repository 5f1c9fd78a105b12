//! The README's example is the one in the crate root docs (run as a doc test by the tests
//! package, with the assertions it hides): this keeps the two the same text.

/// The lines of the first ```` ```rust ```` block after `marker` in `text`.
fn rust_block<'t>(text: &'t str, marker: &str) -> Vec<&'t str> {
    text.split_once(marker)
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.split_once("```rust\n"))
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.split_once("```"))
        .map(|(block, _)| block.lines().collect())
        .unwrap_or_default()
}

#[test]
fn the_readme_example_is_the_crate_docs_doc_test() {
    let readme = include_str!("../../README.md");
    let example = rust_block(readme, "## A tool is an annotated async fn");
    assert!(!example.is_empty(), "the README section lost its example");
    // The crate docs as rustdoc shows them: hidden `# ` lines dropped.
    let docs: String = include_str!("docs/crate.md")
        .lines()
        .filter(|l| !l.starts_with("# "))
        .collect::<Vec<_>>()
        .join("\n");
    let tested = rust_block(&docs, "");
    assert_eq!(example, tested, "README.md and the crate root docs differ");
}
