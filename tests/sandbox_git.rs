//! Git, safely (issue 22, finding 3): nothing a sandboxed command (or the write tool) does
//! makes a later git command outside the sandbox run code, with `.git` read-only (the
//! default) or writable for commits, in a plain repository, a worktree and a repository
//! with a submodule. Each attack plants a command that would leave a marker outside; a real
//! `git status` and `git commit` then run outside the sandbox and the marker must not exist.

#![cfg(all(target_os = "linux", feature = "builtins"))]

use support::sandbox as sandbox_support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tools::env::{ExecutionEnv, GitAccess, SandboxMode, SandboxPolicy};
use sandbox_support::{Fixture, git, read, refused, run};

pub(crate) fn policy(access: GitAccess) -> SandboxPolicy {
    SandboxPolicy::new(SandboxMode::WorkspaceWrite).with_git(access)
}

/// The note a failed command gets when it hit the read-only `.git`.
const READ_ONLY_NOTE: &str = "[The repository's .git is read-only in this sandbox ([sandbox] git = \"read-only\"), so git can read it but not commit, stage or switch branches. Leave such changes to the user, or ask them to set [sandbox] git = \"commit\" in the configuration.]";

/// The marker a planted command would make, outside the workspace.
pub(crate) fn marker(fx: &Fixture) -> PathBuf {
    fx.outside.join("pwned")
}

/// A shell command that writes a git config running `touch <marker>` as fsmonitor and
/// hooks path into `config` (relative to the command's directory).
pub(crate) fn plant_config(config: &str, marker: &Path) -> String {
    format!(
        "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch {m}; false\"\\n\\thooksPath = /nonexistent\\n' > {config}",
        m = marker.display()
    )
}

/// `git status` and `git commit` outside the sandbox, in `dir`; the marker must not exist.
pub(crate) fn git_outside_runs_nothing(dir: &Path, marker: &Path, what: &str) {
    git(dir, &["status", "--porcelain"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", "outside"]);
    assert!(!marker.exists(), "{what}: the planted command ran outside");
}

#[tokio::test]
async fn the_commondir_attack_runs_nothing_in_a_later_git_status_in_either_mode() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::repository();
        let env = fx.env(policy(access));
        let attack = format!(
            "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/ && {} && echo ../evil > .git/commondir",
            plant_config("evil/config", &marker(&fx))
        );
        let commondir = fx.ws.join(".git/commondir");
        // `evil` has a git directory's shape (HEAD, objects, refs): its planted settings
        // go too (issue 46, finding 2).
        let evil = fx.ws.join("evil/config");
        match access {
            GitAccess::ReadOnly => assert_eq!(
                refused(&env, &attack).await,
                format!(
                    "bash: line 1: .git/commondir: Read-only file system\n{}\n{READ_ONLY_NOTE}\n\nCommand exited with code 1",
                    removed_note(&[evil])
                )
            ),
            GitAccess::Commit => assert_eq!(
                run(&env, &attack).await,
                Ok(removed_note(&[commondir.clone(), evil]))
            ),
        }
        assert!(!commondir.exists(), "{access}");
        // The write tool is refused the same file.
        let err = env
            .write_file(&commondir, b"../evil\n".to_vec())
            .await
            .expect_err("refused");
        let expected = match access {
            GitAccess::ReadOnly => format!(
                "{} cannot be written: {} is read-only in the sandbox ([sandbox] git = \"read-only\"), so that nothing can make a later git command run other code. Leave it as it is; to let commands and the file tools commit, set [sandbox] git = \"commit\" in the configuration.",
                commondir.display(),
                fx.ws.join(".git").display()
            ),
            GitAccess::Commit => format!(
                "{} cannot be written: it is one of git's settings, hooks or redirect files (such as commondir), which could make a later git command outside the sandbox run other code. Leave it as it is.",
                commondir.display()
            ),
        };
        assert_eq!(err.to_string(), expected, "{access}");
        git_outside_runs_nothing(&fx.ws, &marker(&fx), access.as_str());
    }
}

#[tokio::test]
async fn commits_work_in_commit_mode_and_fail_naming_the_setting_in_read_only() {
    let fx = Fixture::repository();
    let commit = "echo more >> file.txt && git -c user.name=t -c user.email=t@example.com commit -qam second && git log --format=%s";
    let text = refused(&fx.env(policy(GitAccess::ReadOnly)), commit).await;
    assert!(
        text.contains("/.git/index.lock': Read-only file system"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!("{READ_ONLY_NOTE}\n\nCommand exited with code 128")),
        "{text}"
    );
    // Reading the repository works.
    let out = run(&fx.env(policy(GitAccess::ReadOnly)), "git log --format=%s").await;
    assert_eq!(out, Ok("first".to_owned()));
    let out = run(&fx.env(policy(GitAccess::Commit)), commit).await;
    assert_eq!(out, Ok("second\nfirst".to_owned()));
    assert_eq!(git(&fx.ws, &["log", "-1", "--format=%s"]), "second\n");
}

/// A worktree of `fx.ws` next to it, on branch `side`.
fn add_worktree(fx: &Fixture) -> PathBuf {
    let wt = fx.add_worktree(fx.outside.join("../wt"));
    std::fs::canonicalize(wt).expect("worktree")
}

#[tokio::test]
async fn a_worktree_cannot_be_redirected_and_commits_in_commit_mode() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::repository();
        let wt = add_worktree(&fx);
        let env: Arc<dyn ExecutionEnv> = Fixture::env_in(&wt, policy(access));
        let git_dir = fx.ws.join(".git/worktrees/wt");
        let before = read(&git_dir.join("commondir"));
        let attack = format!(
            "mkdir -p evil && cp -r {common}/objects {common}/refs evil/ && cp {gd}/HEAD evil/ && {} && echo {wt}/evil > {gd}/commondir",
            plant_config("evil/config", &marker(&fx)),
            common = fx.ws.join(".git").display(),
            gd = git_dir.display(),
            wt = wt.display()
        );
        let result = run(&env, &attack).await;
        // `evil` has a git directory's shape: its planted settings go too.
        let evil = format!("removed {}/evil/config", wt.display());
        match access {
            GitAccess::ReadOnly => {
                let text = result.expect_err("refused");
                assert!(
                    text.starts_with(&format!(
                        "bash: line 1: {}/commondir: Permission denied\n",
                        git_dir.display()
                    )) && text.contains(&evil),
                    "{text}"
                );
            }
            GitAccess::Commit => {
                let text = result.expect("runs");
                assert!(
                    text.contains(&format!("restored {}/commondir", git_dir.display()))
                        && text.contains(&evil),
                    "{text}"
                );
            }
        }
        assert_eq!(read(&git_dir.join("commondir")), before, "{access}");
        // The worktree's .git file cannot be pointed elsewhere either.
        let text = refused(&env, "echo 'gitdir: /tmp' > .git").await;
        assert!(
            text.starts_with("bash: line 1: .git: Read-only file system\n"),
            "{access}: {text}"
        );
        git_outside_runs_nothing(&wt, &marker(&fx), access.as_str());
    }
    let fx = Fixture::repository();
    let wt = add_worktree(&fx);
    let env = Fixture::env_in(&wt, policy(GitAccess::Commit));
    let out = run(
        &env,
        "echo wt >> file.txt && git -c user.name=t -c user.email=t@example.com commit -qam in-worktree && git log -1 --format=%s",
    )
    .await;
    assert_eq!(out, Ok("in-worktree".to_owned()));
}

/// Adds `fx.outside/lib` (a repository of its own) as the submodule `sub`.
pub(crate) fn add_submodule(fx: &Fixture) {
    let lib = fx.outside.join("lib");
    std::fs::create_dir(&lib).expect("lib");
    git(&lib, &["init", "-q", "-b", "main"]);
    std::fs::write(lib.join("lib.txt"), "lib\n").expect("lib.txt");
    git(&lib, &["add", "lib.txt"]);
    git(&lib, &["commit", "-q", "-m", "lib"]);
    git(
        &fx.ws,
        &[
            "submodule",
            "add",
            "-q",
            lib.to_str().expect("utf-8"),
            "sub",
        ],
    );
    git(&fx.ws, &["commit", "-q", "-m", "submodule"]);
}

#[tokio::test]
async fn a_submodule_cannot_be_redirected_in_either_mode() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::repository();
        add_submodule(&fx);
        let env = fx.env(policy(access));
        // Its git directory and its .git file are read-only in both modes.
        let text = refused(
            &env,
            &format!(
                "{{ {}; }} 2>&1; echo 'gitdir: ../evil' > sub/.git",
                plant_config(".git/modules/sub/config", &marker(&fx))
            ),
        )
        .await;
        assert!(
            text.starts_with(
                "bash: line 1: .git/modules/sub/config: Read-only file system\n\
                 bash: line 1: sub/.git: Read-only file system\n"
            ),
            "{access}: {text}"
        );
        git_outside_runs_nothing(&fx.ws, &marker(&fx), access.as_str());
    }
    // A submodule staged in the session with a planted repository is removed after the call.
    let fx = Fixture::repository();
    let env = fx.env(policy(GitAccess::Commit));
    let attack = format!(
        "git init -q evilsub && {} && git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),evilsub",
        plant_config("evilsub/.git/config", &marker(&fx))
    );
    assert_eq!(
        run(&env, &attack).await,
        Ok(format!(
            "[The sandbox undid what this command did to git's settings, hooks or redirect files, which could make a later git command outside the sandbox run other code: removed {}. Leave them as they are.]",
            fx.ws.join("evilsub/.git").display()
        ))
    );
    git_outside_runs_nothing(&fx.ws, &marker(&fx), "a staged submodule");
}

/// The note a call gets when the guard removed `paths`.
pub(crate) fn removed_note(paths: &[PathBuf]) -> String {
    let removed: Vec<String> = paths
        .iter()
        .map(|p| format!("removed {}", p.display()))
        .collect();
    format!(
        "[The sandbox undid what this command did to git's settings, hooks or redirect files, which could make a later git command outside the sandbox run other code: {}. Leave them as they are.]",
        removed.join(", ")
    )
}

/// Issue 38, finding 4: a gitlink staged and then moved into a shared index
/// (`git update-index --split-index`) is seen like any other.
#[tokio::test]
async fn a_gitlink_hidden_in_a_split_index_is_seen() {
    let fx = Fixture::repository();
    let env = fx.env(policy(GitAccess::Commit));
    let attack = format!(
        "git init -q evilsub && {} && git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),evilsub && git update-index --split-index",
        plant_config("evilsub/.git/config", &marker(&fx))
    );
    assert_eq!(
        run(&env, &attack).await,
        Ok(removed_note(&[fx.ws.join("evilsub/.git")]))
    );
    git_outside_runs_nothing(&fx.ws, &marker(&fx), "a split index");
}

/// Issue 38, finding 4: the file tools refuse every `.git` git may read for the workspace,
/// at every call: a submodule's staged by a command in the session, a nested repository's,
/// one at the top of a workspace that had none.
#[tokio::test]
async fn the_file_tools_refuse_every_git_directory_git_may_read() {
    use pi_tools::builtins::write::{WriteArgs, write};
    use pi_tools::env::WithEnv;
    let write_tool = |env: &Arc<dyn ExecutionEnv>, rel: &str| {
        let ctx = pi_tools::ToolContext::new("call", tokio_util::sync::CancellationToken::new())
            .with_env(Arc::clone(env));
        let args = WriteArgs::new(rel, "[core]\n\tfsmonitor = x\n");
        async move {
            match write(&ctx, args).await {
                Ok(_) => "written".to_owned(),
                Err(e) => e.message().to_owned(),
            }
        }
    };
    let refusal = |rel: &str, git: &Path| {
        format!(
            "Could not write {rel}: {} cannot be written: it is inside a .git that git may read for this workspace (a nested repository, a submodule's, or a repository made during the session), where a setting or hook could make a later git command outside the sandbox run other code. Leave it as it is.",
            git.display()
        )
    };
    let fx = Fixture::repository();
    let env = fx.env(policy(GitAccess::Commit));
    let staged = "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub";
    assert_eq!(run(&env, staged).await, Ok("(no output)".to_owned()));
    // (the path written, the one the refusal names, the `.git` that must not exist)
    for (rel, named, git) in [
        ("sub/.git/config", "sub/.git", "sub/.git"),
        (
            "nested/.GIT/hooks/pre-commit",
            "nested/.GIT/hooks",
            "nested/.GIT",
        ),
        ("a/b/.git", "a/b/.git", "a/b/.git"),
    ] {
        assert_eq!(
            write_tool(&env, rel).await,
            refusal(rel, &fx.ws.join(named)),
            "{rel}"
        );
        assert!(!fx.ws.join(git).exists(), "{rel}");
    }
    // Files of the workspace whose names merely contain .git are fine.
    assert_eq!(write_tool(&env, "a.gitignore").await, "written");
    let fx = Fixture::plain();
    let env = fx.env(policy(GitAccess::ReadOnly));
    assert_eq!(
        write_tool(&env, ".git/config").await,
        refusal(".git/config", &fx.ws.join(".git"))
    );
}

/// Issue 38, finding 4: in a workspace without a repository at the start, one a call makes
/// (`git init`, then a setting that runs a command) does not make the user's later git run
/// it, in either mode; nor does a `.git` file pointing elsewhere.
#[tokio::test]
async fn a_repository_made_during_a_call_runs_nothing_later() {
    for access in [GitAccess::ReadOnly, GitAccess::Commit] {
        let fx = Fixture::plain();
        let env = fx.env(policy(access));
        let attack = format!(
            "git init -q && git config core.fsmonitor 'touch {}; false'",
            marker(&fx).display()
        );
        assert_eq!(
            run(&env, &attack).await,
            Ok(removed_note(&[fx.ws.join(".git/config")])),
            "{access}"
        );
        git_outside_runs_nothing(&fx.ws, &marker(&fx), access.as_str());
        let fx = Fixture::plain();
        let env = fx.env(policy(access));
        let pointer = "mkdir -p \"$TMPDIR/evil\" && echo \"gitdir: $TMPDIR/evil\" > .git";
        assert_eq!(
            run(&env, pointer).await,
            Ok(removed_note(&[fx.ws.join(".git")])),
            "{access}"
        );
    }
}

/// A redirect file a background job writes after its call is undone when the environment
/// goes, even without an explicit end of the session.
#[tokio::test]
async fn what_a_background_job_plants_after_its_call_is_undone_when_the_environment_goes() {
    let fx = Fixture::repository();
    let env = fx.env(policy(GitAccess::Commit));
    let out = run(
        &env,
        "(sleep 0.3; echo ../evil > .git/commondir) >/dev/null 2>&1 &",
    )
    .await;
    assert_eq!(out, Ok("(no output)".to_owned()));
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert!(fx.ws.join(".git/commondir").exists(), "the job did not run");
    drop(env);
    assert!(!fx.ws.join(".git/commondir").exists());
}

/// Issue 38, finding 4: a workspace that is a directory inside a repository holds that
/// repository's submodules, which the user's `git status` there reads: their `.git` is
/// read-only, and one a command makes or replaces is undone, in either mode.
#[tokio::test]
async fn a_submodule_of_a_repository_enclosing_the_workspace_cannot_be_redirected() {
    let fixtures = [GitAccess::ReadOnly, GitAccess::Commit].map(|access| {
        let fx = Fixture::repository();
        let lib = fx.outside.join("lib");
        std::fs::create_dir(&lib).expect("lib");
        git(&lib, &["init", "-q", "-b", "main"]);
        git(&lib, &["commit", "-q", "--allow-empty", "-m", "lib"]);
        let lib = lib.to_str().expect("utf-8");
        git(&fx.ws, &["submodule", "add", "-q", lib, "pkg/sub"]);
        git(&fx.ws, &["commit", "-q", "-m", "submodule"]);
        (access, fx)
    });
    // Older than the clock's slack, so the user's `.git` file a call moves cannot pass for
    // one it planted.
    std::thread::sleep(std::time::Duration::from_millis(2200));
    for (access, fx) in fixtures {
        let pkg = fx.ws.join("pkg");
        let env = Fixture::env_in(&pkg, policy(access));
        let evil = format!(
            "mkdir -p evil && cp -r ../.git/modules/pkg/sub/objects ../.git/modules/pkg/sub/refs ../.git/modules/pkg/sub/HEAD evil/ && {}",
            plant_config("evil/config", &marker(&fx))
        );
        // `evil` has a git directory's shape: its planted settings go at once.
        assert_eq!(
            run(&env, &evil).await,
            Ok(removed_note(&[pkg.join("evil/config")]))
        );
        let text = refused(&env, "echo 'gitdir: ../evil' > sub/.git").await;
        assert_eq!(
            text, "bash: line 1: sub/.git: Read-only file system\n\nCommand exited with code 1",
            "{access}"
        );
        let out = run(
            &env,
            "mv sub sub2 && mkdir sub && echo 'gitdir: ../evil' > sub/.git",
        )
        .await;
        // The submodule is followed by its identity: moved back, and what took its place
        // moved aside, with the `.git` file planted in it removed.
        assert_eq!(
            out,
            Ok(format!(
                "[The sandbox undid what this command did to git's settings, hooks or redirect files, which could make a later git command outside the sandbox run other code: moved {s} aside to {s}.pi-tools-disabled (the command put it where a repository of the user's was), moved the user's repository at {s2} back to {s}, where the command had moved it from, removed {s}.pi-tools-disabled/.git. Leave them as they are.]",
                s = pkg.join("sub").display(),
                s2 = pkg.join("sub2").display()
            )),
            "{access}"
        );
        assert!(!pkg.join("sub2").exists(), "{access}");
        assert_eq!(
            read(&pkg.join("sub/.git")),
            "gitdir: ../../.git/modules/pkg/sub\n"
        );
        git_outside_runs_nothing(&fx.ws, &marker(&fx), access.as_str());
    }
}
