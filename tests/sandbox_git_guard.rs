//! The git guard's own safety (issue 38, finding 1): what it cleans up after a call it
//! reaches without following a link out of the repository, and what it did not see
//! planted during the call (the user's files, a nested repository the call only used) it
//! never removes. Files outside the workspace and the user's repositories are compared
//! before and after; a real git outside the sandbox then runs nothing planted.

#![cfg(all(target_os = "linux", feature = "builtins"))]

use support::sandbox as sandbox_support;

use std::path::{Path, PathBuf};

use pi_tools::env::GitAccess;
use sandbox_support::{Fixture, git, read, run};

use crate::sandbox_git::{
    add_submodule, git_outside_runs_nothing, marker, plant_config, policy, removed_note,
};

/// Every file beneath `dir` with its bytes, links as `-> target` (none followed).
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        for entry in std::fs::read_dir(&at)
            .expect("readable")
            .map(|e| e.expect("entry"))
        {
            let path = entry.path();
            let kind = entry.file_type().expect("type");
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).expect("link");
                found.push((path, format!("-> {}", target.display())));
            } else {
                found.push((path.clone(), read(&path)));
            }
        }
    }
    found.sort();
    found
}

/// A repository outside the workspace (`outside/victim`) with a commit, a hook and the
/// redirect-like names a guard looks for (`config`, `commondir`, `hooks/…`) at its top too.
fn outside_victim(fx: &Fixture) -> PathBuf {
    let victim = fx.outside.join("victim");
    std::fs::create_dir(&victim).expect("victim");
    git(&victim, &["init", "-q", "-b", "main"]);
    std::fs::write(victim.join("notes.txt"), "the user's\n").expect("notes");
    git(&victim, &["add", "notes.txt"]);
    git(&victim, &["commit", "-q", "-m", "theirs"]);
    for name in ["config", "commondir", "hooks/pre-commit"] {
        let path = victim.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, "the user's\n").expect("file");
    }
    victim
}

#[tokio::test]
async fn the_guard_never_follows_a_link_out_of_the_repository() {
    let fx = Fixture::repository();
    let victim = outside_victim(&fx);
    let before = tree(&fx.outside);
    let env = fx.env(policy(GitAccess::Commit));
    let v = victim.display();
    let git_dir = fx.ws.join(".git");
    let cases = [
        (
            format!("mkdir -p .git/worktrees/y && ln -s {v} .git/worktrees/y/hooks"),
            Ok(removed_note(&[git_dir.join("worktrees/y/hooks")])),
        ),
        (
            format!("ln -s {v}/.git .git/modules"),
            Ok(removed_note(&[git_dir.join("modules")])),
        ),
        (
            format!("ln -s {v}/.git .git/worktrees/z"),
            Ok(removed_note(&[git_dir.join("worktrees/z")])),
        ),
        // A gitlink whose directory is a link to the repository outside: git does not go
        // through it, and neither does the guard.
        (
            format!(
                "ln -s {v} sub && git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub"
            ),
            Ok("(no output)".to_owned()),
        ),
    ];
    for (attack, expected) in cases {
        assert_eq!(run(&env, &attack).await, expected, "{attack}");
        assert_eq!(tree(&fx.outside), before, "{attack}: files outside changed");
    }
    git(&victim, &["status", "--porcelain"]);
    env.end_session();
    assert_eq!(tree(&fx.outside), before, "at the session's end");
}

/// The note a call gets when the guard moved `path` out of git's way.
fn moved_note(path: &Path) -> String {
    format!(
        "[The sandbox undid what this command did to git's settings, hooks or redirect files, which could make a later git command outside the sandbox run other code: moved {} aside to {}.pi-tools-disabled. Leave them as they are.]",
        path.display(),
        path.display()
    )
}

/// A repository planted in one call and staged as a gitlink in a later one is older than
/// the later call, but still kept out of git's way.
#[tokio::test]
async fn what_one_call_prepares_and_a_later_one_moves_into_place_is_disabled() {
    let fx = Fixture::repository();
    let env = fx.env(policy(GitAccess::Commit));
    // Without git's automatic maintenance: `git commit` starts it detached, and while it
    // may still run after the call, the guard keeps the first call's start as the time
    // since which things count as planted, so the second call would find evilsub's `.git`
    // all planted and remove it (the test failed so on a loaded machine).
    let prepare = format!(
        "git init -q evilsub && git -C evilsub -c maintenance.auto=false commit -q --allow-empty -m x && {}",
        plant_config("evilsub/.git/config", &marker(&fx))
    );
    // Its settings go at once, as any repository's made below the top.
    assert_eq!(
        run(&env, &prepare).await,
        Ok(removed_note(&[fx.ws.join("evilsub/.git/config")]))
    );
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let out = run(
        &env,
        "git update-index --add --cacheinfo 160000,$(git -C evilsub rev-parse HEAD),evilsub",
    )
    .await;
    assert_eq!(out, Ok(moved_note(&fx.ws.join("evilsub/.git"))));
    git_outside_runs_nothing(&fx.ws, &marker(&fx), "a gitlink staged later");
}

#[tokio::test]
async fn the_guard_leaves_what_the_user_did_between_calls() {
    let fx = Fixture::repository();
    let env = fx.env(policy(GitAccess::Commit));
    assert_eq!(run(&env, "true").await, Ok("(no output)".to_owned()));
    // The user adds a worktree, a nested repository and a hook of a worktree.
    let wt = fx.add_worktree(fx.outside.join("wt"));
    let nested = fx.ws.join("nested");
    std::fs::create_dir(&nested).expect("nested");
    git(&nested, &["init", "-q", "-b", "main"]);
    git(&nested, &["commit", "-q", "--allow-empty", "-m", "nested"]);
    let hook = fx.ws.join(".git/worktrees/wt/hooks/post-checkout");
    std::fs::create_dir_all(hook.parent().expect("hooks")).expect("hooks");
    std::fs::write(&hook, "#!/bin/sh\n").expect("hook");
    let before = tree(&fx.ws.join(".git/worktrees"));
    // Older than the clock's slack, so it cannot pass for planted.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    assert_eq!(run(&env, "true").await, Ok("(no output)".to_owned()));
    // A call that stages a gitlink over the user's nested repository does not delete it:
    // it is moved out of git's way.
    let out = run(
        &env,
        "git update-index --add --cacheinfo 160000,$(git -C nested rev-parse HEAD),nested",
    )
    .await;
    assert_eq!(out, Ok(moved_note(&nested.join(".git"))));
    env.end_session();
    assert_eq!(tree(&fx.ws.join(".git/worktrees")), before);
    assert!(
        nested.join(".git.pi-tools-disabled/HEAD").exists(),
        "the nested repository was removed"
    );
    git(&wt, &["status", "--porcelain"]);
}

/// A gitlink staged over the user's nested repository by a call that also committed in it
/// (so its `.git` changed during the call) moves the repository out of git's way with its
/// history: only what was all made during the call is ever removed.
#[tokio::test]
async fn a_nested_repository_the_call_committed_in_is_moved_aside_with_its_history() {
    let fx = Fixture::repository();
    let nested = fx.ws.join("nested");
    std::fs::create_dir(&nested).expect("nested");
    git(&nested, &["init", "-q", "-b", "main"]);
    git(
        &nested,
        &["commit", "-q", "--allow-empty", "-m", "the user's"],
    );
    // Older than the clock's slack, so it cannot pass for planted.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let env = fx.env(policy(GitAccess::Commit));
    let out = run(
        &env,
        "git -C nested -c user.name=m -c user.email=m@example.com commit -q --allow-empty -m more && git add nested 2>/dev/null",
    )
    .await;
    assert_eq!(out, Ok(moved_note(&nested.join(".git"))));
    let aside = nested.join(".git.pi-tools-disabled");
    let log = git(
        &fx.ws,
        &[
            "--git-dir",
            aside.to_str().expect("utf-8"),
            "log",
            "--format=%s",
        ],
    );
    assert_eq!(log, "more\nthe user's\n");
}

/// `.git/worktrees` turned into a link to a planted copy would lead the user's linked
/// worktree to the copy's settings: the link is removed like any other planted link.
#[tokio::test]
async fn a_link_in_place_of_the_worktrees_directory_is_removed() {
    let fx = Fixture::repository();
    let wt = fx.add_worktree(fx.outside.join("wt"));
    let env = fx.env(policy(GitAccess::Commit));
    let attack = format!(
        "mkdir -p evil/wt && cp -r .git/objects .git/refs .git/HEAD evil/wt/ && {} && mv .git/worktrees .git/old && ln -s \"$PWD/evil\" .git/worktrees",
        plant_config("evil/wt/config", &marker(&fx))
    );
    // `evil/wt` has a git directory's shape: its planted settings go too.
    assert_eq!(
        run(&env, &attack).await,
        Ok(removed_note(&[
            fx.ws.join(".git/worktrees"),
            fx.ws.join("evil/wt/config")
        ]))
    );
    assert!(std::fs::symlink_metadata(fx.ws.join(".git/worktrees")).is_err());
    // The worktree's git directory was moved away by the call, so git there fails; it
    // must not run what was planted.
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&wt)
        .output()
        .expect("git runs");
    assert!(!status.status.success());
    assert!(!marker(&fx).exists(), "the planted command ran outside");
}

/// The user's repository moved by a call to where a submodule's `.git` file was, and the
/// submodule moved away: both are moved back where they were (issue 46, finding 1: a
/// repository is followed by its identity, not its path), so nothing of the user's is
/// removed or left where git reads it from the wrong place.
#[tokio::test]
async fn a_repository_moved_in_place_of_a_submodules_git_file_is_moved_back() {
    let fx = Fixture::repository();
    add_submodule(&fx);
    // Made by the user between calls: one there when the session starts is mounted
    // read-only, so a command cannot move its `.git` at all.
    let env = fx.env(policy(GitAccess::ReadOnly));
    let nested = fx.ws.join("nested");
    std::fs::create_dir(&nested).expect("nested");
    git(&nested, &["init", "-q", "-b", "main"]);
    git(
        &nested,
        &["commit", "-q", "--allow-empty", "-m", "the user's"],
    );
    // Older than the clock's slack, so it cannot pass for planted.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let dot_git = fx.ws.join("sub/.git");
    let out = run(&env, "mv sub sub2 && mkdir sub && mv nested/.git sub/.git").await;
    assert_eq!(
        out,
        Ok(format!(
            "[The sandbox undid what this command did to git's settings, hooks or redirect files, which could make a later git command outside the sandbox run other code: moved the user's repository at {g} back to {n}, where the command had moved it from, removed the empty directory {s} the command made where a repository of the user's was, moved the user's repository at {s2} back to {s}, where the command had moved it from. Leave them as they are.]",
            g = dot_git.display(),
            n = nested.join(".git").display(),
            s = fx.ws.join("sub").display(),
            s2 = fx.ws.join("sub2").display(),
        ))
    );
    assert_eq!(read(&dot_git), "gitdir: ../.git/modules/sub\n");
    assert!(!fx.ws.join("sub2").exists());
    assert_eq!(git(&nested, &["log", "--format=%s"]), "the user's\n");
}
