//! Line numbers copied into oldText from tool output (`cat -n`, `nl -ba`, arrows, `12 | `,
//! grep), removed only when they are certainly line numbers of this file; and elided code,
//! which is refused.

use super::*;

/// Lines 1-6 of a small file; lines 3-4 are the ones edited.
const FILE: &str = "use std::io;\n\nfn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n";

const AFTER: &str = "use std::io;\n\nfn main() {\n    let x = 2;\n    println!(\"{x}\");\n}\n";

#[tokio::test]
async fn each_prefix_style_is_removed_when_the_numbers_name_the_place() {
    let cases = [
        (
            "cat -n",
            "     3\tfn main() {\n     4\t    let x = 1;",
            "     3\tfn main() {\n     4\t    let x = 2;",
        ),
        // nl -ba prints the same, a blank line as the number and a tab.
        (
            "cat -n",
            "     2\t\n     3\tfn main() {\n     4\t    let x = 1;",
            "\nfn main() {\n    let x = 2;",
        ),
        (
            "arrow",
            "3→fn main() {\n4→    let x = 1;",
            "3→fn main() {\n4→    let x = 2;",
        ),
        (
            "arrow",
            "     3→fn main() {\n     4→    let x = 1;",
            "fn main() {\n    let x = 2;",
        ),
        (
            "bar",
            "3 | fn main() {\n4 |     let x = 1;",
            "3 | fn main() {\n4 |     let x = 2;",
        ),
        (
            "grep",
            "3:fn main() {\n4:    let x = 1;",
            "3:fn main() {\n4:    let x = 2;",
        ),
        (
            "grep",
            "src/main.rs-3-fn main() {\nsrc/main.rs:4:    let x = 1;\nsrc/main.rs-5-    println!(\"{x}\");",
            "fn main() {\n    let x = 2;\n    println!(\"{x}\");",
        ),
        (
            "grep",
            "my-app/main.rs-3-fn main() {\nmy-app/main.rs:4:    let x = 1;",
            "my-app/main.rs-3-fn main() {\nmy-app/main.rs:4:    let x = 2;",
        ),
    ];
    for (style, old, new) in cases {
        let (result, after) = run_ok(FILE, &[(old, new)]).await;
        assert_eq!(after, AFTER, "{style}: {old:?}");
        let text = result.text_content();
        assert!(
            text.contains("\nApplied with line numbers removed: "),
            "{style}: {text}"
        );
        assert_eq!(result.details["lineNumbers"][0]["edit"], 0, "{style}");
        assert_eq!(result.details["fuzzyMatch"], true, "{style}");
        assert_eq!(result.details["lineNumbers"][0]["style"], style, "{old:?}");
        assert_eq!(
            result.details["lineNumbers"][0]["startLine"],
            if old.starts_with("     2") { 2 } else { 3 }
        );
    }
    let (result, _) = run_ok(
        FILE,
        &[(
            "3→fn main() {\n4→    let x = 1;",
            "fn main() {\n    let x = 2;",
        )],
    )
    .await;
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt.\nApplied with line numbers removed: your oldText's lines began with line numbers in the arrow style (3→), which are not part of the file; they were removed, and oldText then matched lines 3-4 of the file. newText was used as sent, since not all of its lines carried one."
    );
}

#[tokio::test]
async fn new_text_keeps_its_text_when_not_every_line_has_a_number() {
    // newText's second line starts with what reads as a number, but its first does not.
    let (_, after) = run_ok(FILE, &[("4:    let x = 1;", "    let x = 1;\n5: x")]).await;
    assert_eq!(after, FILE.replace("let x = 1;\n", "let x = 1;\n5: x\n"));
}

#[tokio::test]
async fn a_wrong_first_number_is_refused() {
    let message = run_err(
        FILE,
        &[("     7\tfn main() {\n     8\t    let x = 1;", "x")],
    )
    .await;
    assert_eq!(
        message,
        "oldText's lines begin with line numbers in the cat -n/nl -ba style (7\\t), which are not part of the file. Without them oldText matches lines 3-4 of f.txt, not line 7 as the first number says, so the numbers are not this file's. Send oldText without line numbers, copied from the file as it is now."
    );
}

#[tokio::test]
async fn non_consecutive_or_partial_numbers_are_refused() {
    let message = run_err(FILE, &[("3 | fn main() {\n5 |     let x = 1;", "x")]).await;
    assert_eq!(
        message,
        "oldText's lines begin with line numbers in the number-and-bar style (3 | ), which are not part of the file, and they are not consecutive (line 2 of oldText has 5 after 3), so they were not removed. Send oldText without line numbers, copied from the file as it is now."
    );
    let message = run_err(FILE, &[("3→fn main() {\n    let x = 1;", "x")]).await;
    assert_eq!(
        message,
        "oldText's lines begin with line numbers in the arrow style (3→), which are not part of the file, but line 2 of oldText has none, so they were not removed. Send oldText without line numbers, copied from the file as it is now."
    );
}

#[tokio::test]
async fn stripped_text_found_nowhere_or_twice_is_refused() {
    let message = run_err(FILE, &[("3:fn main() {\n4:    let z = 1;", "x")]).await;
    assert!(
        message.starts_with("oldText's lines begin with line numbers in the grep style (3:), which are not part of the file. Even without them oldText is not in f.txt. Send oldText without line numbers, copied from the file as it is now."),
        "{message}"
    );
    let message = run_err("a\nb\na\nb\n", &[("1:a\n2:b", "x")]).await;
    assert!(
        message.starts_with("oldText's lines begin with line numbers in the grep style (1:), which are not part of the file. Without them oldText matches 2 places in f.txt"),
        "{message}"
    );
}

#[tokio::test]
async fn elided_code_is_refused_asking_for_the_whole_text() {
    for elision in [
        "    // ... existing code ...",
        "    ...",
        "# ...",
        "    /* ... */",
    ] {
        let old = format!("fn main() {{\n{elision}\n}}");
        let message = run_err(FILE, &[(&old, "fn main() {}")]).await;
        assert!(
            message.contains(&format!(
                "Line 2 of oldText (\"{}\") stands for lines left out, but edit matches text exactly: send oldText whole, every line copied from the file, with none left out.",
                elision.trim()
            )),
            "{message}"
        );
    }
}

#[tokio::test]
async fn grep_prefixes_with_a_space_after_the_number_are_removed_with_it() {
    // pi-tools' own grep prints `path:4: text`: without the space taken off, every line of
    // oldText was one space too deep, and newText sent clean was moved one space out.
    for old in [
        "src/main.rs:4:     let x = 1;\nsrc/main.rs-5-     println!(\"{x}\");",
        "4:     let x = 1;\n5-     println!(\"{x}\");",
        "src/main.rs:4:     let x = 1;",
    ] {
        let new = if old.contains('5') {
            "    let x = 2;\n    println!(\"{x}\");"
        } else {
            "    let x = 2;"
        };
        let (result, after) = run_ok(FILE, &[(old, new)]).await;
        assert_eq!(after, AFTER, "{old:?}");
        assert_eq!(result.details["lineNumbers"][0]["style"], "grep");
        assert!(result.details.get("indentation").is_none(), "{old:?}");
    }
    // newText carrying the same prefixes loses them, space included.
    let (_, after) = run_ok(
        FILE,
        &[(
            "src/main.rs:4:     let x = 1;\nsrc/main.rs-5-",
            "src/main.rs:4:     let x = 2;\nsrc/main.rs-5-",
        )],
    )
    .await;
    assert_eq!(after, AFTER);
    // GNU grep's `4:text` keeps the file's indentation as it is.
    let (_, after) = run_ok(FILE, &[("4:    let x = 1;", "    let x = 2;")]).await;
    assert_eq!(after, AFTER);
}

#[tokio::test]
async fn grep_prefixes_read_two_ways_that_write_differently_are_refused() {
    // Lines 4-5 are two spaces deep: " x" and "x" both match them once indentation is
    // adjusted, and shift newText by one space or by two.
    let file = "a\nb\nc\n  x\n  y\n";
    let message = run_err(file, &[("4: x\n5: y", "x\nz")]).await;
    assert_eq!(
        message,
        "oldText's lines begin with line numbers in the grep style (4:), which are not part of the file. Without them oldText matches lines 4-5 of f.txt whether or not the space after each number is taken as part of it, and the two readings would write newText differently. Send oldText and newText without line numbers, copied from the file as it is now."
    );
    // With newText's prefixes removed the same way, both readings write the same.
    let (_, after) = run_ok(file, &[("4: x\n5: y", "4: x\n5: z")]).await;
    assert_eq!(after, "a\nb\nc\n  x\n  z\n");
}

#[tokio::test]
async fn a_reading_of_the_numbers_that_starts_inside_an_indentation_or_loses_to_an_ambiguity_is_refused()
 {
    // Taking the space as the line's, " }" is found once, but inside line 1's indentation,
    // where no copied line starts; taking it as the prefix's, "}" is on lines 1 and 2.
    let file = "    }\n}\nx();\n";
    let message = run_err(file, &[("src/a.rs:1: }", "} // m")]).await;
    assert!(
        message.starts_with("oldText's lines begin with line numbers in the grep style (src/a.rs:1:), which are not part of the file. Without them oldText matches 2 places in f.txt"),
        "{message}"
    );
    let message = run_err(file, &[("1\u{2192} }", "x")]).await;
    assert!(
        message.contains("only from inside the indentation of its first line"),
        "{message}"
    );
    // GNU grep's reading (the exact text, in two places) decides before the spaced one,
    // which only the indentation stage would find, once.
    let file = "x();\n    }\n        Ok(count)\nx();\n\n    }\n        Ok(count)\nx();\n";
    let message = run_err(
        file,
        &[(
            "src/a.rs:5:\nsrc/a.rs-6-    }\nsrc/a.rs-7-        Ok(count)",
            "\n    } // m\n        Ok(count) // m",
        )],
    )
    .await;
    assert!(
        message.starts_with("oldText's lines begin with line numbers in the grep style (src/a.rs:5:), which are not part of the file. Without them oldText matches 2 places in f.txt"),
        "{message}"
    );
}
