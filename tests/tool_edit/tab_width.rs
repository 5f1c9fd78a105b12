//! How many columns a tab stands for, read from the file (a modeline, the way its lines mix
//! tabs and spaces) or from its .editorconfig; where nothing settles it, read at each of 2,
//! 4 and 8 and refused only when the readings would write different bytes.

use super::*;

/// A tab-indented function; line 3 is two tabs deep.
const TABS: &str = "fn f() {\n\tif a {\n\t\tb();\n\t}\n}\n";

/// Runs one edit of `f.txt` holding `file`, beside `.editorconfig` holding `config` when
/// given.
async fn run_with_config(
    file: &str,
    config: Option<&str>,
    old: &str,
    new: &str,
) -> (Result<ToolResult, String>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), file).unwrap();
    if let Some(config) = config {
        std::fs::write(dir.path().join(".editorconfig"), config).unwrap();
    }
    let args = EditArgs::new("f.txt", edits(&[(old, new)]));
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
async fn a_vim_modeline_settles_two_columns() {
    let file = format!("{TABS}// vim: set ts=2 sw=2 noet:\n");
    let (result, after) = run_ok(&file, &[("    b();", "    b();\n      c();")]).await;
    assert_eq!(after, file.replace("b();", "b();\n\t\t\tc();"));
    assert_eq!(result.details["indentation"][0]["tabWidth"], 2);
    assert_eq!(result.details["indentation"][0]["columns"], 0);
}

#[tokio::test]
async fn an_emacs_modeline_settles_eight_columns() {
    let file = format!("/* -*- mode: c; tab-width: 8 -*- */\n{TABS}");
    let deeper = " ".repeat(24);
    let (_, after) = run_ok(
        &file,
        &[(
            "                b();",
            &format!("                c();\n{deeper}d();"),
        )],
    )
    .await;
    assert_eq!(after, file.replace("b();", "c();\n\t\t\td();"));
}

#[tokio::test]
async fn editorconfig_tab_width_or_indent_size_settles_it() {
    for config in [
        "root = true\n[*]\nindent_style = tab\ntab_width = 2\n",
        "root = true\n[*.txt]\nindent_size = 2\n",
        "root = true\n[*.{rs,txt}]\nindent_size = tab\ntab_width = 2\n",
    ] {
        let (result, after) =
            run_with_config(TABS, Some(config), "    b();", "    b();\n      c();").await;
        result.unwrap_or_else(|e| panic!("{config}: {e}"));
        assert_eq!(after, TABS.replace("b();", "b();\n\t\t\tc();"), "{config}");
    }
    // A section for other files does not apply: four spaces are then read at the one width
    // that keeps them at the line's depth, which the section's 8 would not.
    let (result, after) = run_with_config(
        TABS,
        Some("root = true\n[*.py]\ntab_width = 8\n"),
        "    b();",
        "    x();",
    )
    .await;
    result.unwrap();
    assert_eq!(after, TABS.replace("b();", "x();"));
}

#[tokio::test]
async fn tabs_followed_by_up_to_seven_spaces_settle_eight_columns() {
    // The GNU style: spaces below 8 columns, a tab for each 8.
    let file = "int f() {\n  if (a) {\n      g();\n\th();\n\t  i();\n  }\n}\n";
    let (result, after) = run_ok(file, &[("        h();", "        h();\n          j();")]).await;
    assert_eq!(after, file.replace("h();", "h();\n\t  j();"));
    assert_eq!(result.details["indentation"][0]["tabWidth"], 8);
}

#[tokio::test]
async fn an_unsettled_width_is_read_at_the_one_width_that_keeps_the_line_at_its_depth() {
    // Four spaces for two tabs is the same depth only at 2 columns a tab (at 4 it is one tab,
    // at 8 none): that is the one reading, and newText is converted at it.
    let (result, after) = run_ok(TABS, &[("    b();", "    b();\n      c();")]).await;
    assert_eq!(after, TABS.replace("b();", "b();\n\t\t\tc();"));
    assert_eq!(result.details["indentation"][0]["tabWidth"], 2);
    // Eight spaces: one tab at 8, two at 4; line 2 is one tab deep.
    let (_, after) = run_ok(TABS, &[("        if a {", "        if a && b {")]).await;
    assert_eq!(after, TABS.replace("if a {", "if a && b {"));
    // Each of 2, 4 and 8.
    for (width, spaces) in [(2, 4), (4, 8), (8, 16)] {
        let old = format!("{}b();", " ".repeat(spaces));
        let new = format!("{old}\n{}c();", " ".repeat(spaces + width));
        let (result, after) = run_ok(TABS, &[(&old, &new)]).await;
        assert_eq!(after, TABS.replace("b();", "b();\n\t\t\tc();"), "{width}");
        assert_eq!(result.details["indentation"][0]["tabWidth"], width);
    }
    // A block of several lines shows its own levels and is converted.
    let (_, after) = run_ok(
        TABS,
        &[(
            "    if a {\n        b();\n    }",
            "    if a {\n        c();\n    }",
        )],
    )
    .await;
    assert_eq!(after, TABS.replace("b();", "c();"));
}

#[tokio::test]
async fn one_line_edits_in_files_indented_with_tabs_only_apply() {
    // The corpus's lost class: a one-line edit in a tab-indented file, sent in tabs (as
    // the file has it) or in spaces at any width.
    let file = "package main\n\nfunc f() {\n\tif ok {\n\t\treturn 1\n\t}\n\treturn 0\n}\n";
    for old in [
        "\t\treturn 1",
        "    return 1",
        "        return 1",
        "                return 1",
    ] {
        let new = old.replace('1', "2");
        let (_, after) = run_ok(file, &[(old, &new)]).await;
        assert_eq!(after, file.replace("return 1", "return 2"), "{old:?}");
    }
}

#[tokio::test]
async fn an_unsettled_width_is_refused_only_when_the_readings_write_different_bytes() {
    // Two spaces and a tab are one tab at 4 columns and at 8: the line is at its depth at
    // both, and a deeper newText line is a tab and two spaces at 4, six spaces at 8.
    let file = "fn f() {\n\tb();\n}\n";
    let message = run_err(file, &[("  \tb();", "  \tb();\n      c();")]).await;
    assert_eq!(
        message,
        "oldText matches line 2 of f.txt only with its indentation converted between spaces and tabs, and f.txt does not settle how many columns a tab stands for (no modeline, no tab_width or indent_size in an .editorconfig, no lines mixing tabs and spaces), which decides how newText's lines are indented: the widths at which it matches would write them differently. Copy the line's indentation from the file (it is indented with tabs), and indent newText the same way."
    );
    // newText at the line's own depth is written alike at both.
    let (_, after) = run_ok(file, &[("  \tb();", "  \tb();\n  \tc();")]).await;
    assert_eq!(after, "fn f() {\n\tb();\n\tc();\n}\n");
}

#[tokio::test]
async fn a_flat_block_shifted_at_an_unsettled_width_is_refused_when_new_text_would_differ() {
    // Two lines at one tab sent with 6 spaces: at a tab of 4 they are 2 columns too deep, at
    // a tab of 2 they are 4; a newText line deeper than them lands at 2 tabs or at 3.
    let file = "fn f() {\n\tb();\n\tc();\n}\n";
    let message = run_err(
        file,
        &[(
            "      b();\n      c();",
            "      b();\n          d();\n      c();",
        )],
    )
    .await;
    assert_eq!(
        message,
        "oldText matches lines 2-3 of f.txt only with its indentation converted between spaces and tabs, and f.txt does not settle how many columns a tab stands for (no modeline, no tab_width or indent_size in an .editorconfig, no lines mixing tabs and spaces), which decides how newText's lines are indented: the widths at which it matches would write them differently. Copy the indentation of those lines from the file (they are indented with tabs), and indent newText the same way."
    );
    // newText at the block's own depth lands the same at every width.
    let (_, after) = run_ok(
        file,
        &[("      b();\n      c();", "      b();\n      d();")],
    )
    .await;
    assert_eq!(after, "fn f() {\n\tb();\n\td();\n}\n");
    // A modeline settles it.
    let file = format!("{file}// vim: ts=2\n");
    let (_, after) = run_ok(
        &file,
        &[(
            "      b();\n      c();",
            "      b();\n          d();\n      c();",
        )],
    )
    .await;
    assert_eq!(
        after,
        "fn f() {\n\tb();\n\t\t\td();\n\tc();\n}\n// vim: ts=2\n"
    );
}
