//! Starting the remote `pi-tools env-server` that serves an [`SshEnv`]'s commands (see
//! `served.rs`), in one SSH session that also finds it: the remote `pi-tools` on `PATH`
//! when its version is ours; else one uploaded before to
//! `~/.cache/pi-tools/pi-tools-<version>-<size>-<mtime>`; else, when
//! [`SshTarget::upload_helper`] is set and the remote runs the same OS and architecture,
//! this process's own binary (or [`SshTarget::helper_binary`]) uploaded there now over SFTP
//! while the session waits. So the remote shell's startup files run once for all of it.
//!
//! Without any of them the session ends, and the environment runs each command in an SSH
//! session of its own (`exec.rs`).

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use openssh::{Session, Stdio};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::connection::Connection;
use super::served::Served;
use super::{SshEnv, SshTarget};
use crate::env::remote::link::{HELLO, SERVES};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How long the remote side may take to answer (its shell's startup files included),
/// besides an upload.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The start script: `$1` is the line `env-server --check` must print, `$2` the path of an uploaded
/// helper (may be empty; touched when used, for the cache's eviction), `$3` `1` when
/// uploading is allowed. It says `upload PLATFORM`
/// and reads the uploaded path from stdin, or says `none`, or execs the server (which
/// says hello). The server runs without `SSH_CLIENT`, so bash does not read `~/.bashrc`
/// again for each command (as locally).
///
/// It runs under the remote user's login shell by default ([`SshTarget::login_shell`]):
/// the session asks sshd for a shell instead of a command, so sshd starts that shell as a
/// login shell (`-bash`), which reads its login startup files (`/etc/profile`, then
/// `~/.bash_profile` or `~/.profile`; `~/.profile` sources `~/.bashrc` on Debian) once, and
/// then reads [`login_line`] from stdin and execs this script. Not `$SHELL -l -c` from an
/// SSH command: the command's shell has read `~/.bashrc` already (bash does for sshd), so a
/// `~/.profile` that sources it would run it twice. Without the login shell the script is
/// the session's command, as sshd runs it: `$SHELL -c`.
const START: &str = r#"v=$1 c=$2 h=
p=$(command -v pi-tools 2>/dev/null) && [ "$("$p" env-server --check 2>/dev/null)" = "$v" ] && h=$p
if [ -z "$h" ] && [ -n "$c" ] && [ -x "$c" ] && [ "$("$c" env-server --check 2>/dev/null)" = "$v" ]; then h=$c; touch -c "$c" 2>/dev/null; fi
if [ -z "$h" ] && [ "$3" = 1 ]; then
  printf '\036pi-tools-upload %s\n' "$(uname -sm)"
  IFS= read -r h || h=
  if [ -n "$h" ]; then chmod 755 "$h" && [ "$("$h" env-server --check 2>/dev/null)" = "$v" ] || h=; fi
fi
[ -n "$h" ] || { printf '\036pi-tools-none\n'; exit 0; }
unset SSH_CLIENT SSH2_CLIENT
exec "$h" env-server"#;

/// The one line the login shell reads from stdin: exec the start script under `sh` with its
/// arguments. Nothing else is written before the script speaks, so a shell that reads ahead
/// finds nothing of the protocol to swallow.
fn login_line(args: &[&str]) -> String {
    let mut line = format!("exec sh -c {} pi-tools", quote(START));
    for arg in args {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    line.push('\n');
    line
}

/// `text` as one word for a POSIX shell: in single quotes, each `'` as `'\''`.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// What the start script said.
enum Said {
    /// The server runs; what was read past its hello line.
    Hello(Vec<u8>),
    Upload(String),
    None,
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

/// Reads `output` until the script says something (whatever the shell's startup files
/// printed before is dropped).
async fn next_said(
    output: &mut (impl tokio::io::AsyncRead + Unpin),
    pending: &mut Vec<u8>,
) -> io::Result<Said> {
    const MARK: &[u8] = b"\x1epi-tools-";
    let mut buf = [0u8; 8192];
    loop {
        if let Some(at) = memchr::memmem::find(pending, MARK)
            && let Some(end) = memchr::memchr(b'\n', &pending[at..])
        {
            let line = pending[at..at + end + 1].to_vec();
            let rest = pending.split_off(at + end + 1);
            *pending = Vec::new();
            if line == HELLO {
                return Ok(Said::Hello(rest));
            }
            let text = String::from_utf8_lossy(&line[MARK.len()..line.len() - 1]).into_owned();
            if let Some(platform) = text.strip_prefix("upload ") {
                return Ok(Said::Upload(platform.to_owned()));
            }
            return Ok(Said::None);
        }
        let n = output.read(&mut buf).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the remote start script ended without a word",
            ));
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

impl SshEnv {
    /// The uploaded helper's remote path, named by the build as well as the version so a
    /// rebuilt binary is uploaded afresh; with the local file to upload.
    async fn upload_paths(&self) -> io::Result<Option<(PathBuf, PathBuf)>> {
        let Some(home) = self.home.as_ref().filter(|h| h.is_absolute()) else {
            return Ok(None);
        };
        let local = match &self.target.helper_binary {
            Some(path) => path.clone(),
            None => std::env::current_exe()?,
        };
        let meta = tokio::fs::metadata(&local).await?;
        let built = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let remote = home
            .join(".cache/pi-tools")
            .join(format!("pi-tools-{VERSION}-{:x}-{built:x}", meta.len()));
        Ok(Some((local, remote)))
    }

    /// Starts the remote server on `conn`: `Ok(None)` when the remote has no pi-tools of our
    /// version and none may be uploaded.
    pub(super) async fn start_served(&self, conn: &Arc<Connection>) -> io::Result<Option<Served>> {
        let paths = if self.target.upload_helper {
            self.upload_paths().await.ok().flatten()
        } else {
            None
        };
        let cached = paths
            .as_ref()
            .map(|(_, remote)| remote.to_string_lossy().into_owned())
            .unwrap_or_default();
        let upload = if self.target.upload_helper { "1" } else { "0" };
        let session = Arc::clone(&conn.session);
        let mut command = if self.target.login_shell {
            // An empty command: ssh asks for the user's shell, which sshd starts as a login
            // shell.
            Session::to_raw_command(session, "")
        } else {
            let mut command = Session::to_command(session, "sh");
            command
                .arg("-c")
                .arg(START)
                .arg("pi-tools")
                .arg(SERVES)
                .arg(&cached)
                .arg(upload);
            command
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .await
            .map_err(|e| {
                io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!("could not start pi-tools on {}: {e}", self.target.host()),
                )
            })?;
        let mut stdin = child.stdin().take().expect("stdin is piped");
        if self.target.login_shell {
            stdin
                .write_all(login_line(&[SERVES, &cached, upload]).as_bytes())
                .await?;
            stdin.flush().await?;
        }
        let mut stdout = child.stdout().take().expect("stdout is piped");
        let mut pending = Vec::new();
        let timed = |what| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} did not {what} within {START_TIMEOUT:?}",
                    self.target.host()
                ),
            )
        };
        let mut said = tokio::time::timeout(START_TIMEOUT, next_said(&mut stdout, &mut pending))
            .await
            .map_err(|_| timed("answer"))??;
        if let Said::Upload(platform) = &said {
            let path = match &paths {
                Some((local, remote)) if *platform == local_platform() => {
                    // A cache the binary cannot be written to (a read-only or full home):
                    // the script then says `none`, and commands run without the helper for
                    // this environment, not after a failed upload each call. (A connection
                    // lost meanwhile fails below, where the script is answered.)
                    match self.upload(conn, local, remote).await {
                        Ok(()) => remote.to_string_lossy().into_owned(),
                        Err(_) => String::new(),
                    }
                }
                _ => String::new(),
            };
            stdin.write_all(format!("{path}\n").as_bytes()).await?;
            stdin.flush().await?;
            said = tokio::time::timeout(START_TIMEOUT, next_said(&mut stdout, &mut pending))
                .await
                .map_err(|_| timed("start pi-tools"))??;
        }
        match said {
            Said::Hello(rest) => Ok(Some(Served::start(
                self.target.host().to_owned(),
                stdin,
                std::io::Cursor::new(rest).chain(stdout),
                child,
            ))),
            Said::Upload(_) | Said::None => {
                let _ = child.disconnect().await;
                Ok(None)
            }
        }
    }

    async fn upload(
        &self,
        conn: &Arc<Connection>,
        local: &PathBuf,
        remote: &std::path::Path,
    ) -> io::Result<()> {
        let bytes = tokio::fs::read(local).await?;
        let Some(dir) = remote.parent() else {
            return Err(io::Error::other(
                "the helper's remote path has no directory",
            ));
        };
        super::files::create_dir_all(&conn.sftp, dir).await?;
        // Executable before it takes its name: a second process uploading the same build at
        // once (both found no helper) renames over this one, and the start script's check
        // of either must find a whole, executable file, never a fresh 0644 one.
        super::files::atomic_write(&conn.sftp, remote, &bytes, false, Some(0o755)).await?;
        if let Some(name) = remote.file_name().and_then(|n| n.to_str()) {
            // A cache that cannot be tidied still serves this session.
            let _ = super::helper_cache::evict(&conn.sftp, dir, name).await;
        }
        Ok(())
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
