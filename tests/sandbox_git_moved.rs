//! Issue 46, findings 1 and 2: a repository moved aside and replaced by a planted one, and
//! a git directory under another name than `.git` (a bare repository turned into a work
//! tree's). The user's real git, outside the sandbox, then runs nothing planted, and the
//! user's own settings are never removed, in either git mode.

#![cfg(all(target_os = "linux", feature = "builtins"))]

use support::sandbox as sandbox_support;

use std::path::Path;

use pi_tools::env::GitAccess;
use sandbox_support::{Fixture, git, read, run};

use crate::sandbox_git::{git_outside_runs_nothing, marker, policy};

/// `git status` outside the sandbox in `dir`, failing or not: the marker must not appear.
fn status_runs_nothing(dir: &Path, marker: &Path, what: &str) {
    let _ = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(!marker.exists(), "{what}: the planted command ran outside");
}

#[tokio::test]
async fn a_repository_moved_aside_is_brought_back_and_the_newcomer_runs_nothing() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::plain();
        let proj = fx.ws.join("proj1");
        std::fs::create_dir_all(&proj).expect("dir");
        git(&proj, &["init", "-q", "-b", "main"]);
        git(
            &proj,
            &[
                "remote",
                "add",
                "origin",
                "https://example.invalid/proj1.git",
            ],
        );
        std::fs::write(proj.join("a.txt"), "a\n").expect("file");
        git(&proj, &["add", "a.txt"]);
        git(&proj, &["commit", "-q", "-m", "first"]);
        let config = read(&proj.join(".git/config"));
        let env = fx.env(policy(access));
        let m = marker(&fx);
        let attack = format!(
            "mv proj1 old1 && mkdir \"$TMPDIR/p\" && git -C \"$TMPDIR/p\" init -q && \
             git -C \"$TMPDIR/p\" config core.fsmonitor 'touch {}; false' && mv \"$TMPDIR/p\" proj1 && echo moved",
            m.display()
        );
        let out = run(&env, &attack).await.expect("the command runs");
        let old = fx.ws.join("old1");
        let aside = fx.ws.join("proj1.pi-tools-disabled");
        assert!(out.starts_with("moved\n"), "{access}: {out}");
        assert!(
            out.contains(&format!(
                "moved {} aside to {} (the command put it where a repository of the user's was), moved the user's repository at {} back to {}, where the command had moved it from",
                proj.display(),
                aside.display(),
                old.display(),
                proj.display()
            )),
            "{access}: {out}"
        );
        assert!(!old.exists(), "{access}");
        assert_eq!(
            read(&proj.join(".git/config")),
            config,
            "{access}: the user's settings"
        );
        assert!(
            read(&proj.join(".git/config")).contains("https://example.invalid/proj1.git"),
            "{access}"
        );
        git_outside_runs_nothing(&proj, &m, access.as_str());
        // The newcomer lost the settings planted in it.
        assert!(!aside.join(".git/config").exists(), "{access}: {out}");
        status_runs_nothing(&aside, &m, access.as_str());
    }
}

/// A bare repository made during a call and turned into a work tree's git directory, and
/// one there before the session: neither makes the user's git run a planted program.
#[tokio::test]
async fn a_git_directory_under_another_name_runs_nothing_later() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::plain();
        let m = marker(&fx);
        let existing = fx.ws.join("remote.git");
        git(&fx.ws, &["init", "-q", "--bare", "remote.git"]);
        let existing_config = read(&existing.join("config"));
        let env = fx.env(policy(access));
        let turn = |dir: &str| {
            format!(
                "{{ git -C {dir} config core.bare false && git -C {dir} config core.worktree .. && \
                 git -C {dir} config core.fsmonitor 'touch {}; false'; }} 2>&1; ",
                m.display()
            )
        };
        let attack = format!(
            "git init -q --bare tools; {}{}mkdir -p sub/inplace && git -C sub/inplace init -q --bare . && {}true",
            turn("tools"),
            turn("remote.git"),
            turn("sub/inplace")
        );
        let out = run(&env, &attack).await.expect("the command runs");
        assert!(
            out.contains("error: could not write config file config: Device or resource busy"),
            "{access}: {out}"
        );
        assert_eq!(read(&existing.join("config")), existing_config, "{access}");
        for dir in ["tools", "remote.git", "sub/inplace"] {
            let dir = fx.ws.join(dir);
            assert!(
                !read(&dir.join("config")).contains("fsmonitor"),
                "{access}: {} keeps the planted setting: {out}",
                dir.display()
            );
            status_runs_nothing(&dir, &m, access.as_str());
        }
    }
}
