//! A configuration file read again while a server runs on it: what of the new content a
//! running server takes in, and what waits for a restart.
//!
//! Only the declared tools are taken in: the `[tool.<name>]` sections with `command` or
//! `script`, and their places in `[tools] active`. Everything else a server built at its
//! start (the sandbox, the environment, the policy, the paths, the mounted servers, the
//! built-ins turned on, the runner's bounds) keeps the value it started with, whether the
//! new one loosens it or tightens it: a running server is never loosened by a file it reads
//! again, and proving a change only tightens would be a second consent path beside
//! [`trust`](super::trust). The keys that changed are named, so the server can say that
//! they wait for a restart.
//!
//! The new content has been loaded and weighed for trust exactly as at the start (the
//! caller's part): a refused one changes nothing.
//!
//! ```
//! use pi_tools::config::Config;
//! use pi_tools::config::reread::reread;
//!
//! let running = Config::parse("[tools]\nactive = []\n", "a.toml", &[])?;
//! let next = Config::parse(
//!     "[tools]\nactive = [\"hello\"]\n[sandbox]\nmode = \"read-only\"\n\
//!      [tool.hello]\ndescription = \"Say hello.\"\ncommand = [\"echo\", \"hello\"]\n",
//!     "a.toml",
//!     &[],
//! )?;
//! let reread = reread(&running, &next);
//! assert_eq!(reread.active, ["hello"]);
//! assert!(reread.changes_tools(&running));
//! assert_eq!(reread.waiting, ["[sandbox]"]);
//! # Ok::<(), pi_tools::config::ConfigError>(())
//! ```

use super::{Config, DeclaredTool, ToolSettings};

/// What a running server takes from its configuration file read again ([`reread`]).
#[derive(Debug, Clone)]
pub struct Reread {
    /// The tools the new content declares, in its order.
    pub declared: Vec<DeclaredTool>,
    /// `[tools] active` as the server runs on from here: the entries it started with that
    /// name no declared tool, in their order, and the new content's declared tools where
    /// the new content places them.
    pub active: Vec<String>,
    /// The sections and keys the new content changes besides the declared tools
    /// (`[sandbox]`, `[tools] active (other than the declared tools)`), in the file's
    /// order of sections: their new values wait for a restart.
    pub waiting: Vec<String>,
}

impl Reread {
    /// Whether the tools served change: a declared tool came, left or changed, or moved in
    /// `[tools] active`.
    pub fn changes_tools(&self, running: &Config) -> bool {
        self.declared != running.declared || self.active != running.active
    }

    /// `running` with the declared tools and `[tools] active` of this reading.
    pub fn apply(&self, running: &mut Config) {
        running.declared = self.declared.clone();
        running.active = self.active.clone();
    }
}

/// What a server running on `running` takes from `next`, the same file loaded again: its
/// declared tools, and nothing else (see the module's documentation).
pub fn reread(running: &Config, next: &Config) -> Reread {
    Reread {
        declared: next.declared.clone(),
        active: merged_active(running, next),
        waiting: waiting(running, next),
    }
}

/// Whether `name` is a tool `config` declares.
fn declares(config: &Config, name: &str) -> bool {
    config.declared.iter().any(|d| d.name == name)
}

/// `next`'s `[tools] active`, but with the running entries that name no declared tool in
/// place of `next`'s: one for one, in their order, and the ones left over at the end. When
/// `next` changed only its declared tools, that is `next`'s list exactly.
fn merged_active(running: &Config, next: &Config) -> Vec<String> {
    let mut kept = running
        .active
        .iter()
        .filter(|name| !declares(running, name));
    let mut active: Vec<String> = Vec::with_capacity(next.active.len());
    for name in &next.active {
        let entry = if declares(next, name) {
            Some(name)
        } else {
            kept.next()
        };
        if let Some(entry) = entry
            && !active.contains(entry)
        {
            active.push(entry.clone());
        }
    }
    for entry in kept {
        if !active.contains(entry) {
            active.push(entry.clone());
        }
    }
    active
}

/// `[tools] active` without the tools `config` declares.
fn others(config: &Config) -> Vec<&String> {
    config
        .active
        .iter()
        .filter(|name| !declares(config, name))
        .collect()
}

/// The sections and keys `next` changes besides its declared tools. Every field is named
/// (no `..`): a field added to the configuration does not compile until this decides
/// whether a running server can take it in.
fn waiting(running: &Config, next: &Config) -> Vec<String> {
    let Config {
        active: _,
        execution,
        max_concurrency,
        timeout,
        shapes,
        tools,
        allowed_roots,
        pseudo_files,
        guidelines,
        sandbox,
        env,
        mcp_max_message_bytes,
        mcp_max_sessions,
        mcp_end_idle_when_full,
        mcp_connections,
        mcp_trusted_proxies,
        mcp_task_after,
        servers,
        // Taken in: the point of reading the file again.
        declared: _,
        policy,
        origin: _,
    } = next;
    let mut found = Vec::new();
    let mut differs = |changed: bool, key: &str| {
        if changed && !found.iter().any(|k| k == key) {
            found.push(key.to_owned());
        }
    };
    differs(
        others(running) != others(next),
        "[tools] active (other than the declared tools)",
    );
    differs(*execution != running.execution, "[tools] execution");
    differs(
        *max_concurrency != running.max_concurrency,
        "[tools] max_concurrency",
    );
    differs(*timeout != running.timeout, "[tools] timeout_secs");
    differs(*shapes != running.shapes, "[tools] shapes");
    differs(!same_settings(tools, &running.tools), "[tool.<name>]");
    differs(*allowed_roots != running.allowed_roots, "[paths]");
    differs(*pseudo_files != running.pseudo_files, "[paths]");
    differs(*guidelines != running.guidelines, "[prompt]");
    differs(*sandbox != running.sandbox, "[sandbox]");
    differs(*env != running.env, "[env]");
    differs(
        *mcp_max_message_bytes != running.mcp_max_message_bytes
            || *mcp_max_sessions != running.mcp_max_sessions
            || *mcp_end_idle_when_full != running.mcp_end_idle_when_full
            || *mcp_connections != running.mcp_connections
            || *mcp_trusted_proxies != running.mcp_trusted_proxies
            || *mcp_task_after != running.mcp_task_after,
        "[mcp]",
    );
    differs(*servers != running.servers, "[mcp.servers]");
    differs(*policy != running.policy, "[policy]");
    found
}

/// Whether two sets of `[tool.<name>]` settings (of registered tools) say the same: the
/// same tools, modes and keys. (The typed configuration is loaded from the keys.)
fn same_settings(
    a: &std::collections::BTreeMap<String, ToolSettings>,
    b: &std::collections::BTreeMap<String, ToolSettings>,
) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((name_a, a), (name_b, b))| {
            name_a == name_b && a.mode == b.mode && a.raw == b.raw
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Config {
        Config::parse(text, "test.toml", &[]).expect("a valid configuration")
    }

    const HELLO: &str =
        "[tool.hello]\ndescription = \"Say hello.\"\ncommand = [\"echo\", \"hello\"]\n";
    const BYE: &str = "[tool.bye]\ndescription = \"Say bye.\"\ncommand = [\"echo\", \"bye\"]\n";

    #[test]
    fn only_declared_tools_change_and_nothing_waits() {
        let running = config(&format!("[tools]\nactive = [\"hello\"]\n{HELLO}"));
        let next = config(&format!(
            "[tools]\nactive = [\"bye\", \"hello\"]\n{HELLO}{BYE}"
        ));
        let reread = reread(&running, &next);
        assert_eq!(reread.active, ["bye", "hello"]);
        assert!(reread.changes_tools(&running));
        assert!(reread.waiting.is_empty(), "{:?}", reread.waiting);
        let same = super::reread(&running, &running);
        assert!(!same.changes_tools(&running));
    }

    #[test]
    fn the_running_entries_of_other_tools_stay_in_place_of_the_new_ones() {
        // `other__*` stands for a mounted server's tools (checked when they are listed).
        let running = config(&format!(
            "[tools]\nactive = [\"a__*\", \"hello\", \"b__*\"]\n[mcp.servers.a]\ncommand = [\"x\"]\n[mcp.servers.b]\ncommand = [\"y\"]\n{HELLO}"
        ));
        let next = config(&format!(
            "[tools]\nactive = [\"bye\", \"b__*\"]\n[mcp.servers.b]\ncommand = [\"y\"]\n{BYE}"
        ));
        let reread = reread(&running, &next);
        assert_eq!(reread.active, ["bye", "a__*", "b__*"]);
        assert_eq!(
            reread.waiting,
            [
                "[tools] active (other than the declared tools)",
                "[mcp.servers]"
            ]
        );
    }

    #[test]
    fn every_other_section_waits_for_a_restart() {
        let running = config("");
        let next = config(
            "[tools]\nexecution = \"sequential\"\ntimeout_secs = 5\n[paths]\npseudo_files = true\n[prompt]\nguidelines = [\"x\"]\n[sandbox]\nmode = \"off\"\n[mcp]\nmax_sessions = 3\n[policy]\ndefault = \"deny\"\n",
        );
        assert_eq!(
            reread(&running, &next).waiting,
            [
                "[tools] execution",
                "[tools] timeout_secs",
                "[paths]",
                "[prompt]",
                "[sandbox]",
                "[mcp]",
                "[policy]"
            ]
        );
    }
}
