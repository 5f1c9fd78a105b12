//! The `[env]` section: which machine the tools work on, this one or another one over SSH.
//!
//! ```toml
//! [env]
//! kind = "ssh"                      # or "local" (the default)
//! host = "build-box"                # an alias of the ssh config, or user@host
//! port = 2222                       # optional: the config's or 22
//! identity_file = "~/.ssh/id_ed25519"   # optional: the key (`ssh -i`)
//! cwd = "/srv/project"              # the remote working directory, absolute
//! known_hosts = "strict"            # or "accept-new", "accept-any"
//! upload_helper = false             # the command line uploads itself (same OS/arch) unless false
//! login_shell = true                # commands get a login shell's PATH and variables (false: a plain SSH command's)
//! ssh_config = "deploy/ssh_config"  # optional: an ssh config file instead of ~/.ssh/config
//! connect_timeout_secs = 10         # optional
//! ```
//!
//! On the command line, `--ssh [user@]host[:port]/abs/path` names the host, port and working
//! directory instead (the section's other keys still apply).

use std::path::PathBuf;
use std::time::Duration;

use crate::env::remote::HostKeyPolicy;

/// How long connecting to a remote machine may take when the configuration does not say.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `[env]`: where the tools work.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EnvSettings {
    /// On this machine, in the process's working directory (or `--cwd`).
    #[default]
    Local,
    /// On another machine, over SSH.
    Ssh(SshSettings),
}

/// `[env] kind = "ssh"`: how to reach the remote machine and where to work there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshSettings {
    /// `[user@]host`; host may be an alias of the ssh config file.
    pub host: String,
    /// The port, when not the ssh config's (or 22).
    pub port: Option<u16>,
    /// The private key (`ssh -i`), when not the ssh config's or the agent's.
    pub identity_file: Option<PathBuf>,
    /// The remote working directory (absolute).
    pub cwd: PathBuf,
    /// How the remote host's key is checked.
    pub known_hosts: HostKeyPolicy,
    /// Upload this pi-tools binary to serve commands, grep and find on the remote machine
    /// when it has no pi-tools of the same version (same OS and architecture only).
    /// `None` (no `upload_helper` key) leaves it to the front: the pi-tools command line
    /// uploads (its binary serves `env-server`), `target()` does not (a program of one's
    /// own may not be a pi-tools command line the remote side can run).
    pub upload_helper: Option<bool>,
    /// Start the remote pi-tools process (which runs every command) under the remote user's
    /// login shell, so commands see the `PATH` and variables a login shell gives (bash:
    /// `/etc/profile` and `~/.profile`), captured once when it starts (default `true`).
    /// `false`: the plain SSH command environment instead (bash: `~/.bashrc`, not
    /// `~/.profile`), as `SshTarget::login_shell`.
    pub login_shell: bool,
    /// An ssh config file to use instead of `~/.ssh/config` (`ssh -F`).
    pub ssh_config: Option<PathBuf>,
    /// How long connecting may take.
    pub connect_timeout: Duration,
}

impl SshSettings {
    /// Settings for `host` and the remote directory `cwd`, the rest at their defaults.
    pub fn new(host: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        SshSettings {
            host: host.into(),
            port: None,
            identity_file: None,
            cwd: cwd.into(),
            known_hosts: HostKeyPolicy::Strict,
            upload_helper: None,
            login_shell: true,
            ssh_config: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// Applies a `--ssh [user@]host[:port]/abs/path` spec: its host, port and directory
    /// replace these settings' (the port is cleared when the spec has none).
    pub fn with_spec(mut self, spec: &str) -> Result<Self, String> {
        let (host, port, cwd) = parse_spec(spec)?;
        self.host = host;
        self.port = port;
        self.cwd = cwd;
        Ok(self)
    }

    /// The `[env]` settings a `--ssh` spec amounts to: its host, port and directory, with
    /// the other keys from `base` when it is an SSH section (else their defaults).
    pub fn from_spec(spec: &str, base: &EnvSettings) -> Result<Self, String> {
        let base = match base {
            EnvSettings::Ssh(settings) => settings.clone(),
            EnvSettings::Local => SshSettings::new("", "/"),
        };
        base.with_spec(spec)
    }
}

#[cfg(feature = "ssh")]
impl SshSettings {
    /// The [`SshTarget`](crate::env::remote::SshTarget) these settings describe. Without an
    /// `upload_helper` key it uploads nothing, as [`SshTarget::new`](crate::env::remote::SshTarget::new):
    /// the binary uploaded is this process's own, which must be a pi-tools command line
    /// (`cli::main`) to serve there. A program that is one may set
    /// `target.upload_helper = settings.upload_helper.unwrap_or(true)`, as `pi-tools` does.
    pub fn target(&self) -> crate::env::remote::SshTarget {
        let mut target = crate::env::remote::SshTarget::new(self.host.clone());
        target.port = self.port;
        target.identity_file = self.identity_file.clone();
        target.config_file = self.ssh_config.clone();
        target.host_key_policy = self.known_hosts;
        target.connect_timeout = self.connect_timeout;
        target.upload_helper = self.upload_helper.unwrap_or(false);
        target.login_shell = self.login_shell;
        target
    }
}

/// The expected form of `--ssh`, for messages.
const SPEC_FORM: &str = "[user@]host[:port]/absolute/path, e.g. me@build-box:2222/srv/project";

/// Splits `[user@]host[:port]/abs/path` (the host may be `[v6-address]`).
fn parse_spec(spec: &str) -> Result<(String, Option<u16>, PathBuf), String> {
    let bad = |why: &str| format!("`--ssh {spec}` {why}; give {SPEC_FORM}");
    let (user, rest) = match spec.split_once('@') {
        Some((user, rest)) if !user.is_empty() && !user.contains('/') => (Some(user), rest),
        Some(("", _)) => return Err(bad("has an empty user name")),
        _ => (None, spec),
    };
    let (host, after) = if let Some(v6) = rest.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("opens `[` for an IPv6 address but does not close it"))?;
        (host, after)
    } else {
        let end = rest.find([':', '/']).unwrap_or(rest.len());
        rest.split_at(end)
    };
    if host.is_empty() {
        return Err(bad("names no host"));
    }
    let (port, path) = match after.strip_prefix(':') {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            let (port, path) = after.split_at(end);
            let port =
                port.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| {
                    bad(&format!("has `{port}` where a port number (1-65535) goes"))
                })?;
            (Some(port), path)
        }
        None => (None, after),
    };
    if !path.starts_with('/') {
        return Err(bad("names no absolute remote directory after the host"));
    }
    let destination = match user {
        Some(user) => format!("{user}@{host}"),
        None => host.to_owned(),
    };
    Ok((destination, port, PathBuf::from(path)))
}

#[cfg(test)]
mod tests {
    use super::parse_spec;
    use std::path::PathBuf;

    #[test]
    fn a_spec_splits_into_destination_port_and_directory() {
        assert_eq!(
            parse_spec("me@box:2222/srv/p"),
            Ok(("me@box".into(), Some(2222), PathBuf::from("/srv/p")))
        );
        assert_eq!(
            parse_spec("box/"),
            Ok(("box".into(), None, PathBuf::from("/")))
        );
        assert_eq!(
            parse_spec("[::1]:22/x"),
            Ok(("::1".into(), Some(22), PathBuf::from("/x")))
        );
        for bad in [
            "box", "box:22", "box:x/p", "@box/p", "/p", "box:0/p", "[::1/p",
        ] {
            let err = parse_spec(bad).expect_err(bad);
            assert!(err.contains("[user@]host[:port]/absolute/path"), "{err}");
        }
    }
}
