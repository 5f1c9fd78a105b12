//! Confinement to the allowed roots holds against links in the tree and against a tree that
//! changes while the tools run (issue 12, findings 1 and 2).
//!
//! The race test swaps a directory and a file for symbolic links to the outside, over and
//! over, while every file tool runs against them. It makes `PI_TOOLS_RACE_CALLS` calls per
//! tool (default 200, to keep the suite fast; the acceptance run uses 2000:
//! `PI_TOOLS_RACE_CALLS=2000 cargo test --release --test tools confinement::`).
#![cfg(feature = "builtins")]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pi_tools::builtins::edit::{EditArgs, Replacement, edit};
use pi_tools::builtins::find::{FindArgs, find};
use pi_tools::builtins::grep::{GrepArgs, grep};
use pi_tools::builtins::ls::{LsArgs, ls};
use pi_tools::builtins::read::{ReadArgs, read};
use pi_tools::builtins::write::{WriteArgs, write};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{IntoToolResult, ToolContext};
use rustix::fs::{CWD, RenameFlags};
use tokio_util::sync::CancellationToken;

const SECRET: &str = "TOPSECRET";

fn confined(dir: &Path) -> ToolContext {
    // No fsync: the race is about paths, and the disk would only slow it down.
    let env = LocalEnv::new(dir)
        .with_allowed_roots(["."])
        .unwrap()
        .with_fsync(false);
    let env: Arc<dyn ExecutionEnv> = Arc::new(env);
    ToolContext::new("call-1", CancellationToken::new()).with_env(env)
}

fn text<T: IntoToolResult, E: std::fmt::Display>(result: Result<T, E>) -> String {
    match result {
        Ok(out) => out.into_tool_result().expect("a result").text_content(),
        Err(err) => format!("ERROR: {err}"),
    }
}

/// `top/r` (the root, with `inside.txt`) and `top/out/s.txt` holding the secret.
fn tree() -> tempfile::TempDir {
    let top = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(top.path().join("r")).unwrap();
    std::fs::create_dir_all(top.path().join("out")).unwrap();
    std::fs::write(top.path().join("out/s.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(top.path().join("r/inside.txt"), "inside\n").unwrap();
    top
}

#[tokio::test]
async fn grep_and_find_do_not_follow_a_link_out_of_the_roots() {
    let top = tree();
    let r = top.path().join("r");
    std::os::unix::fs::symlink("../out/s.txt", r.join("link")).unwrap();
    std::os::unix::fs::symlink("../out", r.join("dirlink")).unwrap();
    std::os::unix::fs::symlink("inside.txt", r.join("ok_link")).unwrap();
    let ctx = confined(&r);
    let read = read(&ctx, ReadArgs::new("link")).await;
    assert!(text(read).contains("outside the allowed directories"));
    let answer = text(grep(&ctx, GrepArgs::new(SECRET)).await);
    assert_eq!(
        answer,
        "No matches found in what could be read\n\n[2 files or directories could not be read and were skipped: dirlink (it leads outside the allowed directories), link (it leads outside the allowed directories). Check their permissions, or search them with bash]"
    );
    // A link that stays inside is still searched; the others are named.
    assert_eq!(
        text(grep(&ctx, GrepArgs::new("inside")).await),
        "inside.txt:1: inside\nok_link:1: inside\n\n[2 files or directories could not be read and were skipped: dirlink (it leads outside the allowed directories), link (it leads outside the allowed directories)]"
    );
    let answer = text(grep(&ctx, GrepArgs::new(SECRET).within("dirlink")).await);
    assert!(
        answer.contains("outside the allowed directories"),
        "{answer}"
    );
    let found = find(&ctx, FindArgs::new("*.txt")).await;
    assert_eq!(text(found), "inside.txt");
}

/// Swaps `a` and `b` atomically (one is a directory or file, the other a link out).
fn exchange(a: &Path, b: &Path) {
    rustix::fs::renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).expect("exchange");
}

#[test]
fn no_tool_gets_out_while_the_tree_is_swapped_under_it() {
    let calls: usize = std::env::var("PI_TOOLS_RACE_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let top = tree();
    let r = top.path().join("r");
    let out = top.path().join("out");
    // `r/d` flips between a directory and a link to `out`; `r/f` between a file and a link
    // to `out/s.txt`.
    std::fs::create_dir(r.join("d")).unwrap();
    std::fs::write(r.join("d/in.txt"), "harmless a\n").unwrap();
    std::os::unix::fs::symlink(&out, r.join("d_alt")).unwrap();
    std::fs::write(r.join("f"), "harmless a\n").unwrap();
    std::os::unix::fs::symlink(out.join("s.txt"), r.join("f_alt")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, r) = (Arc::clone(&stop), Arc::clone(&swaps), r.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                exchange(&r.join("d"), &r.join("d_alt"));
                exchange(&r.join("f"), &r.join("f_alt"));
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ctx = confined(&r);
    let escapes = std::cell::RefCell::new(Vec::new());
    let check = |tool: &str, answer: String| {
        if answer.contains(SECRET) {
            escapes.borrow_mut().push(format!("{tool}: {answer}"));
        }
    };
    runtime.block_on(async {
        for i in 0..calls {
            for path in ["d/s.txt", "d/in.txt", "f"] {
                let args = ReadArgs::new(path);
                check("read", text(read(&ctx, args).await));
            }
            let listed = ls(&ctx, LsArgs::new("d")).await;
            // Only a listing of `out` shows `s.txt`.
            let listed = text(listed);
            if listed.lines().any(|l| l == "s.txt") {
                escapes.borrow_mut().push(format!("ls: {listed}"));
            }
            let found = find(&ctx, FindArgs::new("*.txt").within("d")).await;
            let found = text(found);
            if found.lines().any(|l| l == "s.txt") {
                escapes.borrow_mut().push(format!("find: {found}"));
            }
            check(
                "grep",
                text(grep(&ctx, GrepArgs::new(SECRET).within("d")).await),
            );
            check(
                "grep",
                text(grep(&ctx, GrepArgs::new(SECRET).within("f")).await),
            );
            let wrote = write(
                &ctx,
                WriteArgs::new(format!("d/w{}.txt", i % 2), "written\n"),
            )
            .await;
            check("write", text(wrote));
            for path in ["f", "d/s.txt", "d/in.txt"] {
                let args = EditArgs::new(path, [Replacement::new(SECRET, "EDITED")]);
                check("edit", text(edit(&ctx, args).await));
            }
        }
    });
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    assert!(swaps.load(Ordering::Relaxed) > 0, "the tree was swapped");
    assert_eq!(
        escapes.into_inner(),
        Vec::<String>::new(),
        "nothing from outside came back"
    );
    let mut outside: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(outside, ["s.txt"], "nothing was created outside");
    assert_eq!(
        std::fs::read_to_string(out.join("s.txt")).unwrap(),
        format!("{SECRET}\n"),
        "the outside file was not edited"
    );
}
