//! The remote search helper: grep and find run on the remote machine itself, by the
//! `pi-tools call` of a pi-tools binary of the same version there, so a search over a large
//! remote tree streams back only its result instead of walking the tree over SFTP.
//!
//! The helper is the remote `pi-tools` on `PATH` when its version is ours; otherwise, when
//! [`SshTarget::upload_helper`] is set and the remote runs the same OS and architecture,
//! this process's own binary (or [`SshTarget::helper_binary`]) uploaded once to
//! `~/.cache/pi-tools/pi-tools-<version>-<size>-<mtime>`.

use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::exec::quote;
use super::{SshEnv, SshTarget};
use crate::core::ToolResultMessage;
use crate::env::{ExecRequest, ExecutionEnv};

/// The tools the helper runs.
pub(super) const TOOLS: [&str; 2] = ["grep", "find"];

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs `command` on the remote machine and returns its output (at most `limit` bytes) and
/// exit code.
async fn capture(
    env: &SshEnv,
    command: String,
    cancel: CancellationToken,
    limit: usize,
) -> io::Result<(String, Option<i32>)> {
    let out = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&out);
    let outcome = env
        .exec(
            ExecRequest {
                command,
                cwd: env.cwd.clone(),
                timeout: None,
                env: Vec::new(),
            },
            cancel,
            Box::new(move |chunk| {
                let mut out = sink.lock().unwrap_or_else(|e| e.into_inner());
                if out.len() < limit {
                    out.extend_from_slice(chunk);
                }
            }),
        )
        .await?;
    let bytes = std::mem::take(&mut *out.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((
        String::from_utf8_lossy(&bytes).into_owned(),
        outcome.exit_code,
    ))
}

/// `uname -sm` as this build would print it, for comparing with the remote's.
fn local_platform() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "freebsd" => "FreeBSD",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "aarch64" if os == "Darwin" => "arm64",
        other => other,
    };
    format!("{os} {arch}")
}

impl SshEnv {
    /// The remote path of a usable helper, found (or uploaded) on first use.
    pub(super) async fn helper(&self) -> Option<String> {
        let found = self
            .helper
            .get_or_init(|| async { self.find_helper().await.ok().flatten() })
            .await;
        found.clone()
    }

    async fn find_helper(&self) -> io::Result<Option<String>> {
        let probe = "p=$(command -v pi-tools 2>/dev/null) && printf 'path %s\\nversion %s\\n' \"$p\" \"$(\"$p\" --version 2>/dev/null)\"; printf 'platform %s\\n' \"$(uname -sm)\"; printf 'home %s\\n' \"$HOME\"".to_string();
        let (out, _) = capture(self, probe, CancellationToken::new(), 64 * 1024).await?;
        let field = |name: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
        };
        if let (Some(path), Some(version)) = (field("path "), field("version "))
            && version == format!("pi-tools {VERSION}")
        {
            return Ok(Some(path));
        }
        if !self.target.upload_helper {
            return Ok(None);
        }
        if field("platform ").as_deref() != Some(local_platform().as_str()) {
            return Ok(None);
        }
        let Some(home) = field("home ").filter(|h| h.starts_with('/')) else {
            return Ok(None);
        };
        let local = match &self.target.helper_binary {
            Some(path) => path.clone(),
            None => std::env::current_exe()?,
        };
        // Named by the build as well as the version, so a rebuilt binary is uploaded afresh.
        let meta = tokio::fs::metadata(&local).await?;
        let built = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let remote_dir = PathBuf::from(home).join(".cache/pi-tools");
        let remote = remote_dir.join(format!("pi-tools-{VERSION}-{:x}-{built:x}", meta.len()));
        let remote_text = remote.to_string_lossy().into_owned();
        let check = format!("{} --version 2>/dev/null", quote(&remote_text));
        if let Ok((out, Some(0))) = capture(self, check, CancellationToken::new(), 4096).await
            && out.trim() == format!("pi-tools {VERSION}")
        {
            return Ok(Some(remote_text));
        }
        let bytes = tokio::fs::read(&local).await?;
        let conn = self.connection().await?;
        super::files::create_dir_all(&conn.sftp, &remote_dir).await?;
        super::files::atomic_write(&conn.sftp, &remote, &bytes, false).await?;
        let chmod = format!(
            "chmod 755 {} && {} --version",
            quote(&remote_text),
            quote(&remote_text)
        );
        let (out, code) = capture(self, chmod, CancellationToken::new(), 4096).await?;
        Ok((code == Some(0) && out.trim() == format!("pi-tools {VERSION}")).then_some(remote_text))
    }

    /// Runs `tool` (one of [`TOOLS`]) through the helper; `None` when there is no helper.
    pub(super) async fn run_with_helper(
        &self,
        tool: &str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Option<io::Result<ToolResultMessage>> {
        let helper = self.helper().await?;
        let command = format!(
            "{} call {} --cwd {} --args {}",
            quote(&helper),
            quote(tool),
            quote(&self.cwd.to_string_lossy()),
            quote(&arguments.to_string())
        );
        Some(
            async {
                let (out, _) = capture(self, command, cancel, 64 << 20).await?;
                let line = out
                    .lines()
                    .rev()
                    .find(|l| l.starts_with('{'))
                    .ok_or_else(|| {
                        io::Error::other(format!(
                            "the remote pi-tools helper gave no result (it printed: {})",
                            out.trim()
                        ))
                    })?;
                serde_json::from_str::<ToolResultMessage>(line).map_err(|e| {
                    io::Error::other(format!(
                        "the remote pi-tools helper gave an unreadable result: {e}"
                    ))
                })
            }
            .await,
        )
    }
}

impl SshTarget {
    /// Whether a helper may be uploaded (see the module docs).
    pub fn with_upload_helper(mut self, binary: Option<PathBuf>) -> Self {
        self.upload_helper = true;
        self.helper_binary = binary;
        self
    }
}
