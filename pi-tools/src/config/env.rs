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

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::load::{Loader, integer};
use crate::env::HostKeyPolicy;

const ENV_KEYS: [&str; 10] = [
    "kind",
    "host",
    "port",
    "identity_file",
    "cwd",
    "known_hosts",
    "upload_helper",
    "login_shell",
    "ssh_config",
    "connect_timeout_secs",
];

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
    /// The [`SshTarget`](crate::env::SshTarget) these settings describe. Without an
    /// `upload_helper` key it uploads nothing, as [`SshTarget::new`](crate::env::SshTarget::new):
    /// the binary uploaded is this process's own, which must be a pi-tools command line
    /// (`cli::main`) to serve there. A program that is one may set
    /// `target.upload_helper = settings.upload_helper.unwrap_or(true)`, as `pi-tools` does.
    pub fn target(&self) -> crate::env::SshTarget {
        let mut target = crate::env::SshTarget::new(self.host.clone());
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

impl<'a> Loader<'a> {
    pub(super) fn env_section(
        &mut self,
        table: &DeTable<'a>,
        header: std::ops::Range<usize>,
    ) -> EnvSettings {
        let mut kind = None;
        let mut kind_given = false;
        let mut settings = SshSettings::new("", "");
        // Whether `host` and `cwd` are there (a wrong one is reported as such, not as missing).
        let mut host = false;
        let mut cwd = false;
        // Keys that only mean something for SSH, with where they are, for `kind = "local"`.
        let mut remote_only = Vec::new();
        for (key, value) in table {
            let name = key.get_ref().as_ref();
            host |= name == "host";
            cwd |= name == "cwd";
            if name == "kind" {
                kind_given = true;
                match value.get_ref().as_str() {
                    Some("local") => kind = Some(false),
                    Some("ssh") => kind = Some(true),
                    _ => self.report(value.span(), "`kind` must be \"local\" or \"ssh\""),
                }
            } else {
                if ENV_KEYS.contains(&name) {
                    remote_only.push((name.to_owned(), key.span()));
                }
                self.ssh_setting(key, value, &mut settings);
            }
        }
        match kind {
            Some(true) => {
                if !host {
                    self.report(
                        header.clone(),
                        "[env] kind = \"ssh\" needs `host`: an ssh config alias or user@host, e.g. host = \"me@build-box\"",
                    );
                }
                if !cwd {
                    self.report(
                        header,
                        "[env] kind = \"ssh\" needs `cwd`: the absolute remote working directory, e.g. cwd = \"/srv/project\"",
                    );
                }
                EnvSettings::Ssh(settings)
            }
            Some(false) | None => {
                // Without `kind` the section is local; SSH keys there would be ignored. (A
                // `kind` already reported as wrong does not get these reports too.)
                let reported = kind_given && kind.is_none();
                for (name, span) in remote_only.into_iter().filter(|_| !reported) {
                    self.report(
                        span,
                        format!(
                            "`{name}` only applies to an SSH environment; add kind = \"ssh\" to [env], or remove `{name}`"
                        ),
                    );
                }
                EnvSettings::Local
            }
        }
    }

    /// Reads the SSH setting `key` of [env] (any key but `kind`) into `settings`, reporting
    /// a value it cannot take, or a key [env] does not have.
    fn ssh_setting(
        &mut self,
        key: &Spanned<std::borrow::Cow<'a, str>>,
        value: &Spanned<DeValue<'a>>,
        settings: &mut SshSettings,
    ) {
        match key.get_ref().as_ref() {
            "host" => match value.get_ref().as_str().map(str::trim) {
                Some(h) if !h.is_empty() && !h.contains(char::is_whitespace) => {
                    settings.host = h.to_owned();
                }
                _ => self.report(
                    value.span(),
                    "`host` must be an ssh config alias or user@host in quotes, e.g. \"me@build-box\"",
                ),
            },
            "port" => match integer(value).and_then(|n| u16::try_from(n).ok()) {
                Some(p) if p > 0 => settings.port = Some(p),
                _ => self.report(
                    value.span(),
                    "`port` must be a port number from 1 to 65535; remove it for the ssh config's (or 22)",
                ),
            },
            "identity_file" => {
                if let Some(path) = self.path(value, "identity_file", "the private key file") {
                    settings.identity_file = Some(path);
                }
            }
            "ssh_config" => {
                if let Some(path) = self.path(value, "ssh_config", "an ssh config file") {
                    settings.ssh_config = Some(path);
                }
            }
            "cwd" => {
                if let Some(path) = self.path(value, "cwd", "the remote working directory") {
                    if path.is_absolute() {
                        settings.cwd = path;
                    } else {
                        self.report(
                            value.span(),
                            format!(
                                "`cwd` must be an absolute path on the remote machine, and `{}` is relative; write it from the root, e.g. \"/home/me/project\"",
                                path.display()
                            ),
                        );
                    }
                }
            }
            "known_hosts" => match value.get_ref().as_str().map(str::parse::<HostKeyPolicy>) {
                Some(Ok(policy)) => settings.known_hosts = policy,
                _ => self.report(
                    value.span(),
                    format!(
                        "`known_hosts` must be one of {}: \"strict\" needs the host's key in known_hosts already, \"accept-new\" records an unknown host's key, \"accept-any\" checks nothing",
                        HostKeyPolicy::NAMES.map(|n| format!("\"{n}\"")).join(", ")
                    ),
                ),
            },
            "upload_helper" => {
                if let Some(upload) = self.boolean(value, "upload_helper") {
                    settings.upload_helper = Some(upload);
                }
            }
            "login_shell" => match value.get_ref() {
                DeValue::Boolean(b) => settings.login_shell = *b,
                _ => self.report(
                    value.span(),
                    "`login_shell` must be true or false (without quotes): true gives commands a login shell's environment, false a plain SSH command's",
                ),
            },
            "connect_timeout_secs" => {
                if let Some(secs) = self.seconds(value, "connect_timeout_secs") {
                    settings.connect_timeout = secs;
                }
            }
                other => self.unknown_key(key.span(), other, "[env]", &ENV_KEYS),
        }
    }

    /// A non-empty path string.
    fn path(
        &mut self,
        value: &toml::Spanned<DeValue<'a>>,
        key: &str,
        what: &str,
    ) -> Option<PathBuf> {
        match value.get_ref().as_str() {
            Some(s) if !s.trim().is_empty() => Some(PathBuf::from(s)),
            _ => {
                self.report(
                    value.span(),
                    format!("`{key}` must be {what}, as a path in quotes"),
                );
                None
            }
        }
    }
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
