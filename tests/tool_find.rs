//! The find tool against real directories.
#![cfg(feature = "builtins")]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use pi_tools::ToolContext;
use pi_tools::builtins::find::{FindArgs, find};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use tokio_util::sync::CancellationToken;

fn ctx(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    ToolContext::new("call", CancellationToken::new()).with_env(env)
}

fn write(dir: &Path, rel: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, "x\n").expect("write");
}

async fn run(dir: &Path, pattern: &str, limit: Option<u64>) -> String {
    let args = FindArgs {
        pattern: pattern.to_string(),
        path: None,
        limit,
    };
    let out = find(&ctx(dir), args).await.expect("find succeeds");
    out.content[0].as_text().expect("text").to_string()
}

fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for rel in [
        "main.rs",
        "src/lib.rs",
        "src/x",
        "src/deep/x",
        "src/deep/y.rs",
        "web/app.spec.ts",
        "web/app.ts",
        "crate/src/x",
        ".hidden/secret.rs",
        ".git/hooks/pre.rs",
        "target/out.rs",
        "-rf",
    ] {
        write(tmp.path(), rel);
    }
    fs::write(tmp.path().join(".gitignore"), "target/\n").expect("gitignore");
    tmp
}

#[tokio::test]
async fn name_globs_match_at_any_depth_hidden_included_ignored_skipped() {
    let tmp = tree();
    assert_eq!(
        run(tmp.path(), "*.rs", None).await,
        ".hidden/secret.rs\nmain.rs\nsrc/deep/y.rs\nsrc/lib.rs"
    );
}

#[tokio::test]
async fn path_globs_match_the_whole_relative_path() {
    let tmp = tree();
    assert_eq!(
        run(tmp.path(), "**/*.spec.ts", None).await,
        "web/app.spec.ts"
    );
    assert_eq!(
        run(tmp.path(), "src/**/x", None).await,
        "crate/src/x\nsrc/deep/x\nsrc/x"
    );
    assert_eq!(
        run(tmp.path(), "/src/*", None).await,
        "src/deep/\nsrc/lib.rs\nsrc/x"
    );
}

#[tokio::test]
async fn directories_get_a_trailing_slash() {
    let tmp = tree();
    assert_eq!(run(tmp.path(), "src", None).await, "crate/src/\nsrc/");
}

#[tokio::test]
async fn the_limit_notice_appears_only_when_more_exist() {
    let tmp = tree();
    assert_eq!(
        run(tmp.path(), "*.rs", Some(2)).await,
        ".hidden/secret.rs\nmain.rs\n\n[2 results limit reached. Use limit=4 for more, or refine the pattern]"
    );
    assert_eq!(
        run(tmp.path(), "*.rs", Some(4)).await,
        ".hidden/secret.rs\nmain.rs\nsrc/deep/y.rs\nsrc/lib.rs"
    );
}

#[tokio::test]
async fn no_results_and_flag_like_patterns() {
    let tmp = tree();
    assert_eq!(
        run(tmp.path(), "*.py", None).await,
        "No files found matching pattern"
    );
    assert_eq!(run(tmp.path(), "-rf", None).await, "-rf");
    assert_eq!(
        run(tmp.path(), "--exec=x", None).await,
        "No files found matching pattern"
    );
}

#[tokio::test]
async fn errors_for_a_file_path_and_a_bad_glob() {
    let tmp = tree();
    let args = FindArgs::new("*").within("main.rs");
    let err = find(&ctx(tmp.path()), args).await.expect_err("file path");
    assert_eq!(
        err.message(),
        "`main.rs` is a file, not a directory. Give the directory to search in as path."
    );
    let args = FindArgs::new("a[");
    let err = find(&ctx(tmp.path()), args).await.expect_err("bad glob");
    assert!(
        err.message()
            .starts_with("The glob pattern `a[` is invalid:"),
        "{}",
        err.message()
    );
}
