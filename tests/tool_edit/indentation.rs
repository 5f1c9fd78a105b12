//! Indentation, the third matching stage: shifted blocks, tabs for spaces and spaces for tabs,
//! one-line blocks, and newText kept in the file's indentation.

use super::*;

// --- Indentation: the third matching stage ---

/// A spaces-indented block (lines 2-4) inside a function.
const SPACES: &str = "fn f() {\n    if a {\n        b();\n    }\n}\n";
/// The same with tabs.
const TABS: &str = "fn f() {\n\tif a {\n\t\tb();\n\t}\n}\n";

/// `text` with every non-blank line's indentation passed through `f`.
fn reindent(text: &str, f: impl Fn(&str) -> String) -> String {
    text.split('\n')
        .map(|line| {
            let body = line.trim_start_matches([' ', '\t']);
            if body.is_empty() {
                line.to_string()
            } else {
                format!("{}{body}", f(&line[..line.len() - body.len()]))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A change to one line's indentation.
type Reindent = fn(&str) -> String;

#[tokio::test]
async fn uniform_shifts_are_undone_in_new_text() {
    let old = "    if a {\n        b();\n    }";
    let new = "    if a {\n        c();\n    }";
    let cases: [(&str, &str, Reindent, &str); 6] = [
        (SPACES, "+2", |i| format!("  {i}"), "2 spaces deeper"),
        (SPACES, "+4", |i| format!("    {i}"), "4 spaces deeper"),
        (SPACES, "-2", |i| i[2..].to_string(), "2 spaces less deeply"),
        (SPACES, "-4", |i| i[4..].to_string(), "4 spaces less deeply"),
        (TABS, "+1 tab", |i| format!("\t{i}"), "1 tab deeper"),
        (TABS, "-1 tab", |i| i[1..].to_string(), "1 tab less deeply"),
    ];
    for (file, name, shift, words) in cases {
        let (old, new) = if file == TABS {
            (old.replace("    ", "\t"), new.replace("    ", "\t"))
        } else {
            (old.to_string(), new.to_string())
        };
        let (result, after) =
            run_ok(file, &[(&reindent(&old, shift), &reindent(&new, shift))]).await;
        assert_eq!(after, file.replace("b();", "c();"), "{name}");
        let moved = if words.contains("less") {
            "deeper"
        } else {
            "back"
        };
        assert_eq!(
            result.text_content(),
            format!(
                "Successfully replaced 1 block in f.txt.\nApplied with indentation adjusted: your oldText was indented {words} than lines 2-4 of the file; newText was shifted {moved} by the same amount."
            ),
            "{name}"
        );
        assert_eq!(result.details["fuzzyMatch"], true, "{name}");
        assert_eq!(result.details["indentation"][0]["startLine"], 2, "{name}");
        assert_eq!(result.details["indentation"][0]["endLine"], 4, "{name}");
    }
}

#[tokio::test]
async fn indentation_details_carry_the_adjustment_as_data() {
    let (result, _) = run_ok(
        SPACES,
        &[(
            "        if a {\n            b();\n        }",
            "        if a {}",
        )],
    )
    .await;
    assert_eq!(
        result.details["indentation"],
        serde_json::json!([{
            "edit": 0,
            "startLine": 2,
            "endLine": 4,
            "columns": 4,
            "shift": {"undeepen": "    "},
            "tabWidth": 4,
            "note": "your oldText was indented 4 spaces deeper than lines 2-4 of the file; newText was shifted back by the same amount."
        }])
    );
    // Without an adjustment there is no such entry.
    let (result, _) = run_ok(SPACES, &[("b();", "c();")]).await;
    assert!(result.details.get("indentation").is_none());
}

#[tokio::test]
async fn tabs_for_spaces_and_spaces_for_tabs_at_widths_2_4_and_8() {
    for width in [2, 4, 8] {
        let pad = " ".repeat(width);
        let spaces = TABS.replace('\t', &pad);
        // Tabs sent for a file indented with `width` spaces: converted at the file's step.
        let old = "\tif a {\n\t\tb();\n\t}";
        let new = "\tif a {\n\t\tc();\n\t\td();\n\t}";
        let (result, after) = run_ok(&spaces, &[(old, new)]).await;
        let expected =
            format!("fn f() {{\n{pad}if a {{\n{pad}{pad}c();\n{pad}{pad}d();\n{pad}}}\n}}\n");
        assert_eq!(after, expected, "tabs for {width} spaces");
        assert_eq!(
            result.text_content(),
            format!(
                "Successfully replaced 1 block in f.txt.\nApplied with indentation adjusted: your oldText was indented with tabs where lines 2-4 of the file are indented with spaces (a tab is {width} columns); newText was converted to the file's indentation the same way."
            )
        );
        assert_eq!(result.details["indentation"][0]["convertedTo"], "spaces");
        assert_eq!(result.details["indentation"][0]["tabWidth"], width);
        assert_eq!(result.details["indentation"][0]["columns"], 0);

        // `width` spaces sent for a file indented with tabs: the block's levels pin the width.
        let old = reindent("\tif a {\n\t\tb();\n\t}", |i| i.replace('\t', &pad));
        let new = reindent("\tif a {\n\t\tc();\n\t\td();\n\t}", |i| {
            i.replace('\t', &pad)
        });
        let (result, after) = run_ok(TABS, &[(&old, &new)]).await;
        assert_eq!(
            after, "fn f() {\n\tif a {\n\t\tc();\n\t\td();\n\t}\n}\n",
            "{width} spaces for tabs"
        );
        assert_eq!(result.details["indentation"][0]["convertedTo"], "tabs");
        assert_eq!(result.details["indentation"][0]["tabWidth"], width);
    }
}

#[tokio::test]
async fn converted_and_shifted_at_once() {
    // Spaces, one level (4 columns) too deep, for a tab-indented block.
    let old = "        if a {\n            b();\n        }";
    let new = "        if a {\n            c();\n        }";
    let (result, after) = run_ok(TABS, &[(old, new)]).await;
    assert_eq!(after, TABS.replace("b();", "c();"));
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt.\nApplied with indentation adjusted: your oldText was indented with spaces, 4 columns deeper, where lines 2-4 of the file are indented with tabs (a tab is 4 columns); newText was converted to the file's indentation the same way."
    );
    assert_eq!(result.details["indentation"][0]["columns"], 4);
}

#[tokio::test]
async fn blank_lines_inside_the_block_stay_blank() {
    let file = "def f():\n    a = 1\n\n    return a\n";
    // The blank line of oldText may carry whitespace; empty lines of newText stay empty.
    let old = "        a = 1\n        \n        return a";
    let new = "        a = 2\n\n        b = a\n        return b";
    let (_, after) = run_ok(file, &[(old, new)]).await;
    assert_eq!(after, "def f():\n    a = 2\n\n    b = a\n    return b\n");
    // A blank line of oldText does not match a line with text.
    let file = "def f():\n    a = 1\n    x = 2\n    return a\n";
    let message = run_err(file, &[("        a = 1\n\n        return a", "x")]).await;
    assert!(message.starts_with("Could not find oldText"), "{message}");
}

#[tokio::test]
async fn one_line_blocks_must_be_unique_without_indentation() {
    // One line is never moved to another depth (`repeats.rs`): the same line shallower is
    // most likely another place.
    assert!(
        run_err(
            "a\n    x = 1;\nb\n",
            &[("        x = 1;", "        x = 2;")]
        )
        .await
        .contains("Line 2 of the file has the same text at another depth")
    );
    assert_eq!(
        run_err("    x = 1;\nz\n  x = 1;\n", &[("      x = 1;", "x = 2;")]).await,
        "oldText does not match f.txt exactly, and once its indentation is set aside it matches several places (starting at lines 1, 3); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique."
    );
}

#[tokio::test]
async fn two_qualifying_windows_are_refused_naming_both() {
    let file = "    if a {\n        b();\n    }\nfn g() {\n        if a {\n            b();\n        }\n}\n";
    assert_eq!(
        run_err(file, &[("  if a {\n      b();\n  }", "x")]).await,
        "oldText does not match f.txt exactly, and once its indentation is set aside it matches several places (starting at lines 1, 5); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique."
    );
}

#[tokio::test]
async fn a_window_needing_different_shifts_is_refused() {
    // The first line is 2 spaces too deep, the second is right.
    let message = run_err(SPACES, &[("      if a {\n        b();\n    }", "x")]).await;
    assert_eq!(
        message,
        "Could not find oldText in f.txt. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it. Lines 2-4 of the file have the same text, but the indentation differs from line to line in a way no single shift or tabs-for-spaces conversion explains; copy the indentation from the file.\n\nThe most similar part of the file:\n1 | fn f() {\n2 |     if a {\n3 |         b();\n4 |     }\n5 | }"
    );
    // Tabs and spaces mixed so that no one tab width converts them (6 spaces for a level).
    let message = run_err(TABS, &[("\tif a {\n      b();\n\t}", "x")]).await;
    assert!(
        message.contains("Lines 2-4 of the file have the same text"),
        "{message}"
    );
}

#[tokio::test]
async fn one_line_sent_with_spaces_in_a_tab_block_is_converted() {
    let (result, after) = run_ok(
        TABS,
        &[("\tif a {\n        b();\n\t}", "\tif a {\n        c();\n\t}")],
    )
    .await;
    assert_eq!(after, TABS.replace("b();", "c();"));
    assert_eq!(
        result.details["indentation"][0]["note"],
        "your oldText was indented with tabs and spaces where lines 2-4 of the file are indented with tabs (a tab is 4 columns); newText was converted to the file's indentation the same way."
    );
}

#[tokio::test]
async fn one_line_with_spaces_for_a_tab_is_converted_when_its_text_is_unique() {
    // One line cannot tell the tab width, nor whether it is at the file line's depth: the
    // file must settle it (`tab_width.rs`); here the way its lines mix tabs and spaces does
    // (spaces up to 4 columns, tabs beyond: a tab is 8).
    let file =
        "{\n\t\"name\": \"pi\",\n\t\"version\": \"0.5.3\",\n\t    \"x\": 1,\n    \"y\": 2,\n}\n";
    let (result, after) = run_ok(
        file,
        &[(
            "        \"version\": \"0.5.3\",",
            "        \"version\": \"0.5.4\",\n        \"private\": true,",
        )],
    )
    .await;
    assert_eq!(
        after,
        "{\n\t\"name\": \"pi\",\n\t\"version\": \"0.5.4\",\n\t\"private\": true,\n\t    \"x\": 1,\n    \"y\": 2,\n}\n"
    );
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt.\nApplied with indentation adjusted: your oldText was indented with spaces where line 3 of the file is indented with tabs (a tab is 8 columns); newText was converted to the file's indentation the same way."
    );
    // An indentation no shift or conversion produces (a space before a tab) is still refused.
    assert_eq!(
        run_err(" \tindented();\n", &[("  indented();", "x")]).await,
        "Could not find oldText in f.txt. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it. Line 1 of the file has the same text, but the indentation is not oldText's shifted or converted between tabs and spaces; copy the indentation from the file.\n\nThe most similar part of the file:\n1 |  \tindented();"
    );
}

#[tokio::test]
async fn one_line_tabs_for_spaces_at_the_files_step_2_4_and_8() {
    for width in [2, 4, 8] {
        let pad = " ".repeat(width);
        let file =
            format!("fn f() {{\n{pad}let v = 1;\n{pad}if a {{\n{pad}{pad}b();\n{pad}}}\n}}\n");
        let (result, after) = run_ok(&file, &[("\t\tb();", "\t\tc();\n\t\td();")]).await;
        assert_eq!(
            after,
            file.replace("b();", &format!("c();\n{pad}{pad}d();")),
            "tabs for {width} spaces"
        );
        assert_eq!(result.details["indentation"][0]["convertedTo"], "spaces");
        assert_eq!(result.details["indentation"][0]["tabWidth"], width);
        assert_eq!(result.details["indentation"][0]["startLine"], 4);
        assert_eq!(result.details["indentation"][0]["endLine"], 4);
    }
}

#[tokio::test]
async fn one_line_spaces_for_tabs_land_at_the_files_indentation() {
    // A tab file whose modeline makes a tab 4 columns: eight spaces are the depth of the
    // line's two tabs, and newText's lines at that depth land at its tabs. Two or four
    // spaces are another depth.
    let file = format!("{TABS}// vim: ts=4\n");
    let (result, after) = run_ok(&file, &[("        b();", "        c();")]).await;
    assert_eq!(after, file.replace("b();", "c();"));
    assert_eq!(result.details["indentation"][0]["convertedTo"], "tabs");
    assert_eq!(result.details["indentation"][0]["tabWidth"], 4);
    assert_eq!(result.details["indentation"][0]["columns"], 0);
    for spaces in [2, 4] {
        let pad = " ".repeat(spaces);
        let message = run_err(&file, &[(&format!("{pad}b();"), &format!("{pad}c();"))]).await;
        assert!(
            message.contains("Line 3 of the file has the same text at another depth"),
            "{spaces} spaces: {message}"
        );
    }
}

#[tokio::test]
async fn one_line_in_either_style_twice_is_refused_naming_both() {
    assert_eq!(
        run_err(
            "\tx = 1;\nfn g() {\n    x = 1;\n}\n",
            &[("\t\tx = 1;", "x = 2;")]
        )
        .await,
        "oldText does not match f.txt exactly, and once its indentation is set aside it matches several places (starting at lines 1, 3); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique."
    );
}

#[tokio::test]
async fn new_text_keeps_its_relative_indentation() {
    // oldText 4 spaces too deep; newText nests deeper and also goes back out one level.
    let old = "        if a {\n            b();\n        }";
    let new = "        if a {\n            if c {\n                b();\n            }\n        }\n    d();";
    let (_, after) = run_ok(SPACES, &[(old, new)]).await;
    assert_eq!(
        after,
        "fn f() {\n    if a {\n        if c {\n            b();\n        }\n    }\nd();\n}\n"
    );
    // A newText line shallower than the shift can undo is refused.
    assert_eq!(
        run_err(SPACES, &[(old, "        if a {}\n  d();")]).await,
        "newText could not be re-indented for f.txt: your oldText was indented 4 spaces deeper than lines 2-4 of the file, but line 2 of newText is indented too little to be adjusted the same way. Indent newText the way oldText is indented, or copy the indentation from the file exactly."
    );
}

#[tokio::test]
async fn indentation_adjusted_in_a_crlf_file_with_a_bom() {
    let file = "\u{FEFF}x\r\n    a\r\n        b\r\ny\r\n";
    let (_, after) = run_ok(file, &[("  a\n      b\n", "  a\n      c\n      d\n")]).await;
    assert_eq!(
        after,
        "\u{FEFF}x\r\n    a\r\n        c\r\n        d\r\ny\r\n"
    );
}

#[tokio::test]
async fn each_edit_of_a_call_is_adjusted_on_its_own() {
    let file = "top\nfn f() {\n    if a {\n        b();\n    }\n}\nbottom\n";
    let (result, after) = run_ok(
        file,
        &[
            ("top", "TOP"),
            ("\tif a {\n\t\tb();\n\t}", "\tif a {\n\t\tc();\n\t}"),
            ("bottom", "BOTTOM"),
        ],
    )
    .await;
    assert_eq!(
        after,
        "TOP\nfn f() {\n    if a {\n        c();\n    }\n}\nBOTTOM\n"
    );
    assert_eq!(
        result.text_content(),
        "Successfully replaced 3 blocks in f.txt.\nedits[1] was applied with indentation adjusted: your oldText was indented with tabs where lines 3-5 of the file are indented with spaces (a tab is 4 columns); newText was converted to the file's indentation the same way."
    );
    assert_eq!(result.details["indentation"][0]["edit"], 1);
    // Overlap rules are unchanged: an exact edit inside an adjusted window overlaps it.
    assert_eq!(
        run_err(file, &[("b();", "c();"), ("\tif a {\n\t\tb();\n\t}", "x")]).await,
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit, or make them cover separate parts of the file."
    );
}
