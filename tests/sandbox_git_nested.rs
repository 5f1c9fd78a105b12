//! Repositories below the top of a writable root (issue 38, finding 4): a workspace that
//! holds several repositories (`~/projects` with `proj1/.git`, `proj2/.git`) or a
//! repository with an unrelated one nested deep inside it (even in a directory its
//! `.gitignore` hides), and a repository a command makes in a subdirectory during a call.
//! Each attack plants `core.fsmonitor` and a hook that would leave a marker outside; the
//! user's real `git status` and `git commit` in each repository, outside the sandbox, then
//! run nothing planted, in either git mode.

#![cfg(all(target_os = "linux", feature = "builtins"))]

use support::sandbox as sandbox_support;

use std::path::{Path, PathBuf};

use pi_tools::env::GitAccess;
use sandbox_support::{Fixture, git, read, run};

use crate::sandbox_git::{git_outside_runs_nothing, marker, policy, removed_note};

/// The repositories below the top of a plain workspace: two side by side, and one nested in
/// a subdirectory of the second that its `.gitignore` hides.
const NESTED: [&str; 3] = ["proj1", "proj2", "proj2/vendor/deep/er/lib"];

/// Makes `ws/<rel>` a repository with one commit.
fn repository_at(ws: &Path, rel: &str) -> PathBuf {
    let dir = ws.join(rel);
    std::fs::create_dir_all(&dir).expect("dir");
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("a.txt"), "a\n").expect("file");
    git(&dir, &["add", "a.txt"]);
    git(&dir, &["commit", "-q", "-m", "first"]);
    dir
}

/// Shell commands that set `core.fsmonitor` in the repository at `rel` and write its
/// `pre-commit` hook, both running `touch <marker>`; each one's error goes to the output.
fn plant(rel: &str, marker: &Path) -> String {
    let m = marker.display();
    format!(
        "{{ printf '[core]\\n\\tfsmonitor = \"touch {m}; false\"\\n' >> {rel}/.git/config; }} 2>&1; \
         {{ printf '#!/bin/sh\\ntouch {m}\\n' > {rel}/.git/hooks/pre-commit && chmod +x {rel}/.git/hooks/pre-commit; }} 2>&1; "
    )
}

/// A repository's settings and hook directory, to compare before and after.
fn settings(repo: &Path) -> (String, Vec<String>) {
    let mut hooks: Vec<String> = std::fs::read_dir(repo.join(".git/hooks"))
        .expect("hooks")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    hooks.sort();
    (read(&repo.join(".git/config")), hooks)
}

#[tokio::test]
async fn repositories_below_the_top_of_the_workspace_cannot_be_redirected() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::plain();
        let repos: Vec<PathBuf> = NESTED.iter().map(|r| repository_at(&fx.ws, r)).collect();
        std::fs::write(repos[1].join(".gitignore"), "vendor/\n").expect("gitignore");
        let before: Vec<_> = repos.iter().map(|r| settings(r)).collect();
        let env = fx.env(policy(access));
        let attack: String = NESTED.iter().map(|r| plant(r, &marker(&fx))).collect();
        let refusals: String = NESTED
            .iter()
            .map(|r| {
                format!(
                    "bash: line 1: {r}/.git/config: Read-only file system\n\
                     bash: line 1: {r}/.git/hooks/pre-commit: Read-only file system\n"
                )
            })
            .collect();
        assert_eq!(
            run(&env, &format!("{attack}true")).await,
            Ok(refusals.trim_end().to_owned()),
            "{access}"
        );
        for (repo, before) in repos.iter().zip(&before) {
            assert_eq!(&settings(repo), before, "{access}: {}", repo.display());
            git_outside_runs_nothing(repo, &marker(&fx), access.as_str());
        }
    }
}

#[tokio::test]
async fn a_repository_made_below_the_top_during_a_call_runs_nothing_later() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        // Below a plain workspace, and below one that is a repository itself.
        for fx in [Fixture::plain(), Fixture::repository()] {
            let env = fx.env(policy(access));
            let attack = format!(
                "mkdir -p sub/deeper && cd sub/deeper && git init -q && cd ../.. && {}true",
                plant("sub/deeper", &marker(&fx))
            );
            let made = fx.ws.join("sub/deeper/.git");
            assert_eq!(
                run(&env, &attack).await,
                Ok(removed_note(&[
                    made.join("config"),
                    made.join("hooks/pre-commit")
                ])),
                "{access}"
            );
            git_outside_runs_nothing(&fx.ws.join("sub/deeper"), &marker(&fx), access.as_str());
            // A `.git` file pointing git elsewhere, made in a subdirectory, goes too.
            let pointer =
                "mkdir -p \"$TMPDIR/evil\" other && echo \"gitdir: $TMPDIR/evil\" > other/.git";
            assert_eq!(
                run(&env, pointer).await,
                Ok(removed_note(&[fx.ws.join("other/.git")])),
                "{access}"
            );
        }
    }
}

/// Repositories that arrive by being moved, during a call: one made in the private
/// temporary directory and moved in inside a new directory, and one made in a directory
/// that was moved within the workspace first (it is known where it is now, not where the
/// session's walk found it).
#[tokio::test]
async fn a_repository_moved_in_or_made_in_a_moved_directory_runs_nothing_later() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::plain();
        std::fs::create_dir_all(fx.ws.join("d/e")).expect("a directory there at the start");
        let env = fx.env(policy(access));
        let attack = format!(
            "git init -q \"$TMPDIR/r\" && {}mkdir -p \"$TMPDIR/x/y\" && mv \"$TMPDIR/r\" \"$TMPDIR/x/y/r\" && mv \"$TMPDIR/x\" x && \
             mv d/e f && git init -q f/r && {}true",
            plant("$TMPDIR/r", &marker(&fx)),
            plant("f/r", &marker(&fx))
        );
        let (moved_in, in_moved) = (fx.ws.join("x/y/r/.git"), fx.ws.join("f/r/.git"));
        assert_eq!(
            run(&env, &attack).await,
            Ok(removed_note(&[
                in_moved.join("config"),
                in_moved.join("hooks/pre-commit"),
                moved_in.join("config"),
                moved_in.join("hooks/pre-commit"),
            ])),
            "{access}"
        );
        for repo in ["x/y/r", "f/r"] {
            git_outside_runs_nothing(&fx.ws.join(repo), &marker(&fx), access.as_str());
        }
    }
}

/// A repository below the top whose settings keep its hooks in its work tree
/// (`core.hooksPath = .githooks`): the hook cannot be planted there in either git mode, and
/// the user's `git commit` in it, outside the sandbox, runs nothing planted.
#[tokio::test]
async fn a_nested_repositorys_hooks_in_its_work_tree_cannot_be_planted() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::plain();
        let repo = repository_at(&fx.ws, "proj");
        git(&repo, &["config", "core.hooksPath", ".githooks"]);
        std::fs::create_dir_all(repo.join(".githooks")).expect("hooks");
        let marker = marker(&fx);
        let env = fx.env(policy(access));
        let out = run(
            &env,
            &format!(
                "{{ printf '#!/bin/sh\\ntouch {m}\\n' > proj/.githooks/pre-commit && chmod +x proj/.githooks/pre-commit; }} 2>&1; echo tried",
                m = marker.display()
            ),
        )
        .await;
        assert_eq!(
            out,
            Ok("bash: line 1: proj/.githooks/pre-commit: Read-only file system\ntried".to_owned()),
            "{access:?}"
        );
        assert!(!repo.join(".githooks/pre-commit").exists(), "{access:?}");
        git_outside_runs_nothing(&repo, &marker, &format!("{access:?}"));
    }
}
