//! What in a configuration loosens the embedded default or runs something: the keys that
//! need the user's trust in a file that was found rather than named.
//!
//! The comparison is made on the loaded [`Config`], field by field, with every field named
//! (no `..`): a field added to the configuration does not compile until this file decides
//! whether it needs trust. The table in docs/safety.md ("Consent") is this file in prose.

use std::path::{Component, Path, PathBuf};

use crate::config::{Config, EnvSettings, SandboxSettings, ToolSettings};
use crate::env::{GitAccess, SandboxMode};

/// One thing a configuration does that needs the user's trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loosening {
    /// The key, as written in the file (`[sandbox] mode = "off"`).
    pub key: String,
    /// Why it needs trust, as a clause (`turns the sandbox off`).
    pub why: String,
}

impl std::fmt::Display for Loosening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.key, self.why)
    }
}

fn loosening(key: impl Into<String>, why: impl Into<String>) -> Loosening {
    Loosening {
        key: key.into(),
        why: why.into(),
    }
}

/// What `config` (read from a file in `dir`) does beyond `default` (the embedded default
/// for the same registered tools) that loosens it or runs something. Empty when the file
/// only tightens the default or changes what does not matter to safety (execution order,
/// concurrency, timeouts, message and session bounds, a policy, which can only ask or deny
/// more than the default allows).
pub fn loosenings(config: &Config, default: &Config, dir: &Path) -> Vec<Loosening> {
    let Config {
        active,
        execution: _,
        max_concurrency: _,
        timeout: _,
        // The native shapes serve the same built-ins (edit and write, as apply_patch and
        // the text editor) in the environment, sandbox and policy the file sets.
        shapes: _,
        tools,
        allowed_roots,
        pseudo_files,
        guidelines,
        sandbox,
        env,
        mcp_max_message_bytes: _,
        mcp_max_sessions: _,
        mcp_end_idle_when_full: _,
        mcp_connections: _,
        mcp_trusted_proxies,
        mcp_task_after: _,
        servers,
        declared,
        policy: _,
        origin: _,
    } = config;
    let mut found = Vec::new();
    for name in active {
        let declared_here = declared.iter().any(|d| &d.name == name);
        let mounted = servers.iter().any(|s| {
            name.strip_prefix(&s.name)
                .is_some_and(|rest| rest.starts_with(crate::config::MOUNT_SEPARATOR))
        });
        if !default.active.contains(name) && !declared_here && !mounted {
            found.push(loosening(
                format!("[tools] active = [.., \"{name}\", ..]"),
                format!("turns on `{name}`, which the embedded default leaves off"),
            ));
        }
    }
    for (name, settings) in tools {
        let ToolSettings {
            mode: _,
            config: _,
            raw,
        } = settings;
        if !raw.is_empty() && !declared.iter().any(|d| &d.name == name) {
            let keys: Vec<&str> = raw.keys().map(String::as_str).collect();
            found.push(loosening(
                format!("[tool.{name}] {}", keys.join(", ")),
                "changes how the tool works".to_owned(),
            ));
        }
    }
    if let Some(roots) = allowed_roots
        && let Some(outside) = roots.iter().find(|r| !within(dir, r))
    {
        found.push(loosening(
            format!(
                "[paths] allowed_roots = [.., \"{}\", ..]",
                outside.display()
            ),
            "reaches outside the directory that holds the file".to_owned(),
        ));
    }
    if *pseudo_files {
        found.push(loosening(
            "[paths] pseudo_files = true",
            "lets the file tools read kernel files",
        ));
    }
    // Fewer or the default's own lines say nothing new; a line of the file's own does.
    if guidelines.iter().any(|g| !default.guidelines.contains(g)) {
        found.push(loosening(
            "[prompt] guidelines",
            "speaks to the model in the system prompt with the user's voice",
        ));
    }
    sandbox_loosenings(sandbox, dir, &mut found);
    if let Some(proxy) = mcp_trusted_proxies.first() {
        found.push(loosening(
            format!("[mcp] trusted_proxies = [\"{proxy}\", ..]"),
            "lets those addresses name the client of each request, so the per-client bound on connections no longer holds them",
        ));
    }
    if let EnvSettings::Ssh(ssh) = env {
        found.push(loosening(
            "[env] kind = \"ssh\"",
            format!("runs the tools on {} over SSH", ssh.host),
        ));
    }
    for server in servers {
        let what = match &server.transport {
            crate::config::ServerTransport::Stdio { command, .. } => {
                format!("starts `{}`", command.join(" "))
            }
            crate::config::ServerTransport::Http { url, .. } => format!("connects to {url}"),
        };
        found.push(loosening(format!("[mcp.servers.{}]", server.name), what));
        if !server.sandbox
            && matches!(
                server.transport,
                crate::config::ServerTransport::Stdio { .. }
            )
        {
            found.push(loosening(
                format!("[mcp.servers.{}] sandbox = false", server.name),
                "runs the server outside the sandbox",
            ));
        }
    }
    for tool in declared {
        let what = match &tool.action {
            crate::declared::spec::DeclaredAction::Command(_) => "runs a program it names",
            crate::declared::spec::DeclaredAction::Script(_) => "runs a script",
        };
        found.push(loosening(format!("[tool.{}]", tool.name), what));
    }
    found
}

fn sandbox_loosenings(sandbox: &SandboxSettings, dir: &Path, found: &mut Vec<Loosening>) {
    let SandboxSettings {
        mode,
        network: _,
        writable_roots,
        protected: _,
        default_protected,
        git,
    } = sandbox;
    if *mode == SandboxMode::Off {
        found.push(loosening(
            "[sandbox] mode = \"off\"",
            "turns the sandbox off, so commands write anywhere",
        ));
    }
    if let Some(roots) = writable_roots
        && let Some(outside) = roots.iter().find(|r| !within(dir, r))
    {
        found.push(loosening(
            format!(
                "[sandbox] writable_roots = [.., \"{}\", ..]",
                outside.display()
            ),
            "lets commands write outside the directory that holds the file",
        ));
    }
    if !default_protected {
        found.push(loosening(
            "[sandbox] default_protected = false",
            "lets commands change git's hooks, this file and what other programs run by themselves",
        ));
    }
    if *git == GitAccess::Commit {
        found.push(loosening(
            "[sandbox] git = \"commit\"",
            "lets commands write in .git",
        ));
    }
}

/// Whether `path` (relative to `dir`, or absolute) is `dir` or beneath it, by its text:
/// `..` climbing out, or an absolute path elsewhere, is outside. (Links are the sandbox's
/// to resolve: it confines to the real location.)
fn within(dir: &Path, path: &Path) -> bool {
    let joined: PathBuf = dir.join(path);
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                if !normal.pop() {
                    return false;
                }
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.starts_with(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_is_read_from_the_path_text() {
        let dir = Path::new("/w/p");
        assert!(within(dir, Path::new(".")));
        assert!(within(dir, Path::new("sub/../x")));
        assert!(within(dir, Path::new("/w/p/a")));
        assert!(!within(dir, Path::new("..")));
        assert!(!within(dir, Path::new("a/../../q")));
        assert!(!within(dir, Path::new("/tmp")));
    }
}
