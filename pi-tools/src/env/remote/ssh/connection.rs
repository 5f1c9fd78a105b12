//! One SSH connection of an [`SshEnv`](super::SshEnv): an OpenSSH master connection (the
//! user's `ssh` with its config, agent and known_hosts) multiplexing every command of a
//! session, and one SFTP channel over it for the file operations.
//!
//! A connection that drops is noticed by the call that was using it; that call fails with a
//! clear error, and the next call connects afresh.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use openssh::Session;
use openssh_sftp_client::{Sftp, SftpOptions};

use super::master::Master;
use super::watchdog::Watchdog;
use crate::env::remote::HostKeyPolicy;

/// Where and how to connect: what `ssh` would be given on its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// `[user@]host`, where host may be an alias of the ssh config file.
    pub destination: String,
    /// The port, when not the config's or 22.
    pub port: Option<u16>,
    /// A private key file (`ssh -i`).
    pub identity_file: Option<PathBuf>,
    /// An ssh config file to use instead of `~/.ssh/config` (`ssh -F`).
    pub config_file: Option<PathBuf>,
    /// A known_hosts file to use instead of the user's.
    pub known_hosts_file: Option<PathBuf>,
    /// Host key checking.
    pub host_key_policy: HostKeyPolicy,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// Upload this process's binary (or [`helper_binary`](Self::helper_binary)) to serve
    /// commands, grep and find on the remote machine (one long-lived process) when it has no
    /// pi-tools of the same version (same OS and architecture only).
    pub upload_helper: bool,
    /// The local pi-tools binary to upload as the helper (default: this process's own).
    pub helper_binary: Option<PathBuf>,
    /// Start the remote pi-tools process under the remote user's login shell (default
    /// `true`), so every command it runs sees the `PATH` and variables a login shell gives
    /// (bash: `/etc/profile` and `~/.profile`, or `~/.bash_profile`), captured once when it
    /// starts. `false`: the environment of a plain SSH command instead (bash: `~/.bashrc`,
    /// not `~/.profile`). Commands run without the remote process (each in an SSH session of
    /// its own) always get the plain SSH command environment.
    pub login_shell: bool,
}

impl SshTarget {
    /// A target with the defaults: strict host key checking, a 10 s connect timeout, the
    /// user's own ssh configuration, and the remote process under a login shell.
    pub fn new(destination: impl Into<String>) -> Self {
        SshTarget {
            destination: destination.into(),
            port: None,
            identity_file: None,
            config_file: None,
            known_hosts_file: None,
            host_key_policy: HostKeyPolicy::Strict,
            connect_timeout: Duration::from_secs(10),
            upload_helper: false,
            helper_binary: None,
            login_shell: true,
        }
    }

    /// Parses `[user@]host[:port]`.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("the SSH destination is empty; give [user@]host[:port]".into());
        }
        let (dest, port) = match spec.rsplit_once(':') {
            Some((dest, port)) if !dest.contains(':') => {
                let port = port.parse::<u16>().map_err(|_| {
                    format!("`{port}` is not a port number in `{spec}`; give [user@]host[:port]")
                })?;
                (dest, Some(port))
            }
            _ => (spec, None),
        };
        let mut target = SshTarget::new(dest);
        target.port = port;
        Ok(target)
    }

    /// The host part, for messages.
    pub fn host(&self) -> &str {
        self.destination
            .rsplit_once('@')
            .map_or(self.destination.as_str(), |(_, h)| h)
    }

    /// Connects: the master connection, then the SFTP channel over it.
    pub(super) async fn connect(&self) -> io::Result<Connection> {
        let master = Master::start(self)
            .await
            .map_err(|e| self.connect_error(&e.0))?;
        let session = Arc::new(master.session());
        let sftp = Sftp::from_clonable_session(Arc::clone(&session), SftpOptions::new())
            .await
            .map_err(|e| {
                io::Error::other(format!(
                    "connected to {} but could not start its SFTP subsystem: {e}; check that \
                     the server's sshd_config has a `Subsystem sftp` line",
                    self.host()
                ))
            })?;
        Ok(Connection {
            sftp,
            session,
            watchdog: Watchdog::default(),
            _master: master,
        })
    }

    /// The error for a master that could not connect, from what ssh said.
    fn connect_error(&self, said: &str) -> io::Error {
        let all = said;
        let host = self.host();
        let (kind, advice) = if all.contains("Host key verification failed") {
            (
                io::ErrorKind::PermissionDenied,
                format!(
                    "the host key of {host} is not in known_hosts (or has changed); connect once \
                     with `ssh {host}` to check and record it, or set [env] known_hosts = \
                     \"accept-new\" (SshTarget::host_key_policy) to record an unknown host's key"
                ),
            )
        } else if all.contains("Permission denied") {
            (
                io::ErrorKind::PermissionDenied,
                format!(
                    "authentication to {host} failed; set [env] identity_file (or the ssh \
                     config's IdentityFile, or load the key into ssh-agent) and check that its \
                     public key is in the remote authorized_keys"
                ),
            )
        } else if all.contains("timed out")
            || all.contains("Connection refused")
            || all.contains("No route")
            || all.contains("Could not resolve")
        {
            (
                io::ErrorKind::ConnectionRefused,
                format!(
                    "{host} could not be reached; check the host and `port` (--ssh, [env] or \
                     the ssh config) and that sshd runs there"
                ),
            )
        } else {
            (
                io::ErrorKind::Other,
                format!(
                    "could not connect to {host}; check `host`, `port` and `identity_file` \
                     ([env], --ssh or the ssh config)"
                ),
            )
        };
        io::Error::new(kind, format!("{advice} (ssh said: {})", all.trim()))
    }
}

/// A live connection. The fields drop in order: the SFTP channel and the session first, the
/// master (which ends the connection) last.
#[derive(Debug)]
pub(super) struct Connection {
    pub(super) sftp: Sftp,
    pub(super) session: Arc<Session>,
    /// Kills, on the remote side, what commands run without the remote server left when the
    /// connection ends.
    pub(super) watchdog: Watchdog,
    /// Held for its drop, which ends the connection.
    _master: Master,
}
