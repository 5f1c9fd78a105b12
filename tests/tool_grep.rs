//! The grep tool against real directories: output format, limits, ignore rules, context
//! merging, clipping, errors and determinism.
#![cfg(feature = "builtins")]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use pi_tools::ToolContext;
use pi_tools::builtins::grep::{GrepArgs, GrepDetails, grep};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use tokio_util::sync::CancellationToken;

fn ctx(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    ToolContext::new("call", CancellationToken::new()).with_env(env)
}

fn args(pattern: &str) -> GrepArgs {
    GrepArgs::new(pattern)
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

async fn run(dir: &Path, a: GrepArgs) -> (String, GrepDetails) {
    let out = grep(&ctx(dir), a).await.expect("grep succeeds");
    let text = out.content[0].as_text().expect("text").to_string();
    (text, out.details.expect("details"))
}

#[tokio::test]
async fn matches_are_listed_with_relative_paths_in_sorted_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "b.txt", "one needle\ntwo\n");
    write(tmp.path(), "a/z.txt", "needle here\n");
    write(tmp.path(), "a/b.txt", "no\nneedle\n");
    let (text, details) = run(tmp.path(), args("needle")).await;
    assert_eq!(
        text,
        "a/b.txt:2: needle\na/z.txt:1: needle here\nb.txt:1: one needle"
    );
    assert_eq!((details.matches, details.files), (3, 3));
}

#[tokio::test]
async fn a_single_file_is_shown_by_its_name() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "src/lib.rs", "fn main() {}\nfn other() {}\n");
    let mut a = args("fn ");
    a.path = Some("src/lib.rs".into());
    let (text, _) = run(tmp.path(), a).await;
    assert_eq!(text, "lib.rs:1: fn main() {}\nlib.rs:2: fn other() {}");
}

#[tokio::test]
async fn the_limit_notice_appears_only_when_more_matches_exist() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "a.txt", "x\nx\nx\n");
    let mut a = args("x");
    a.limit = Some(3);
    let (text, details) = run(tmp.path(), a.clone()).await;
    assert_eq!(text, "a.txt:1: x\na.txt:2: x\na.txt:3: x");
    assert_eq!(details.match_limit_reached, None);

    write(tmp.path(), "b.txt", "x\n");
    let (text, details) = run(tmp.path(), a).await;
    assert_eq!(
        text,
        "a.txt:1: x\na.txt:2: x\na.txt:3: x\n\n[3 matches limit reached. Use limit=6 for more, or refine the pattern]"
    );
    assert_eq!(details.match_limit_reached, Some(3));
}

#[tokio::test]
async fn limit_with_context_keeps_the_last_matchs_context_only() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "f.txt", "a\nhit1\nb\nc\nd\ne\nhit2\nf\n");
    let mut a = args("hit");
    a.limit = Some(1);
    a.context = Some(1);
    let (text, _) = run(tmp.path(), a).await;
    assert_eq!(
        text,
        "f.txt-1- a\nf.txt:2: hit1\nf.txt-3- b\n\n[1 matches limit reached. Use limit=2 for more, or refine the pattern]"
    );
}

#[tokio::test]
async fn overlapping_context_blocks_are_merged() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "f.txt", "1\nm\n3\nm\n5\n6\n7\n8\nm\n");
    let mut a = args("^m$");
    a.context = Some(1);
    let (text, _) = run(tmp.path(), a).await;
    assert_eq!(
        text,
        "f.txt-1- 1\nf.txt:2: m\nf.txt-3- 3\nf.txt:4: m\nf.txt-5- 5\nf.txt-8- 8\nf.txt:9: m"
    );
}

#[tokio::test]
async fn flag_like_patterns_are_searched_as_text() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "f.txt", "run with --pre=x here\nuse -e too\n");
    let (text, _) = run(tmp.path(), args("--pre=x")).await;
    assert_eq!(text, "f.txt:1: run with --pre=x here");
    let (text, _) = run(tmp.path(), args("-e")).await;
    assert_eq!(text, "f.txt:2: use -e too");
}

#[tokio::test]
async fn nested_ignore_files_apply_outside_a_git_repository() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), ".gitignore", "ignored.txt\nbuild/\n");
    write(tmp.path(), "ignored.txt", "needle\n");
    write(tmp.path(), "build/out.txt", "needle\n");
    write(tmp.path(), "sub/.ignore", "*.log\n");
    write(tmp.path(), "sub/x.log", "needle\n");
    write(
        tmp.path(),
        "sub/deeper/.gitignore",
        "!keep.log\nsecret.txt\n",
    );
    write(tmp.path(), "sub/deeper/keep.log", "needle\n");
    write(tmp.path(), "sub/deeper/secret.txt", "needle\n");
    write(tmp.path(), "sub/kept.txt", "needle\n");
    write(tmp.path(), ".hidden/h.txt", "needle\n");
    write(tmp.path(), ".git/config", "needle\n");
    write(tmp.path(), ".git/objects/x", "needle\n");
    let (text, _) = run(tmp.path(), args("needle")).await;
    assert_eq!(text, ".hidden/h.txt:1: needle\nsub/kept.txt:1: needle");
}

#[tokio::test]
async fn a_glob_narrows_the_files_searched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "a.rs", "needle\n");
    write(tmp.path(), "a.ts", "needle\n");
    write(tmp.path(), "web/a.spec.ts", "needle\n");
    let mut a = args("needle");
    a.glob = Some("*.rs".into());
    assert_eq!(run(tmp.path(), a.clone()).await.0, "a.rs:1: needle");
    a.glob = Some("**/*.spec.ts".into());
    assert_eq!(run(tmp.path(), a).await.0, "web/a.spec.ts:1: needle");
}

#[tokio::test]
async fn ignore_case_and_literal() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "f.txt", "Foo(1)\nfoo(2)\n");
    let mut a = args("FOO(");
    a.literal = Some(true);
    a.ignore_case = Some(true);
    assert_eq!(
        run(tmp.path(), a).await.0,
        "f.txt:1: Foo(1)\nf.txt:2: foo(2)"
    );
}

#[tokio::test]
async fn long_lines_are_clipped_with_a_notice() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "f.txt", &format!("needle{}\n", "y".repeat(700)));
    let (text, details) = run(tmp.path(), args("needle")).await;
    let expected_line = format!("f.txt:1: needle{}... [truncated]", "y".repeat(494));
    assert_eq!(
        text,
        format!(
            "{expected_line}\n\n[Some lines were clipped to 500 characters. Use the read tool to see them in full]"
        )
    );
    assert!(details.lines_truncated);
}

#[tokio::test]
async fn no_matches_is_a_normal_result() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write(tmp.path(), "f.txt", "nothing\n");
    let (text, details) = run(tmp.path(), args("needle")).await;
    assert_eq!(text, "No matches found");
    assert_eq!(details.matches, 0);
}

#[tokio::test]
async fn a_bad_regex_is_an_error_with_the_parsers_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let err = grep(&ctx(tmp.path()), args("foo("))
        .await
        .expect_err("bad regex");
    assert!(
        err.message()
            .starts_with("The pattern is not a valid regular expression: "),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("unclosed group"),
        "{}",
        err.message()
    );
    assert!(err.message().contains("literal: true"), "{}", err.message());
}

#[tokio::test]
async fn a_missing_path_is_an_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut a = args("x");
    a.path = Some("nope".into());
    let err = grep(&ctx(tmp.path()), a).await.expect_err("missing path");
    assert!(
        err.message().starts_with("Cannot search `nope`:"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn the_output_is_the_same_every_time() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for d in 0..20 {
        for f in 0..20 {
            write(tmp.path(), &format!("d{d}/f{f}.txt"), "x\nneedle\ny\n");
        }
    }
    let mut a = args("needle");
    a.limit = Some(150);
    a.context = Some(1);
    let (first, _) = run(tmp.path(), a.clone()).await;
    for _ in 0..5 {
        assert_eq!(run(tmp.path(), a.clone()).await.0, first);
    }
    assert!(
        first.starts_with("d0/f0.txt-1- x\nd0/f0.txt:2: needle\nd0/f0.txt-3- y\nd0/f1.txt-1- x")
    );
    assert!(
        first.ends_with(
            "[150 matches limit reached. Use limit=300 for more, or refine the pattern]"
        )
    );
}

#[tokio::test]
async fn the_byte_limit_cuts_with_a_notice() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let line = format!("needle {}\n", "z".repeat(400));
    write(tmp.path(), "big.txt", &line.repeat(300));
    let mut a = args("needle");
    a.limit = Some(1000);
    let (text, details) = run(tmp.path(), a).await;
    assert!(text.ends_with("\n\n[Output limit of 50.0KB reached. Narrow the search with a more specific pattern, path or glob, or a lower context]"), "{}", &text[text.len() - 200..]);
    let body = text.split("\n\n[").next().expect("body");
    assert!(body.len() <= 50 * 1024);
    assert_eq!(details.matches, body.lines().count());
}

#[tokio::test]
async fn big_files_byte_order_marks_and_binary_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Bigger than what is read whole: streamed, and still searched to the end.
    let mut big = String::from("needle first\n");
    for i in 0..200_000 {
        big.push_str(&format!("filler line {i}\n"));
    }
    big.push_str("needle last\n");
    assert!(big.len() > 2 << 20);
    write(tmp.path(), "a_big.txt", &big);
    // UTF-16 with a byte-order mark is transcoded; a UTF-8 mark is dropped.
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in "x\nneedle in utf-16\n".encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    fs::write(tmp.path().join("b_utf16.txt"), utf16).expect("write");
    fs::write(
        tmp.path().join("c_bom.txt"),
        b"\xEF\xBB\xBFneedle after a mark\n",
    )
    .expect("write");
    // A NUL byte makes a file binary: not searched.
    fs::write(tmp.path().join("d.bin"), b"needle\0binary\n").expect("write");
    let (text, details) = run(tmp.path(), args("needle")).await;
    assert_eq!(
        text,
        "a_big.txt:1: needle first\n\
         a_big.txt:200002: needle last\n\
         b_utf16.txt:2: needle in utf-16\n\
         c_bom.txt:1: needle after a mark"
    );
    assert_eq!((details.matches, details.files), (4, 3));
}

/// The largest numbers a model can send: the schema refuses a context over 100 lines, a
/// caller that skips validation gets 100, and a limit of 2^64 - 1 means all matches.
#[tokio::test]
async fn huge_context_and_limit_are_bounded() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let text: String = (1..=300)
        .map(|i| {
            if i == 150 {
                "needle\n".to_owned()
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    write(tmp.path(), "f.txt", &text);
    let mut a = args("needle");
    a.context = Some(u64::MAX);
    a.limit = Some(u64::MAX);
    let (shown, details) = run(tmp.path(), a).await;
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 201, "{shown}");
    assert_eq!(lines[0], "f.txt-50- line 50");
    assert_eq!(lines[100], "f.txt:150: needle");
    assert_eq!(lines[200], "f.txt-250- line 250");
    assert_eq!(details.matches, 1);

    let registry = pi_tools::tool::Registry::from_inventory().expect("registry");
    let schema = registry
        .get("grep")
        .expect("grep")
        .spec()
        .parameters
        .clone();
    let validator = pi_tools::ArgumentValidator::new(&schema).expect("schema compiles");
    for context in [
        serde_json::json!(101),
        serde_json::json!(u64::MAX),
        serde_json::json!(1e300),
    ] {
        let err = validator
            .validate(
                "grep",
                serde_json::json!({"pattern": "x", "context": context}),
            )
            .expect_err("too much context");
        assert!(err.contains("\n  - context: "), "{err}");
    }
    assert!(
        validator
            .validate("grep", serde_json::json!({"pattern": "x", "context": 100}))
            .is_ok()
    );
}
