//! Reading `[env]` into [`EnvSettings`].

use std::path::PathBuf;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Loader, integer};
use crate::config::{EnvSettings, SshSettings};
use crate::env::remote::HostKeyPolicy;

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

impl<'a> Loader<'a> {
    pub(in crate::config) fn env_section(
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
