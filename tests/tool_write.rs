//! The write tool: parents, byte counts, atomic replacement, permissions, links.
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_tools::builtins::write::{WriteArgs, write};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{IntoToolResult, ToolContext, ToolResult};
use tokio_util::sync::CancellationToken;

fn ctx_in(dir: &Path) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir));
    ToolContext::new("call-1", CancellationToken::new()).with_env(env)
}

async fn write_ok(ctx: &ToolContext, path: &str, content: &str) -> ToolResult {
    let args = WriteArgs::new(path, content);
    write(ctx, args)
        .await
        .expect("write succeeds")
        .into_tool_result()
        .unwrap()
}

#[tokio::test]
async fn creates_parent_directories_and_counts_utf8_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let result = write_ok(&ctx_in(dir.path()), "a/b/c.txt", "héllo ✓\n").await;
    // "héllo ✓\n" is 8 characters (UTF-16 length 8) but 11 UTF-8 bytes.
    assert_eq!(
        result.text_content(),
        "Successfully wrote 11 bytes to a/b/c.txt"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "héllo ✓\n"
    );
    assert_eq!(result.details["bytes"], 11);
    assert_eq!(result.details["overwritten"], false);
    let again = write_ok(&ctx_in(dir.path()), "a/b/c.txt", "").await;
    assert_eq!(
        again.text_content(),
        "Successfully wrote 0 bytes to a/b/c.txt"
    );
    assert_eq!(again.details["overwritten"], true);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["c.txt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_never_see_a_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let a = "a".repeat(2 << 20);
    let b = "b".repeat(1 << 20);
    std::fs::write(&path, &a).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (path, stop) = (path.clone(), stop.clone());
        let (a, b) = (a.clone(), b.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(Ordering::SeqCst) {
                let seen = std::fs::read_to_string(&path).unwrap();
                assert!(
                    seen == a || seen == b,
                    "a reader saw {} bytes of a mixed or partial file",
                    seen.len()
                );
                reads += 1;
            }
            reads
        })
    };
    let ctx = ctx_in(dir.path());
    for i in 0..40 {
        write_ok(&ctx, "big.txt", if i % 2 == 0 { &b } else { &a }).await;
    }
    stop.store(true, Ordering::SeqCst);
    let reads = reader.join().expect("the reader saw only whole files");
    assert!(reads > 0);
}

#[cfg(unix)]
#[tokio::test]
async fn permissions_are_kept_and_links_still_point_at_their_target() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
    write_ok(&ctx_in(dir.path()), "run.sh", "#!/bin/sh\necho hi\n").await;
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o751);

    std::os::unix::fs::symlink(&script, dir.path().join("link.sh")).unwrap();
    write_ok(&ctx_in(dir.path()), "link.sh", "via link\n").await;
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.sh"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "via link\n");
    assert_eq!(
        std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777,
        0o751
    );
}

#[tokio::test]
async fn writing_over_a_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let err = write(&ctx_in(dir.path()), WriteArgs::new("d", "x"))
        .await
        .unwrap_err();
    assert!(
        err.message().starts_with("Could not write d:"),
        "{}",
        err.message()
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_link_whose_target_does_not_exist_yet_stays_a_link_and_the_target_is_created() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("later.txt", dir.path().join("link.txt")).unwrap();
    write_ok(&ctx_in(dir.path()), "link.txt", "made through the link\n").await;
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("later.txt")).unwrap(),
        "made through the link\n"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_dangling_link_out_of_the_allowed_directories_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path().join("new.txt"), dir.path().join("link.txt"))
        .unwrap();
    let env: Arc<dyn ExecutionEnv> = Arc::new(
        LocalEnv::new(dir.path())
            .with_allowed_roots([dir.path()])
            .unwrap(),
    );
    let ctx = ToolContext::new("call", CancellationToken::new()).with_env(env);
    let err = write(&ctx, WriteArgs::new("link.txt", "escape\n"))
        .await
        .expect_err("outside the allowed directories");
    assert!(
        err.message().contains("outside the allowed directories"),
        "{}",
        err.message()
    );
    assert!(!outside.path().join("new.txt").exists());
}
