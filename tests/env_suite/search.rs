//! grep, find and ls over SSH: the remote walk equal to the local one, and the event log saying
//! how a remote search ran.

use super::*;

/// A tree that exercises what the walk must get right everywhere: ignore files at several
/// levels (negations, directory-only rules, `.ignore` over `.gitignore`, the repository's
/// `info/exclude`, rules from above the searched directory), `.git` never entered, hidden
/// files, symbolic links (listed, searched when they lead to a file, never entered), a
/// binary file, and limits.
fn ignore_tree(dir: &Path) {
    let write = |rel: &str, text: &[u8]| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(".gitignore", b"*.log\n/build/\nskip/\n!keep.log\n");
    write(".git/info/exclude", b"*.excluded\n");
    write(".git/HEAD", b"ref: refs/heads/main\n");
    write("keep.log", b"needle in kept log\n");
    write("drop.log", b"needle in dropped log\n");
    write("build/out.txt", b"needle in build\n");
    write(
        "src/build/gen.rs",
        b"// needle: only the top build/ is ignored\n",
    );
    write(
        "src/a.rs",
        b"fn a() {}\n// needle one\nlet x = 1;\nlet y = 2;\n// needle two\n",
    );
    write("src/skip/x.rs", b"needle skipped dir\n");
    write("src/.ignore", b"*.tmp\n!wanted.tmp\n");
    write("src/z.tmp", b"needle tmp\n");
    write("src/wanted.tmp", b"needle wanted\n");
    write("src/sub/.gitignore", b"!*.log\nlocal.txt\n");
    write("src/sub/sub.log", b"needle re-included log\n");
    write("src/sub/local.txt", b"needle local\n");
    write("src/sub/.hidden", b"needle hidden\n");
    write("data.excluded", b"needle excluded\n");
    write("bin.dat", b"needle\0binary\n");
    write("docs/guide.md", b"Needle in docs\n");
    std::os::unix::fs::symlink("src/a.rs", dir.join("link.rs")).expect("symlink");
    std::os::unix::fs::symlink("src", dir.join("srclink")).expect("symlink");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_walk_is_the_same_through_sftp_as_locally() {
    let envs = Envs::with_and_without_helper();
    let out = envs
        .check(
            ignore_tree,
            &[
                ("grep", json!({"pattern": "needle"})),
                (
                    "grep",
                    json!({"pattern": "NEEDLE", "ignoreCase": true, "glob": "**/*.md"}),
                ),
                (
                    "grep",
                    json!({"pattern": "needle", "path": "src", "context": 1}),
                ),
                ("grep", json!({"pattern": "needle", "limit": 2})),
                ("grep", json!({"pattern": "needle", "path": "src/a.rs"})),
                (
                    "grep",
                    json!({"pattern": "x", "literal": true, "glob": "src/*.rs"}),
                ),
                ("find", json!({"pattern": "*"})),
                ("find", json!({"pattern": "*.log"})),
                ("find", json!({"pattern": "src/**/"})),
                ("find", json!({"pattern": "*.rs", "path": "src/sub"})),
                ("find", json!({"pattern": "*", "limit": 3})),
                ("find", json!({"pattern": "*", "path": "src/a.rs"})),
            ],
        )
        .await;
    let transcript = out.split("\n---\n").next().expect("transcript");
    assert!(
        transcript.contains("keep.log:1: needle in kept log"),
        "{out}"
    );
    assert!(transcript.contains("link.rs:2: // needle one"), "{out}");
    assert!(
        transcript.contains("src/sub/sub.log:1: needle re-included log"),
        "{out}"
    );
    assert!(transcript.contains("src/wanted.tmp"), "{out}");
    for hidden in [
        "dropped log",
        "in build\n",
        "skipped dir",
        "needle tmp",
        "needle local",
        "excluded",
        "binary",
        "HEAD",
    ] {
        assert!(!transcript.contains(hidden), "{hidden}: {out}");
    }
    assert!(
        transcript.contains("[ok] find: .gitignore\nbin.dat\ndocs/\n"),
        "{out}"
    );
    assert!(transcript.contains("srclink\n"), "{out}");
    assert!(!transcript.contains("srclink/"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_log_says_how_a_remote_search_ran() {
    let Some(sshd) = Sshd::start() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("f.txt"), "hit\n").expect("write");
    let tools = tools();
    for (target, via) in [
        (
            sshd.target()
                .with_upload_helper(Some(env!("CARGO_BIN_EXE_cli-under-test").into())),
            "helper",
        ),
        (sshd.target(), "walk"),
    ] {
        let env: Arc<dyn ExecutionEnv> =
            Arc::new(SshEnv::connect(target, dir.path()).await.expect("connect"));
        for (name, args) in [
            ("grep", json!({"pattern": "hit"})),
            ("find", json!({"pattern": "*.txt"})),
        ] {
            let message = &run_one(&tools, &env, "c", name, args).await;
            assert!(!message.is_error, "{message:?}");
            assert_eq!(message.details["via"], json!(via), "{name}: {message:?}");
            let text: Vec<&str> = message.content.iter().filter_map(|b| b.as_text()).collect();
            assert!(
                !text.join("").contains(via),
                "{name}: the model is not told: {text:?}"
            );
        }
    }
    // Locally nothing is recorded.
    let local: Arc<dyn ExecutionEnv> = Arc::new(LocalEnv::new(dir.path()));
    let message = run_one(&tools, &local, "c", "grep", json!({"pattern": "hit"})).await;
    assert_eq!(message.details.get("via"), None);
}
