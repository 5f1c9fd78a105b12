//! `replaceAll`: every exact, non-overlapping occurrence of oldText replaced, the count in
//! the result, and none of the forgiving stages.

use super::*;

/// Runs one call of `edits` (`(oldText, newText, replaceAll)`) on `original`, through the
/// tool's JSON arguments as a model sends them.
async fn run_json(
    original: &str,
    edits: serde_json::Value,
) -> (Result<ToolResult, String>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), original).unwrap();
    let args: EditArgs =
        serde_json::from_value(serde_json::json!({ "path": "f.txt", "edits": edits })).unwrap();
    let result = edit(&ctx_in(dir.path()), args)
        .await
        .map(|out| out.into_tool_result().unwrap())
        .map_err(|e| e.message().to_string());
    (
        result,
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
    )
}

#[tokio::test]
async fn every_occurrence_is_replaced_and_counted() {
    let file = "let old_name = 1;\nuse(old_name);\nprint(old_name, old_name)\n";
    let (result, after) = run_json(
        file,
        serde_json::json!([{ "oldText": "old_name", "newText": "new_name", "replaceAll": true }]),
    )
    .await;
    let result = result.unwrap();
    assert_eq!(after, file.replace("old_name", "new_name"));
    assert_eq!(
        result.text_content(),
        "Successfully replaced 4 blocks in f.txt.\nedits[0] (replaceAll) replaced 4 occurrences of its oldText."
    );
    assert_eq!(result.details["replacements"], 4);
    assert_eq!(
        result.details["replacedAll"],
        serde_json::json!([{ "edit": 0, "count": 4 }])
    );
    // Claude Code's spelling is read too; one occurrence is fine.
    let (result, after) = run_json(
        "a\nb\n",
        serde_json::json!([{ "oldText": "b", "newText": "c", "replace_all": true }]),
    )
    .await;
    assert_eq!(after, "a\nc\n");
    assert!(
        result
            .unwrap()
            .text_content()
            .ends_with("replaced 1 occurrence of its oldText."),
    );
}

#[tokio::test]
async fn beside_other_edits_in_a_crlf_file() {
    let file = "x = f(a)\r\ny = f(a)\r\nz = 3\r\n";
    let (result, after) = run_json(
        file,
        serde_json::json!([
            { "oldText": "f(a)", "newText": "g(a,\nb)", "replaceAll": true },
            { "oldText": "z = 3", "newText": "z = 4" }
        ]),
    )
    .await;
    assert_eq!(after, "x = g(a,\r\nb)\r\ny = g(a,\r\nb)\r\nz = 4\r\n");
    assert_eq!(
        result.unwrap().text_content(),
        "Successfully replaced 3 blocks in f.txt.\nedits[0] (replaceAll) replaced 2 occurrences of its oldText."
    );
    // An occurrence that another edit also covers is an overlap.
    let (result, after) = run_json(
        file,
        serde_json::json!([
            { "oldText": "f(a)", "newText": "g(a)", "replaceAll": true },
            { "oldText": "y = f(a)", "newText": "y = 0" }
        ]),
    )
    .await;
    assert_eq!(
        result.unwrap_err(),
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit, or make them cover separate parts of the file."
    );
    assert_eq!(after, file);
}

#[tokio::test]
async fn no_forgiving_stage_and_no_overlapping_occurrences() {
    // Curly quotes in the file: the normalised stage would find them, replaceAll does not.
    let file = "say(\u{201C}hi\u{201D})\nsay(\u{201C}hi\u{201D})\n";
    let (result, after) = run_json(
        file,
        serde_json::json!([{ "oldText": "say(\"hi\")", "newText": "x", "replaceAll": true }]),
    )
    .await;
    assert!(
        result.unwrap_err().starts_with(
            "Could not find oldText in f.txt. With replaceAll, every occurrence must match the file exactly, including whitespace and indentation (no forgiving match applies): read the file again and copy the text from it."
        )
    );
    assert_eq!(after, file);
    let (result, after) = run_json(
        "x\naaa\n",
        serde_json::json!([{ "oldText": "aa", "newText": "b", "replaceAll": true }]),
    )
    .await;
    assert_eq!(
        result.unwrap_err(),
        "oldText occurs in f.txt in places that overlap (both on line 2), so replacing every occurrence is not defined. Make oldText longer or shorter so that its occurrences are apart, or replace them with separate edits."
    );
    assert_eq!(after, "x\naaa\n");
    // Without the flag (or with null for it, as strict dialects send it), several
    // occurrences are still ambiguous.
    let (result, _) = run_json(
        "a a\n",
        serde_json::json!([{ "oldText": "a", "newText": "b", "replaceAll": null }]),
    )
    .await;
    assert!(result.unwrap_err().starts_with("oldText matches 2 places"));
    let (result, _) = run_json(
        "a a\n",
        serde_json::json!([{ "oldText": "a", "newText": "b" }]),
    )
    .await;
    assert!(result.unwrap_err().starts_with("oldText matches 2 places"));
}
