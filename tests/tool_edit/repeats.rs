//! Repeated text: overlapping occurrences, stale resends of an edit already applied, and
//! blank lines placed by position in a window whose lines repeat.

use super::*;

#[tokio::test]
async fn overlapping_occurrences_are_ambiguous_in_every_stage() {
    // Exactly: "foo\nfoo\n" starts on line 1 and on line 2.
    assert_eq!(
        run_err("foo\nfoo\nfoo\n", &[("foo\nfoo\n", "bar\n")]).await,
        "oldText matches 2 places in f.txt (starting at lines 1, 2); it must match exactly one. Add surrounding lines to make it unique."
    );
    // Within one line.
    assert_eq!(
        run_err("aaa\n", &[("aa", "b")]).await,
        "oldText matches 2 places in f.txt (all on line 1); it must match exactly one. Add surrounding lines to make it unique."
    );
    // Through the normalisation of quotes.
    assert_eq!(
        run_err(
            "say(\u{201C}x\u{201D})\nsay(\u{201C}x\u{201D})\nsay(\u{201C}x\u{201D})\n",
            &[("say(\"x\")\nsay(\"x\")\n", "y\n")]
        )
        .await,
        "oldText matches 2 places in f.txt (starting at lines 1, 2); it must match exactly one. Add surrounding lines to make it unique."
    );
    // Once indentation is set aside.
    assert_eq!(
        run_err("  foo\n  foo\n  foo\n", &[("foo\nfoo\n", "bar\n")]).await,
        "oldText does not match f.txt exactly, and once its indentation is set aside it matches several places (starting at lines 1, 2); it must match exactly one. Copy the text with its indentation from the file, and add surrounding lines to make it unique."
    );
}

#[tokio::test]
async fn one_line_is_never_moved_to_another_depth() {
    // The target, in a module, was changed already; the same line in a function at the top
    // is another place. (A line less deep than the file's is found by the exact stage, as
    // the end of that line.)
    let file = "mod m {\n    fn a() {\n        let x = compute_fast();\n    }\n}\n\nfn t() {\n    let x = compute();\n}\n";
    let message = run_err(
        file,
        &[(
            "        let x = compute();",
            "        let x = compute_fast();",
        )],
    )
    .await;
    assert!(
        message.starts_with("Could not find oldText in f.txt. It must match the file exactly, including whitespace and indentation: read the file again and copy the text from it. Line 8 of the file has the same text at another depth; a single line is only matched at its own depth (in tabs or in spaces), since the same line deeper or shallower is most likely another place."),
        "{message}"
    );
    // Converted between spaces and tabs, the depth must be the same too: eight spaces are
    // two tabs of 4 columns.
    let message = run_err(
        "fn a() {\n\tlet y = 1;\n}\n// vim: ts=4\n",
        &[("        let y = 1;", "        let y = 2;")],
    )
    .await;
    assert!(
        message.contains("Line 2 of the file has the same text at another depth"),
        "{message}"
    );
}

#[tokio::test]
async fn a_block_already_wrapped_is_not_wrapped_again() {
    let file = "fn f() {\n    with_lock(|| {\n        a();\n        b();\n    });\n}\n";
    let message = run_err(
        file,
        &[(
            "    a();\n    b();",
            "    with_lock(|| {\n        a();\n        b();\n    });",
        )],
    )
    .await;
    assert_eq!(
        message,
        "oldText matches f.txt only with its indentation adjusted (lines 3-4), and the lines of newText are already there (lines 2-5): the edit looks already applied. Read the file again to see its current state before editing it."
    );
}

#[tokio::test]
async fn a_line_already_inserted_is_not_inserted_again() {
    let file = "say(\u{201C}hi\u{201D});\nsay(\u{201C}bye\u{201D});\n";
    let message = run_err(file, &[("say(\"hi\");", "say(\"hi\");\nsay(\"bye\");")]).await;
    assert_eq!(
        message,
        "oldText matches f.txt only once its quotes, dashes, spaces or Unicode forms are normalised (line 1), and the lines of newText are already there (lines 1-2): the edit looks already applied. Read the file again to see its current state before editing it."
    );
    // An exact match is taken as meant.
    let (_, after) = run_ok("a();\nb();\n", &[("a();", "a();\nb();")]).await;
    assert_eq!(after, "a();\nb();\nb();\n");
}

#[tokio::test]
async fn blank_lines_are_placed_by_position_or_refused() {
    // oldText leaves out the file's blank line after `let count = 1;`; newText repeats
    // `Ok(count)` and `}`, so which copy the file's blank line goes before is not defined
    // by text.
    let file = "fn f() -> usize {\n    let count = 1;\n\n    Ok(count)\n}\n";
    let message = run_err(
        file,
        &[(
            "    let count = 1;\n    Ok(count)\n}",
            "    let count = 1;\n    Ok(count)\n}\nfn g() -> usize {\n    Ok(count)\n}",
        )],
    )
    .await;
    assert!(
        message.starts_with("oldText matches f.txt only with its blank lines adjusted"),
        "{message}"
    );
    assert!(message.contains("at line 3 that adjustment"), "{message}");
    // Repeated lines that newText keeps in place pair by position.
    let file = "fn f() {\n    x();\n\n    x();\n    x();\n}\n";
    let (_, after) = run_ok(
        file,
        &[(
            "    x();\n    x();\n    x();\n}",
            "    x();\n    x();\n    y();\n}",
        )],
    )
    .await;
    assert_eq!(after, "fn f() {\n    x();\n\n    x();\n    y();\n}\n");
}

#[tokio::test]
async fn a_block_already_changed_is_not_changed_again_at_another_depth() {
    // `b();` became `c();` in f; the resent edit's oldText is found, one level deeper, in
    // the test module, and newText as sent is already in f.
    let file = "fn f() {\n    a();\n\n    c();\n}\n\nmod tests {\n    fn t() {\n        a();\n        b();\n    }\n}\n";
    let message = run_err(file, &[("    a();\n    b();", "    a();\n    c();")]).await;
    assert_eq!(
        message,
        "oldText matches f.txt only with its indentation adjusted (lines 9-10), and newText as you sent it is already in the file (lines 2-4): the edit looks already applied there, and the match is most likely another place. Read the file again to see its current state before editing it."
    );
    // A real indentation mistake whose newText is nowhere yet applies.
    let (_, after) = run_ok(file, &[("    a();\n    b();", "    a();\n    d();")]).await;
    assert_eq!(after, file.replace("        b();", "        d();"));
}
