//! The edit tool: exact and fuzzy matching, errors, and byte-for-byte preservation of
//! everything outside the replaced regions.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::Arc;

use pi_tools::ToolRenderer;
use pi_tools::builtins::edit::{EditArgs, EditRenderer, Replacement, edit, prepare_arguments};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{IntoToolResult, ToolContext, ToolResult};
use tokio_util::sync::CancellationToken;

mod indentation;
mod line_endings;
mod line_numbers;
mod moves;
mod repeats;
mod replace_all;
mod tab_width;
mod wrappers;

fn ctx_in(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    ToolContext::new("call-1", CancellationToken::new()).with_env(env)
}

fn edits(pairs: &[(&str, &str)]) -> Vec<Replacement> {
    pairs
        .iter()
        .map(|(o, n)| Replacement::new(*o, *n))
        .collect()
}

/// Writes `original` to a file, applies the edits, returns the result and the new bytes.
async fn run(original: &[u8], pairs: &[(&str, &str)]) -> (Result<ToolResult, String>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, original).unwrap();
    let args = EditArgs::new("f.txt", edits(pairs));
    let result = edit(&ctx_in(dir.path()), args)
        .await
        .map(|out| out.into_tool_result().unwrap())
        .map_err(|e| e.message().to_string());
    (result, std::fs::read(&path).unwrap())
}

async fn run_ok(original: &str, pairs: &[(&str, &str)]) -> (ToolResult, String) {
    let (result, bytes) = run(original.as_bytes(), pairs).await;
    (
        result.expect("edit succeeds"),
        String::from_utf8(bytes).unwrap(),
    )
}

async fn run_err(original: &str, pairs: &[(&str, &str)]) -> String {
    let (result, bytes) = run(original.as_bytes(), pairs).await;
    assert_eq!(
        bytes,
        original.as_bytes(),
        "a failed edit must leave the file untouched"
    );
    result.expect_err("edit fails")
}

#[tokio::test]
async fn single_replacement() {
    let (result, after) = run_ok(
        "fn a() {}\nfn b() {}\n",
        &[("fn b() {}", "fn b() { todo!() }")],
    )
    .await;
    assert_eq!(after, "fn a() {}\nfn b() { todo!() }\n");
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt."
    );
    assert_eq!(result.details["replacements"], 1);
    assert_eq!(result.details["fuzzyMatch"], false);
    assert_eq!(result.details["firstChangedLine"], 2);
}

#[tokio::test]
async fn several_replacements_matched_against_the_original() {
    // The second edit's oldText is what the first one produces: it must not be matched.
    let (result, after) = run_ok("one\ntwo\nthree\n", &[("three", "3"), ("one", "1")]).await;
    assert_eq!(after, "1\ntwo\n3\n");
    assert_eq!(
        result.text_content(),
        "Successfully replaced 2 blocks in f.txt."
    );
    let message = run_err("one\ntwo\n", &[("one", "two-ish"), ("two-ish", "x")]).await;
    assert!(
        message.starts_with("Could not find edits[1].oldText in f.txt."),
        "{message}"
    );
}

#[tokio::test]
async fn not_found_shows_the_closest_part_of_the_file() {
    let original = "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n";
    let message = run_err(original, &[("    let answr = 42;", "    let answer = 43;")]).await;
    assert_eq!(
        message,
        "Could not find oldText in f.txt. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it.\n\nThe most similar part of the file:\n1 | fn main() {\n2 |     let answer = 42;\n3 |     println!(\"{answer}\");\n4 | }"
    );
}

#[tokio::test]
async fn duplicates_overlaps_empty_and_no_op_are_refused() {
    assert_eq!(
        run_err("x = 1\nx = 1\n", &[("x = 1", "x = 2")]).await,
        "oldText matches 2 places in f.txt (starting at lines 1, 2); it must match exactly one. Add surrounding lines to make it unique."
    );
    assert_eq!(
        run_err("a = 1; a = 1;\nb\n", &[("a = 1", "a = 2")]).await,
        "oldText matches 2 places in f.txt (all on line 1); it must match exactly one. Add surrounding lines to make it unique."
    );
    // The first ten lines are named, however many there are.
    let many = "x\n".repeat(12);
    assert_eq!(
        run_err(&many, &[("x", "y")]).await,
        "oldText matches 12 places in f.txt (starting at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …); it must match exactly one. Add surrounding lines to make it unique."
    );
    // The same through the normalisation of quotes: three places on two lines.
    assert_eq!(
        run_err(
            "say(\u{201C}hi\u{201D}) + say(\u{201C}hi\u{201D})\n\nsay(\u{201C}hi\u{201D})\n",
            &[("say(\"hi\")", "say(\"bye\")")]
        )
        .await,
        "oldText matches 3 places in f.txt (starting at lines 1, 3); it must match exactly one. Add surrounding lines to make it unique."
    );
    assert_eq!(
        run_err("abcdef\n", &[("abcd", "X"), ("cdef", "Y")]).await,
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit, or make them cover separate parts of the file."
    );
    assert_eq!(
        run_err("abc\n", &[("a", "b"), ("", "x")]).await,
        "edits[1].oldText is empty. Give the exact text to replace, with enough surrounding lines to make it unique."
    );
    assert_eq!(
        run_err("abc\n", &[("abc", "abc")]).await,
        "No changes made to f.txt: the replacements produce the same content. Make newText differ from oldText."
    );
}

#[tokio::test]
async fn all_or_nothing() {
    let message = run_err("alpha\nbeta\n", &[("alpha", "ALPHA"), ("gamma", "GAMMA")]).await;
    assert!(
        message.starts_with("Could not find edits[1].oldText"),
        "{message}"
    );
}

#[tokio::test]
async fn missing_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let args = EditArgs::new("gone.txt", edits(&[("a", "b")]));
    let err = edit(&ctx_in(dir.path()), args).await.unwrap_err();
    assert_eq!(
        err.message(),
        "File not found: gone.txt. Check the path; use write to create a new file."
    );
}

#[tokio::test]
async fn crlf_file_with_lf_old_text_keeps_crlf() {
    let (result, after) = run_ok("a\r\nb\r\nc\r\n", &[("a\nb", "A\nB\nB2")]).await;
    assert_eq!(after, "A\r\nB\r\nB2\r\nc\r\n");
    assert_eq!(result.details["fuzzyMatch"], false);
    assert_eq!(
        result.details["diff"],
        "-1 a\n-2 b\n+1 A\n+2 B\n+3 B2\n 4 c"
    );
}

#[tokio::test]
async fn byte_order_mark_is_kept() {
    let (_, after) = run_ok("\u{FEFF}hello\n", &[("hello", "bye")]).await;
    assert_eq!(after, "\u{FEFF}bye\n");
}

#[tokio::test]
async fn fuzzy_trailing_whitespace() {
    let (result, after) = run_ok(
        "if x {   \n    go();\t\n}\n",
        &[("if x {\n    go();\n}", "if y {\n    stop();\n}")],
    )
    .await;
    assert_eq!(after, "if y {\n    stop();\n}\n");
    assert_eq!(result.details["fuzzyMatch"], true);
}

#[tokio::test]
async fn fuzzy_full_width_punctuation_through_nfkc() {
    let (result, after) = run_ok(
        "print（\"ok\"）；\nnext\n",
        &[("print(\"ok\");", "print(\"done\");")],
    )
    .await;
    assert_eq!(after, "print(\"done\");\nnext\n");
    assert_eq!(result.details["fuzzyMatch"], true);
}

#[tokio::test]
async fn fuzzy_smart_quotes_dashes_and_nbsp() {
    let (_, after) = run_ok(
        "say \u{201C}it\u{2019}s\u{201D}\n",
        &[("say \"it's\"", "say \"no\"")],
    )
    .await;
    assert_eq!(after, "say \"no\"\n");
    let (_, after) = run_ok(
        "range 1\u{2013}5 \u{2014} ok\n",
        &[("range 1-5 - ok", "range 1-6")],
    )
    .await;
    assert_eq!(after, "range 1-6\n");
    let (_, after) = run_ok("a\u{00A0}b = 1;\n", &[("a b = 1;", "ab = 2;")]).await;
    assert_eq!(after, "ab = 2;\n");
    // Leading whitespace is not normalised away: the normalised stage leaves it alone, so
    // spaces for a tab do not match there. They match in the indentation stage, because the
    // line's text is unique in the file and, a tab being 4 columns here, at the same depth;
    // newText lands at the file's indentation.
    let (result, after) = run_ok(
        "\tindented();\n# vim: ts=4\n",
        &[("    indented();", "    done();")],
    )
    .await;
    assert_eq!(after, "\tdone();\n# vim: ts=4\n");
    assert_eq!(result.details["indentation"][0]["convertedTo"], "tabs");
}

#[tokio::test]
async fn after_a_fuzzy_edit_every_byte_outside_the_region_is_unchanged() {
    let original = concat!(
        "keep trailing   \r\n",
        "“smart” quotes stay — here\n",
        "target “line”  \r\n",
        "mixed endings\r",
        "\n",
        "tail\t \n",
        "no newline at end  "
    );
    let (result, after) = run_ok(original, &[("target \"line\"", "target 'done'")]).await;
    let expected = concat!(
        "keep trailing   \r\n",
        "“smart” quotes stay — here\n",
        "target 'done'  \r\n",
        "mixed endings\r",
        "\n",
        "tail\t \n",
        "no newline at end  "
    );
    assert_eq!(after, expected);
    assert_eq!(result.details["fuzzyMatch"], true);
    assert_eq!(result.details["firstChangedLine"], 3);
}

#[tokio::test]
async fn details_carry_numbered_diff_patch_first_line_and_fuzzy_flag() {
    let original: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let (result, _) = run_ok(&original, &[("line 6\n", "line six\n")]).await;
    assert_eq!(
        result.details["diff"],
        "    ...\n  2 line 2\n  3 line 3\n  4 line 4\n  5 line 5\n- 6 line 6\n+ 6 line six\n  7 line 7\n  8 line 8\n  9 line 9\n 10 line 10\n    ..."
    );
    assert_eq!(
        result.details["patch"],
        "--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,7 @@\n line 3\n line 4\n line 5\n-line 6\n+line six\n line 7\n line 8\n line 9\n"
    );
    assert_eq!(result.details["firstChangedLine"], 6);
    assert_eq!(result.details["fuzzyMatch"], false);
    let styled = EditRenderer.render_result(&result, false);
    let red: Vec<_> = styled
        .spans
        .iter()
        .filter(|s| s.style.fg == Some(pi_tools::tool::render::Color::Red))
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(red, vec!["- 6 line 6"]);
}

#[test]
fn the_single_replacement_layout_is_accepted() {
    let prepared =
        prepare_arguments(serde_json::json!({"path": "f", "oldText": "a", "newText": "b"}));
    assert_eq!(
        prepared,
        serde_json::json!({"path": "f", "edits": [{"oldText": "a", "newText": "b"}]})
    );
    let parsed: EditArgs = serde_json::from_value(prepared).unwrap();
    assert_eq!(parsed.edits[0].old_text, "a");
}

#[test]
fn the_schema_requires_at_least_one_edit_with_camel_case_names() {
    let schema = serde_json::to_value(schemars::schema_for!(EditArgs)).unwrap();
    assert_eq!(schema["properties"]["edits"]["minItems"], 1);
    let item = &schema["$defs"]["Replacement"]["properties"];
    assert!(
        item.get("oldText").is_some() && item.get("newText").is_some(),
        "{schema}"
    );
}

// --- Blank-line drift: the fourth matching stage ---

/// Two functions with a blank line between them (line 4).
const FUNCTIONS: &str = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";

#[tokio::test]
async fn a_blank_line_left_out_stays_in_the_file() {
    let (result, after) = run_ok(FUNCTIONS, &[("}\nfn b() {\n    2", "}\nfn b() {\n    3")]).await;
    assert_eq!(after, "fn a() {\n    1\n}\n\nfn b() {\n    3\n}\n");
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt.\nApplied with blank lines adjusted: your oldText's blank lines differ from lines 3-6 of the file: it has no blank line at line 4 (the file has 1); the file's blank lines were kept next to the lines newText keeps, and the blank lines newText adds or removes were added or removed."
    );
    assert_eq!(result.details["fuzzyMatch"], true);
    assert_eq!(
        result.details["blankLines"],
        serde_json::json!([{
            "edit": 0,
            "startLine": 3,
            "endLine": 6,
            "places": [{"line": 4, "inFile": 1, "inOldText": 0}],
            "note": result.details["blankLines"][0]["note"].clone(),
        }])
    );
    assert!(result.details.get("indentation").is_none());
}

#[tokio::test]
async fn an_extra_blank_line_is_not_written() {
    let old = "    1\n}\n\n\nfn b() {";
    let (result, after) = run_ok(FUNCTIONS, &[(old, "    1\n}\n\n\nfn b(x: u8) {")]).await;
    assert_eq!(after, "fn a() {\n    1\n}\n\nfn b(x: u8) {\n    2\n}\n");
    assert_eq!(
        result.details["blankLines"][0]["places"],
        serde_json::json!([{"line": 4, "inFile": 1, "inOldText": 2}])
    );
}

#[tokio::test]
async fn several_places_and_blank_lines_new_text_adds_or_removes() {
    let file = "use a;\n\nuse b;\n\n\nfn main() {\n    run();\n}\n";
    // oldText has none of the file's three blank lines.
    let old = "use a;\nuse b;\nfn main() {\n    run();";
    let (result, after) = run_ok(file, &[(old, "use a;\nuse b::c;\nfn main() {\n    go();")]).await;
    assert_eq!(
        after,
        "use a;\n\nuse b::c;\n\n\nfn main() {\n    go();\n}\n"
    );
    assert_eq!(
        result.details["blankLines"][0]["places"],
        serde_json::json!([
            {"line": 2, "inFile": 1, "inOldText": 0},
            {"line": 4, "inFile": 2, "inOldText": 0},
        ])
    );
    // A blank line newText adds where oldText had none is added to the file's; one it
    // removes is removed from them.
    let (_, after) = run_ok(file, &[(old, "use a;\n\nuse b;\nfn main() {\n    run();")]).await;
    assert_eq!(
        after,
        "use a;\n\n\nuse b;\n\n\nfn main() {\n    run();\n}\n"
    );
    let old = "use a;\n\nuse b;\n\nfn main() {";
    let (_, after) = run_ok(file, &[(old, "use a;\n\nuse b;\nfn main() {")]).await;
    assert_eq!(after, "use a;\n\nuse b;\n\nfn main() {\n    run();\n}\n");
}

#[tokio::test]
async fn blank_lines_at_the_windows_edge() {
    // oldText starts and ends with blank lines the file does not have there.
    let file = "x = 1\ny = 2\nz = 3\n";
    let (result, after) = run_ok(file, &[("\ny = 2\n\n", "\ny = 5\n\n")]).await;
    assert_eq!(after, "x = 1\ny = 5\nz = 3\n");
    assert_eq!(
        result.details["blankLines"][0]["places"],
        serde_json::json!([
            {"line": 2, "inFile": 0, "inOldText": 1},
            {"line": 3, "inFile": 0, "inOldText": 1},
        ])
    );
    // The file has one blank line before the block where oldText has two: the window takes
    // that one, and it stays.
    let file = "x = 1\n\ny = 2\nz = 3\n";
    let (_, after) = run_ok(file, &[("\n\ny = 2\nz = 3", "\n\ny = 4\nz = 3")]).await;
    assert_eq!(after, "x = 1\n\ny = 4\nz = 3\n");
}

#[tokio::test]
async fn drift_combined_with_an_indentation_shift() {
    let file = "impl S {\n    fn a() {}\n\n    fn b() {}\n}\n";
    let (result, after) = run_ok(
        file,
        &[(
            "fn a() {}\nfn b() {}",
            "fn a() {}\nfn b() {\n    todo!()\n}",
        )],
    )
    .await;
    assert_eq!(
        after,
        "impl S {\n    fn a() {}\n\n    fn b() {\n        todo!()\n    }\n}\n"
    );
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt.\nApplied with indentation adjusted: your oldText was indented 4 spaces less deeply than lines 2-4 of the file; newText was shifted deeper by the same amount.\nApplied with blank lines adjusted: your oldText's blank lines differ from lines 2-4 of the file: it has no blank line at line 3 (the file has 1); the file's blank lines were kept next to the lines newText keeps, and the blank lines newText adds or removes were added or removed."
    );
    // Tabs for spaces, with the blank line left out.
    let (_, after) = run_ok(
        file,
        &[("\tfn a() {}\n\tfn b() {}", "\tfn a() {}\n\tfn c() {}")],
    )
    .await;
    assert_eq!(after, "impl S {\n    fn a() {}\n\n    fn c() {}\n}\n");
}

#[tokio::test]
async fn a_blank_line_between_two_lines_changed_one_for_one_stays_between_them() {
    // Both lines next to the blank line the model left out change: the two lines that
    // replace them line up with the file only with the blank line between them.
    let (result, after) = run_ok(FUNCTIONS, &[("}\nfn b() {", "})\nfn c() {")]).await;
    assert_eq!(after, "fn a() {\n    1\n})\n\nfn c() {\n    2\n}\n");
    assert!(
        result
            .text_content()
            .contains("Applied with blank lines adjusted"),
        "{}",
        result.text_content()
    );
    // A blank line the model added between them goes away the same way.
    let file = "fn a() {\n    1\n}\nfn b() {\n    2\n}\n";
    let (_, after) = run_ok(file, &[("}\n\nfn b() {", "})\n\nfn c() {")]).await;
    assert_eq!(after, "fn a() {\n    1\n})\nfn c() {\n    2\n}\n");
}

#[tokio::test]
async fn a_blank_line_between_lines_replaced_by_more_lines_is_refused() {
    let message = run_err(FUNCTIONS, &[("}\nfn b() {", "})\nfn x() {}\nfn c() {")]).await;
    assert_eq!(
        message,
        "oldText matches f.txt only with its blank lines adjusted (your oldText's blank lines differ from lines 3-5 of the file), but at line 4 that adjustment falls among lines that newText replaces with more or fewer lines, or between two kept lines with new text put between them, so where the file's blank lines belong in the new text is not defined. Copy the blank lines of lines 3-5 from the file into oldText exactly, or keep a line next to them unchanged in newText."
    );
    // So is new text put between two unchanged lines where the file has a blank line.
    let message = run_err(FUNCTIONS, &[("}\nfn b() {", "}\nfn x() {}\nfn b() {")]).await;
    assert!(
        message.contains("at line 4 that adjustment falls among"),
        "{message}"
    );
}

#[tokio::test]
async fn drift_in_a_crlf_file_with_a_bom_and_among_other_edits() {
    let file = "\u{FEFF}top\r\nfn a() {\r\n    1\r\n}\r\n\r\nfn b() {\r\n    2\r\n}\r\nbottom\r\n";
    let (result, after) = run_ok(
        file,
        &[
            ("top", "TOP"),
            ("    1\n}\nfn b() {\n", "    1\n}\nfn b(x: u8) {\n"),
            ("bottom", "BOTTOM"),
        ],
    )
    .await;
    assert_eq!(
        after,
        "\u{FEFF}TOP\r\nfn a() {\r\n    1\r\n}\r\n\r\nfn b(x: u8) {\r\n    2\r\n}\r\nBOTTOM\r\n"
    );
    assert!(
        result
            .text_content()
            .contains("\nedits[1] was applied with blank lines adjusted: your oldText's blank lines differ from lines 3-6 of the file"),
        "{}",
        result.text_content()
    );
    assert_eq!(result.details["blankLines"][0]["edit"], 1);
}

#[tokio::test]
async fn drift_matching_two_places_is_refused_naming_both() {
    let file = "a();\n\nb();\nc();\na();\nb();\n\n";
    assert_eq!(
        run_err(file, &[("a();\n\n\nb();", "x")]).await,
        "oldText does not match f.txt exactly, and once its blank lines and indentation are set aside it matches several places (starting at lines 1, 5); it must match exactly one. Copy the text with its blank lines from the file, and add surrounding lines to make it unique."
    );
}

// --- A fuzzy match never cuts a character's compatibility expansion in two ---

#[tokio::test]
async fn a_match_starting_inside_a_ligature_is_refused() {
    let file = "pro\u{FB01}le = 1\n";
    assert_eq!(
        run_err(file, &[("ile = 1 ", "ILE = 2")]).await,
        "oldText matches f.txt only if it begins inside the character \"\u{FB01}\" on line 1, which reads as \"fi\"; edit does not replace part of a character. Start oldText before or after that character, copying it from the file as it is."
    );
    // The whole character, spelt out, matches and is replaced exactly.
    let (_, after) = run_ok(file, &[("profile = 1 ", "profile = 2")]).await;
    assert_eq!(after, "profile = 2\n");
}

#[tokio::test]
async fn a_match_ending_inside_an_ellipsis_is_refused() {
    let file = "msg = \"Loading\u{2026}\"\n";
    assert_eq!(
        run_err(file, &[("msg = \"Loading. ", "msg = \"Done")]).await,
        "oldText matches f.txt only if it ends inside the character \"\u{2026}\" on line 1, which reads as \"...\"; edit does not replace part of a character. End oldText before or after that character, copying it from the file as it is."
    );
    let (_, after) = run_ok(file, &[("msg = \"Loading...\" ", "msg = \"Done\"")]).await;
    assert_eq!(after, "msg = \"Done\"\n");
    // A whole-character match elsewhere is not hidden by a split one.
    let (_, after) = run_ok("\u{FB01}\nfi = 1\n", &[("i = 1 ", "o = 2")]).await;
    assert_eq!(after, "\u{FB01}\nfo = 2\n");
}
