//! Files that mix CRLF and LF lines: each written line gets the ending of the line it
//! replaces, or of its neighbours where lines are added; the file's first ending does not
//! decide, and lines outside the edit keep their bytes.

use super::*;

#[tokio::test]
async fn lines_added_among_lf_lines_end_with_lf_in_a_file_that_starts_with_crlf() {
    let file = "# Title\r\n\r\nfn a() {\n    one();\n}\nfn b() {}\r\n";
    let (result, after) = run_ok(file, &[("    one();\n}", "    one();\n    two();\n}")]).await;
    assert_eq!(
        after,
        "# Title\r\n\r\nfn a() {\n    one();\n    two();\n}\nfn b() {}\r\n"
    );
    assert_eq!(
        result.text_content(),
        "Successfully replaced 1 block in f.txt."
    );
}

#[tokio::test]
async fn lines_added_among_crlf_lines_end_with_crlf_in_a_file_that_starts_with_lf() {
    let file = "top\nx = [\r\n  1,\r\n]\r\nend\n";
    let (_, after) = run_ok(file, &[("x = [\n  1,\n]", "x = [\n  1,\n  2,\n]")]).await;
    assert_eq!(after, "top\nx = [\r\n  1,\r\n  2,\r\n]\r\nend\n");
}

#[tokio::test]
async fn kept_and_replaced_lines_keep_their_own_endings() {
    let file = "a\r\nb\nc\r\nd\n";
    // Replaced one for one.
    let (_, after) = run_ok(file, &[("b\nc", "B\nC")]).await;
    assert_eq!(after, "a\r\nB\nC\r\nd\n");
    // A line deleted after a kept one takes its own ending with it.
    let (_, after) = run_ok(file, &[("a\nb", "a")]).await;
    assert_eq!(after, "a\r\nc\r\nd\n");
}

#[tokio::test]
async fn new_lines_between_lines_of_both_endings_are_refused() {
    let file = "a\r\nb\nc\r\nd\n";
    assert_eq!(
        run_err(file, &[("b\nc", "b\nx\nc")]).await,
        "oldText replaces lines 2-3 of f.txt, whose line endings mix CRLF and LF, and the lines of newText do not line up with them one for one, so which ending each new line should get is not defined. Split the edit into parts that each replace lines with one kind of ending, or keep the lines around the change as they are in both texts."
    );
}
