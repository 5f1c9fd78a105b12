//! The sentence that tells the model what the sandbox allows: where commands and file edits
//! may write, and whether commands reach the network. It is made from the policy an
//! environment enforces, never from a configuration alone, so a description cannot promise
//! a sandbox that is not there.

use std::path::{Path, PathBuf};

use crate::git::GitAccess;
use crate::policy::{Sandbox, SandboxMode, SandboxPolicy};
use crate::protected::DEFAULT_PROTECTED;

impl SandboxPolicy {
    /// Where commands may write and whether the network is on, as one sentence for the
    /// model (`None` when the policy is off with the network on: nothing to tell).
    ///
    /// ```
    /// use pi_tools_sandbox::{SandboxMode, SandboxPolicy};
    /// let policy = SandboxPolicy::new(SandboxMode::ReadOnly).with_network(false);
    /// assert_eq!(
    ///     policy.describe().as_deref(),
    ///     Some("Commands run in a read-only sandbox: they cannot change any file; network access is off (sockets fail with \"Operation not permitted\").")
    /// );
    /// assert_eq!(SandboxPolicy::off().describe(), None);
    /// ```
    pub fn describe(&self) -> Option<String> {
        let writes = match self.mode {
            SandboxMode::Off if self.network => return None,
            SandboxMode::Off => "Commands may write anywhere".to_owned(),
            SandboxMode::ReadOnly => {
                "Commands run in a read-only sandbox: they cannot change any file".to_owned()
            }
            SandboxMode::WorkspaceWrite => self.workspace_writes(),
        };
        let network = if self.network {
            "network access is on"
        } else {
            "network access is off (sockets fail with \"Operation not permitted\")"
        };
        Some(format!("{writes}; {network}."))
    }

    /// The first half of the sentence in workspace-write mode: the roots, the protected
    /// paths worth naming, and what `.git` allows.
    fn workspace_writes(&self) -> String {
        let roots = match &self.writable_roots {
            None => "the working directory".to_owned(),
            Some(roots) => roots
                .iter()
                .map(|r| match r.to_str() {
                    Some(".") => "the working directory".to_owned(),
                    _ => r.display().to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        // With .git read-only as a whole, its parts need no mention.
        let shown: Vec<String> = self
            .protected
            .iter()
            .filter(|p| self.git == GitAccess::Commit || !p.starts_with(".git"))
            // The defaults beyond git's go unnamed (a long list in every prompt); a write
            // there is refused with a sentence that says why.
            // Absolute entries (the configuration file, the trust records) are the
            // program's own business.
            .filter(|p| p.is_relative())
            .filter(|p| {
                p.starts_with(".git")
                    || !DEFAULT_PROTECTED
                        .iter()
                        .any(|d| p.as_path() == Path::new(d))
            })
            .map(|p: &PathBuf| p.display().to_string())
            .collect();
        let protected = if shown.is_empty() {
            String::new()
        } else {
            format!(" ({} stay read-only)", shown.join(", "))
        };
        let git = match self.git {
            GitAccess::ReadOnly => {
                "; .git is read-only, so git can read the repository but not commit"
            }
            GitAccess::Commit => "",
        };
        let tmp = if self.private_tmp {
            " and in $TMPDIR"
        } else {
            ""
        };
        format!(
            "Commands and file edits may write only in {roots}{protected}{tmp}; writes elsewhere fail with \"Permission denied\"{git}"
        )
    }
}

impl Sandbox {
    /// The sentence [`SandboxPolicy::describe`] gave for the policy this sandbox enforces.
    pub fn describe(&self) -> Option<&str> {
        self.note.as_deref()
    }
}
