//! Wrappers models put around text: a Markdown code fence, unified-diff prefixes, a second
//! level of JSON escaping, HTML entities. Removed when the text as sent is nowhere and the
//! unwrapped oldText matches once; a file that really holds the wrapper is edited as sent.

use super::*;

const CODE: &str = "fn main() {\n    if a < b && c {\n        run();\n    }\n}\n";

#[tokio::test]
async fn a_code_fence_around_both_texts_is_removed() {
    let (result, after) = run_ok(
        CODE,
        &[(
            "```rust\n        run();\n    }\n```",
            "```rust\n        run();\n        stop();\n    }\n```\n",
        )],
    )
    .await;
    assert_eq!(
        after,
        "fn main() {\n    if a < b && c {\n        run();\n        stop();\n    }\n}\n"
    );
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt.\nApplied with a wrapper removed: oldText and newText came in a Markdown code fence, which the file does not have there; it was removed from both. Send the text as the file has it, without it."
    );
    assert_eq!(result.details["wrappers"][0]["wrapper"], "codeFence");
    assert_eq!(result.details["fuzzyMatch"], true);
}

#[tokio::test]
async fn diff_prefixes_are_removed() {
    let (result, after) = run_ok(
        CODE,
        &[("-        run();\n     }", "+        run_fast();\n     }")],
    )
    .await;
    assert_eq!(after, CODE.replace("run();", "run_fast();"));
    assert_eq!(result.details["wrappers"][0]["wrapper"], "diffPrefixes");
}

#[tokio::test]
async fn json_escaped_text_is_unescaped() {
    let (result, after) = run_ok(
        CODE,
        &[("        run();\\n    }", "        run(\\\"x\\\");\\n    }")],
    )
    .await;
    assert_eq!(after, CODE.replace("run();", "run(\"x\");"));
    assert_eq!(result.details["wrappers"][0]["wrapper"], "jsonEscaped");
}

#[tokio::test]
async fn html_entities_are_decoded() {
    let (result, after) = run_ok(
        CODE,
        &[("if a &lt; b &amp;&amp; c {", "if a &gt; b &amp;&amp; c {")],
    )
    .await;
    assert_eq!(after, CODE.replace("a < b", "a > b"));
    assert_eq!(result.details["wrappers"][0]["wrapper"], "htmlEntities");
}

#[tokio::test]
async fn a_file_that_holds_the_wrapper_is_edited_as_sent() {
    // A README with a real fence: the fenced oldText is found exactly, fence and all.
    let readme = "# Use\n```rust\nrun();\n```\nrun();\n";
    let (result, after) =
        run_ok(readme, &[("```rust\nrun();\n```", "```rust\nstop();\n```")]).await;
    assert_eq!(after, "# Use\n```rust\nstop();\n```\nrun();\n");
    assert!(result.details.get("wrappers").is_none());
    // A Markdown list whose lines begin with "-": edited as sent.
    let list = "- a\n- b\n";
    let (_, after) = run_ok(list, &[("- a\n- b", "- a\n+ c")]).await;
    assert_eq!(after, "- a\n+ c\n");
    // A literal backslash-n in a string, and entities in HTML.
    let source = "print(\"a\\nb\")\nab\n";
    let (_, after) = run_ok(source, &[("\"a\\nb\"", "\"a\\nc\"")]).await;
    assert_eq!(after, "print(\"a\\nc\")\nab\n");
    let html = "<p>a &lt; b</p>\n";
    let (_, after) = run_ok(html, &[("a &lt; b", "a &gt; b")]).await;
    assert_eq!(after, "<p>a &gt; b</p>\n");
}

#[tokio::test]
async fn only_one_text_wrapped_is_not_unwrapped() {
    let message = run_err(CODE, &[("```\n        run();\n```", "        stop();")]).await;
    assert!(
        message.starts_with("Could not find oldText in f.txt."),
        "{message}"
    );
    let message = run_err(CODE, &[("if a &lt; b", "if a < c")]).await;
    assert!(
        message.starts_with("Could not find oldText in f.txt."),
        "{message}"
    );
}
