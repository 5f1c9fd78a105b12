//! What the sandbox's attack tests share: a workspace next to a directory outside it, and
//! the bash tool run in a sandboxed environment.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tools::ToolContext;
use pi_tools::builtins::bash::{BashArgs, BashConfig, bash};
use pi_tools::env::local::LocalEnv;
use pi_tools::env::{ExecutionEnv, SandboxMode, SandboxPolicy, WithEnv};
use tokio_util::sync::CancellationToken;

/// What `outside/target.txt` holds.
pub const ORIGINAL: &str = "original\n";

/// A workspace `ws` next to a directory `outside` holding `target.txt`, both in one
/// temporary directory on one file system.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
}

impl Fixture {
    /// A workspace holding `file.txt`, without a repository.
    pub fn plain() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(dir.path()).expect("canonical tempdir");
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(&ws).expect("ws");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(ws.join("file.txt"), "in the workspace\n").expect("file");
        std::fs::write(outside.join("target.txt"), ORIGINAL).expect("target");
        Fixture {
            _dir: dir,
            ws,
            outside,
        }
    }

    /// A workspace that is a git repository with one commit of `file.txt`.
    pub fn repository() -> Fixture {
        let fx = Fixture::plain();
        git(&fx.ws, &["init", "-q", "-b", "main"]);
        git(&fx.ws, &["add", "file.txt"]);
        git(&fx.ws, &["commit", "-q", "-m", "first"]);
        fx
    }

    /// An environment working in `dir`, sandboxed by `policy`.
    pub fn env_in(dir: &Path, policy: SandboxPolicy) -> Arc<dyn ExecutionEnv> {
        Arc::new(
            LocalEnv::new(dir)
                .with_sandbox(policy)
                .expect("sandbox resolves"),
        )
    }

    /// An environment working in the workspace, sandboxed by `policy`.
    pub fn env(&self, policy: SandboxPolicy) -> Arc<dyn ExecutionEnv> {
        Fixture::env_in(&self.ws, policy)
    }

    /// The default sandbox.
    pub fn workspace_write(&self) -> Arc<dyn ExecutionEnv> {
        self.env(SandboxPolicy::new(SandboxMode::WorkspaceWrite))
    }

    /// Adds a worktree of the repository at `path`, on a new branch `side`; returns `path`.
    pub fn add_worktree(&self, path: PathBuf) -> PathBuf {
        git(
            &self.ws,
            &[
                "worktree",
                "add",
                "-q",
                path.to_str().expect("utf-8"),
                "-b",
                "side",
            ],
        );
        path
    }

    /// The file outside that attacks aim at.
    pub fn target(&self) -> PathBuf {
        self.outside.join("target.txt")
    }

    /// Panics if the target changed or anything was created next to it.
    pub fn assert_untouched(&self) {
        assert_eq!(
            read(&self.target()),
            ORIGINAL,
            "the target outside was changed"
        );
        let names: Vec<String> = std::fs::read_dir(&self.outside)
            .expect("outside")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["target.txt"], "something was created outside");
    }
}

/// Runs git in `dir` outside any sandbox, as a user would; panics when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A file's text, or `<error>`.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
}

/// Whether the tests run as root; when not, says on stderr that `test` is skipped.
pub fn root_or_skip(test: &str) -> bool {
    let root = rustix::process::geteuid().is_root();
    if !root {
        eprintln!("{test}: skipped: it attacks the host with root's powers, so it needs root");
    }
    root
}

/// Runs `command` with the bash tool in `env`: `Ok(output)` or `Err(error text)`. bash
/// names itself in its messages by the path it was started as, which differs between
/// machines; the results say `bash:`.
pub async fn run(env: &Arc<dyn ExecutionEnv>, command: &str) -> Result<String, String> {
    let same_everywhere = |text: &str| {
        text.replace("/usr/local/bin/bash: ", "bash: ")
            .replace("/usr/bin/bash: ", "bash: ")
            .replace("/bin/bash: ", "bash: ")
    };
    let ctx = ToolContext::new("call", CancellationToken::new()).with_env(Arc::clone(env));
    let args = BashArgs {
        timeout: Some(20.0),
        ..BashArgs::new(command)
    };
    match bash(&ctx, &BashConfig::default(), args).await {
        Ok(out) => Ok(same_everywhere(out.content[0].as_text().expect("text"))),
        Err(e) => Err(same_everywhere(e.message())),
    }
}

/// The text of a failed command (its output plus the exit line).
pub async fn refused(env: &Arc<dyn ExecutionEnv>, command: &str) -> String {
    match run(env, command).await {
        Ok(out) => panic!("`{command}` succeeded in the sandbox: {out}"),
        Err(text) => text,
    }
}
