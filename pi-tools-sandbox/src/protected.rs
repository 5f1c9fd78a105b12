//! What stays read-only inside every writable root by default: the files other programs
//! load or run by themselves when someone works in the directory later, outside any
//! sandbox.
//!
//! A command must not plant anything that makes a later program run code: git's hooks and
//! settings, this program's own configuration (which decides what the sandbox is), the
//! files a shell extension, an editor, a dev container or another agent reads when the
//! directory is opened, and a home directory's shell start files when a writable root is
//! one. The list follows what peers protect (direnv's and mise's trusted files, the
//! settings folders Anthropic's sandbox runtime keeps read-only, Codex's read-only `.git`),
//! and docs/safety.md gives the reason for each entry.
//!
//! An entry that exists is bind-mounted read-only in the command's mount namespace (so it
//! cannot be changed, replaced, renamed away or hard-linked from); one that does not exist
//! cannot be mounted on, so what a command makes there is undone after the call (see
//! `plant_guard.rs`). A program's own writes are refused all of them, with a sentence, by
//! [`Sandbox::check_write`](crate::Sandbox::check_write).

/// The protected paths when the configuration does not opt out of them
/// (`[sandbox] default_protected = false`), relative to each writable root. `.git/…`
/// entries follow a `.git` file to the repository's git directory.
pub const DEFAULT_PROTECTED: [&str; 33] = [
    // git: hooks and settings run code at the user's next git command.
    ".git/hooks",
    ".git/config",
    // pi-tools' own configuration (and pi's project folder): it decides what the sandbox is.
    "pi-tools.toml",
    ".pi",
    // Shell extensions and version managers that run what a directory names on `cd`.
    ".envrc",
    ".mise.toml",
    "mise.toml",
    ".mise",
    // Agents and MCP clients that start the servers or hooks a project names.
    ".mcp.json",
    ".claude",
    ".cursor",
    ".codex",
    ".gemini",
    // Editors and dev containers: tasks, launch settings, extensions run on open.
    ".vscode",
    ".idea",
    ".zed",
    ".devcontainer",
    // Build tools whose project settings name programs to run (a compiler wrapper, a
    // package manager's own code or shell).
    ".cargo/config.toml",
    ".cargo/config",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    // A home directory as a writable root: shell start files, git's and ssh's settings.
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".gitconfig",
    ".ssh",
];

/// Whether `relative` (an entry of the protected list) is one of git's, which the git guard
/// and the read-only `.git` already cover for new files.
pub(super) fn is_git_entry(relative: &std::path::Path) -> bool {
    relative.starts_with(".git")
}
