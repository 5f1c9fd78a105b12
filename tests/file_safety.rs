//! The file tools at the edges: FIFOs and devices, sizes, owners and hard links, temporary
//! files left by killed writers, and errors that say what went wrong (issue 12, findings 3,
//! 4, 6, 10 and 13).
#![cfg(feature = "builtins")]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_tools::builtins::edit::{EditArgs, EditConfig, Replacement, edit};
use pi_tools::builtins::find::{FindArgs, find};
use pi_tools::builtins::grep::{GrepArgs, grep};
use pi_tools::builtins::ls::{LsArgs, ls};
use pi_tools::builtins::read::{ReadArgs, read};
use pi_tools::builtins::write::{WriteArgs, write};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, WithEnv};
use pi_tools::{IntoToolResult, ToolContext};
use tokio_util::sync::CancellationToken;

fn ctx_with(env: LocalEnv) -> ToolContext {
    let env: Arc<dyn ExecutionEnv> = Arc::new(env);
    ToolContext::new("call-1", CancellationToken::new()).with_env(env)
}

fn ctx_in(dir: &Path) -> ToolContext {
    ctx_with(LocalEnv::new(dir))
}

/// The text of a tool's answer, success or error.
fn text<T: IntoToolResult, E: std::fmt::Display>(result: Result<T, E>) -> String {
    match result {
        Ok(out) => out.into_tool_result().expect("a result").text_content(),
        Err(err) => format!("ERROR: {err}"),
    }
}

/// A hard bound on any call here: a blocked open must fail the test, not hang it.
async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future)
        .await
        .expect("the call finished within 5 s")
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
}

// Finding 3: FIFOs, devices and the server's own input.

#[tokio::test]
async fn a_fifo_is_refused_by_read_and_edit_and_skipped_by_grep_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("p"));
    std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
    let ctx = ctx_in(dir.path());

    let answer = text(bounded(read(&ctx, ReadArgs::new("p"))).await);
    assert!(answer.starts_with("ERROR: "), "{answer}");
    assert!(
        answer.contains("p is a FIFO, not a regular file"),
        "{answer}"
    );

    let answer = text(bounded(edit(&ctx, EditArgs::new("p", [Replacement::new("a", "b")]))).await);
    assert!(
        answer.contains("p is a FIFO, not a regular file"),
        "{answer}"
    );

    let answer = text(bounded(grep(&ctx, GrepArgs::new("needle"))).await);
    assert_eq!(answer, "a.txt:1: needle");
    let answer = text(bounded(grep(&ctx, GrepArgs::new("needle").within("p"))).await);
    assert_eq!(answer, "No matches found");

    // Many in a row leave no thread behind to block later calls.
    for _ in 0..50 {
        let answer = text(bounded(read(&ctx, ReadArgs::new("p"))).await);
        assert!(answer.contains("not a regular file"), "{answer}");
    }
    let answer = text(bounded(read(&ctx, ReadArgs::new("a.txt"))).await);
    assert_eq!(answer, "needle\n");
}

#[tokio::test]
async fn reading_the_processs_own_input_or_a_device_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    for path in ["/proc/self/fd/0", "/dev/null", "/dev/zero"] {
        let answer = text(bounded(read(&ctx, ReadArgs::new(path))).await);
        assert!(
            answer.starts_with("ERROR: ") && answer.contains("not a regular file"),
            "{path}: {answer}"
        );
    }
}

/// Files on kernel file systems are refused, naming the file system and the setting that
/// allows them; allowed, they are read, and one whose read would wait is refused instead of
/// waited on (issue 22, finding 4).
#[tokio::test]
async fn kernel_files_are_refused_unless_allowed_and_never_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx_in(dir.path());
    for (path, fs) in [
        ("/proc/self/status", "procfs"),
        ("/sys/kernel/uevent_seqnum", "sysfs"),
    ] {
        let answer = text(bounded(read(&ctx, ReadArgs::new(path))).await);
        assert_eq!(
            answer,
            format!(
                "ERROR: Could not read {path}: {path} is on {fs}, a kernel file system whose files can block a reader forever, so the file tools do not read it. Use bash (e.g. `timeout 5 cat {path}`), or allow such files with [paths] pseudo_files = true."
            )
        );
    }
    let allowed = ctx_with(LocalEnv::new(dir.path()).with_pseudo_files(true));
    let answer = text(bounded(read(&allowed, ReadArgs::new("/proc/self/status"))).await);
    assert!(answer.starts_with("Name:\t"), "{answer}");
    if !rustix::process::geteuid().is_root() {
        eprintln!("the /proc/kmsg part is skipped: only root may open it");
        return;
    }
    // Whatever the log holds is read first; then the next read would wait.
    let answer = text(bounded(read(&allowed, ReadArgs::new("/proc/kmsg"))).await);
    assert!(
        answer
            == "ERROR: /proc/kmsg has no data to give now and a read would wait for it (a kernel or device file), so the file tools do not read it. Use bash with a timeout instead (e.g. `timeout 5 cat /proc/kmsg`).",
        "{answer}"
    );
}

/// 600 concurrent reads of a file whose read never ends take no thread for good: `read
/// a.txt` answers within a second after them (issue 22, finding 4; `/proc/kmsg` needs root).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_hundred_reads_of_a_blocking_file_leave_read_answering() {
    if !rustix::process::geteuid().is_root() {
        eprintln!(
            "six_hundred_reads_of_a_blocking_file_leave_read_answering: skipped: only root may open /proc/kmsg"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "plain\n").unwrap();
    let ctx = ctx_in(dir.path());
    let blocked: Vec<_> = (0..600)
        .map(|_| {
            let ctx = ctx.clone();
            tokio::spawn(async move { text(read(&ctx, ReadArgs::new("/proc/kmsg")).await) })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = tokio::time::timeout(Duration::from_secs(1), read(&ctx, ReadArgs::new("a.txt")))
        .await
        .map(text);
    assert_eq!(answer, Ok("plain\n".to_owned()));
    for call in blocked {
        let answer = bounded(call).await.expect("the call ran");
        assert!(answer.contains("/proc/kmsg is on procfs"), "{answer}");
    }
}

// Finding 4: sizes refused before reading.

#[tokio::test]
async fn edit_refuses_a_file_over_its_configured_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(100)).unwrap();
    let ctx = ctx_in(dir.path()).with_tool_config(Arc::new(EditConfig {
        max_file_bytes: Some(10),
    }));
    let answer = text(edit(&ctx, EditArgs::new("big.txt", [Replacement::new("x", "y")])).await);
    assert_eq!(
        answer,
        "ERROR: big.txt is larger than edit's limit of 10 bytes, so it was not read. Change it with bash (e.g. sed), or raise [tool.edit] max_file_bytes in the configuration."
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("big.txt")).unwrap(),
        "x".repeat(100)
    );
}

#[tokio::test]
async fn a_huge_image_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.png");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, b"\x89PNG\r\n\x1a\n").unwrap();
    // Sparse: 64 MiB on paper, nothing on disk.
    file.set_len(64 << 20).unwrap();
    let answer = text(bounded(read(&ctx_in(dir.path()), ReadArgs::new("huge.png"))).await);
    assert_eq!(
        answer,
        "ERROR: huge.png is a PNG image of 64.0MB, over the 32.0MB limit for images, so it was not read. Make a smaller copy with bash (e.g. ImageMagick's `convert`) and read that."
    );
}

#[tokio::test]
async fn grep_finds_a_match_far_into_a_line_longer_than_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut long = "a".repeat(9 << 20);
    long.push_str("needle");
    long.push_str("\nsecond line\nneedle again\n");
    std::fs::write(dir.path().join("long.txt"), &long).unwrap();
    let mut args = GrepArgs::new("needle");
    args.context = Some(1);
    let answer = text(grep(&ctx_in(dir.path()), args).await);
    assert_eq!(
        answer,
        format!(
            "long.txt:1: {}... [truncated]\nlong.txt-2- second line\nlong.txt:3: needle again\n\n[Some lines were clipped to 500 characters. Use the read tool to see them in full]",
            "a".repeat(500)
        )
    );
}

// Finding 6: temporary files of killed writers.

/// A process id that is certainly not running: a child that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[tokio::test]
async fn stale_temp_files_are_removed_by_the_next_write_and_hidden_from_the_search_tools() {
    let dir = tempfile::tempdir().unwrap();
    let stale = format!(".a.txt.pi-tools.{}.0.tmp", dead_pid());
    // A live writer's (pid 1 always runs): kept, but still hidden.
    let live = ".b.txt.pi-tools.1.3.tmp";
    std::fs::write(dir.path().join(&stale), "needle half-written").unwrap();
    std::fs::write(dir.path().join(live), "needle in flight").unwrap();
    std::fs::write(dir.path().join("c.txt"), "needle\n").unwrap();
    let ctx = ctx_in(dir.path());

    assert_eq!(
        text(
            ls(
                &ctx,
                LsArgs {
                    path: None,
                    limit: None
                }
            )
            .await
        ),
        "c.txt"
    );
    let found = find(&ctx, FindArgs::new("*")).await;
    assert_eq!(text(found), "c.txt");
    assert_eq!(
        text(grep(&ctx, GrepArgs::new("needle")).await),
        "c.txt:1: needle"
    );

    let wrote = write(&ctx, WriteArgs::new("d.txt", "new")).await;
    assert_eq!(text(wrote), "Successfully wrote 3 bytes to d.txt");
    assert!(!dir.path().join(&stale).exists(), "the stale file is gone");
    assert!(dir.path().join(live).exists(), "a live writer's file stays");
}

// Finding 10: owners, hard links, read-only files.

#[tokio::test]
async fn a_hard_linked_file_is_refused_and_both_names_keep_their_content() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    std::fs::hard_link(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
    let ctx = ctx_in(dir.path());
    let answer = text(
        edit(
            &ctx,
            EditArgs::new("a.txt", [Replacement::new("one", "two")]),
        )
        .await,
    );
    assert!(
        answer.contains("a.txt has 2 hard links; replacing it would separate it from the others, so it was left unchanged."),
        "{answer}"
    );
    let answer = text(write(&ctx, WriteArgs::new("b.txt", "two\n")).await);
    assert!(answer.contains("has 2 hard links"), "{answer}");
    for name in ["a.txt", "b.txt"] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(name)).unwrap(),
            "one\n"
        );
    }
    assert_eq!(
        std::fs::metadata(dir.path().join("a.txt")).unwrap().nlink(),
        2
    );
}

#[tokio::test]
async fn root_editing_another_users_file_keeps_its_owner_group_and_mode() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: keeping another user's ownership needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("theirs.txt");
    std::fs::write(&path, "old\n").unwrap();
    std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let answer = text(
        edit(
            &ctx_in(dir.path()),
            EditArgs::new("theirs.txt", [Replacement::new("old", "new")]),
        )
        .await,
    );
    assert_eq!(answer, "Successfully replaced 1 block in theirs.txt.");
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    assert_eq!(meta.mode() & 0o7777, 0o640);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
}

/// Issue 38, finding 2: new content is a new program; a set-user-ID or set-group-ID file the
/// write or edit tool replaces loses those bits (as the kernel clears them on a write), the
/// rest of its mode and the sticky bit stay.
#[tokio::test]
async fn write_and_edit_do_not_carry_set_id_bits_to_the_new_content() {
    let dir = tempfile::tempdir().unwrap();
    for (name, mode, kept) in [
        ("suid", 0o4755, 0o755),
        ("sgid", 0o2750, 0o750),
        ("sticky", 0o1644, 0o1644),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, "old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let answer = text(
            edit(
                &ctx_in(dir.path()),
                EditArgs::new(name, [Replacement::new("old", "new")]),
            )
            .await,
        );
        assert_eq!(answer, format!("Successfully replaced 1 block in {name}."));
        assert_eq!(
            std::fs::metadata(&path).unwrap().mode() & 0o7777,
            kept,
            "edit {name}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        text(write(&ctx_in(dir.path()), WriteArgs::new(name, "newer\n")).await);
        assert_eq!(
            std::fs::metadata(&path).unwrap().mode() & 0o7777,
            kept,
            "write {name}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "newer\n");
    }
}

// Finding 13: errors that say what happened.

#[tokio::test]
async fn a_search_outside_the_roots_says_so_in_one_sentence() {
    let top = tempfile::tempdir().unwrap();
    std::fs::create_dir(top.path().join("r")).unwrap();
    std::fs::create_dir(top.path().join("out")).unwrap();
    let env = LocalEnv::new(top.path().join("r"))
        .with_allowed_roots(["."])
        .unwrap();
    let answer = text(grep(&ctx_with(env), GrepArgs::new("x").within("../out")).await);
    assert_eq!(
        answer,
        format!(
            "ERROR: Cannot search `../out`: {}/r/../out is outside the allowed directories ({}/r). Use a path inside them. Check the path, or omit it to search the current directory.",
            top.path().display(),
            top.path().display()
        )
    );
}
