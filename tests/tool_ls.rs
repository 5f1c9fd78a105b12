//! The ls tool against real directories.
#![cfg(feature = "builtins")]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use pi_tools::ToolContext;
use pi_tools::builtins::ls::{LsArgs, ls};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use tokio_util::sync::CancellationToken;

fn ctx(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    ToolContext::new("call", CancellationToken::new()).with_env(env)
}

async fn run(dir: &Path, path: Option<&str>, limit: Option<u64>) -> Result<String, String> {
    let args = LsArgs {
        path: path.map(str::to_string),
        limit,
    };
    match ls(&ctx(dir), args).await {
        Ok(out) => Ok(out.content[0].as_text().expect("text").to_string()),
        Err(e) => Err(e.message().to_string()),
    }
}

#[tokio::test]
async fn entries_are_sorted_ignoring_case_with_dotfiles_and_slashes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    for f in ["b.txt", "A.txt", ".env", "c.md"] {
        fs::write(d.join(f), "x").expect("write");
    }
    fs::create_dir(d.join("Docs")).expect("mkdir");
    fs::create_dir(d.join("app")).expect("mkdir");
    std::os::unix::fs::symlink(d.join("app"), d.join("link-to-app")).expect("symlink");
    std::os::unix::fs::symlink(d.join("missing"), d.join("broken")).expect("symlink");
    assert_eq!(
        run(d, None, None).await.expect("ok"),
        ".env\nA.txt\napp/\nb.txt\nc.md\nDocs/\nlink-to-app/\n\n\
         [1 entry could not be read and was skipped: broken (a link to nothing)]"
    );
}

/// With allowed roots, a link that leads outside is left out and named, as grep names what
/// it skips (issue 22, finding 5).
#[tokio::test]
async fn a_link_leading_outside_the_allowed_roots_is_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("root");
    fs::create_dir(&root).expect("mkdir");
    fs::write(tmp.path().join("secret.txt"), "x").expect("write");
    fs::write(root.join("a.txt"), "x").expect("write");
    std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("out")).expect("symlink");
    let env: Arc<dyn ExecutionEnv> = Arc::new(
        LocalEnv::new(&root)
            .with_allowed_roots(["."])
            .expect("root"),
    );
    let ctx = ToolContext::new("call", CancellationToken::new()).with_env(env);
    let args = LsArgs {
        path: None,
        limit: None,
    };
    let out = ls(&ctx, args).await.expect("listed");
    assert_eq!(
        out.content[0].as_text().expect("text"),
        "a.txt\n\n[1 entry could not be read and was skipped: out (it leads outside the allowed directories)]"
    );
}

#[tokio::test]
async fn empty_directory_and_limit_notice() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    fs::create_dir(d.join("empty")).expect("mkdir");
    assert_eq!(
        run(d, Some("empty"), None).await.expect("ok"),
        "(empty directory)"
    );
    for i in 0..5 {
        fs::write(d.join(format!("f{i}")), "x").expect("write");
    }
    assert_eq!(
        run(d, None, Some(3)).await.expect("ok"),
        "empty/\nf0\nf1\n\n[3 entries limit reached. Use limit=6 for more]"
    );
    assert_eq!(
        run(d, None, Some(6)).await.expect("ok"),
        "empty/\nf0\nf1\nf2\nf3\nf4"
    );
}

#[tokio::test]
async fn missing_paths_and_files_are_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    fs::write(d.join("file.txt"), "x").expect("write");
    assert_eq!(
        run(d, Some("nope"), None).await.expect_err("missing"),
        "The path `nope` does not exist. Check the spelling, or list its parent directory to see what is there."
    );
    assert_eq!(
        run(d, Some("file.txt"), None).await.expect_err("not a dir"),
        "`file.txt` is not a directory. Use the read tool to see a file's contents."
    );
}
