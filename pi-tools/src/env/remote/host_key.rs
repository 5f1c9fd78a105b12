//! [`HostKeyPolicy`]: how strictly an environment on another machine checks that machine's
//! host key. It lives outside the `ssh` feature so the configuration can name it in any
//! build.

use std::str::FromStr;

/// How strictly the remote host's key is checked against `known_hosts` (OpenSSH's
/// `StrictHostKeyChecking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostKeyPolicy {
    /// The key must already be in `known_hosts` (`StrictHostKeyChecking=yes`; the default).
    #[default]
    Strict,
    /// An unknown host's key is added to `known_hosts`; a changed key is still refused
    /// (`StrictHostKeyChecking=accept-new`).
    AcceptNew,
    /// Any key is accepted and added, a changed one too (`StrictHostKeyChecking=no`): no
    /// protection against an impostor, for throwaway machines only.
    AcceptAny,
}

impl HostKeyPolicy {
    /// The names the configuration uses, in the order of the variants.
    pub const NAMES: [&'static str; 3] = ["strict", "accept-new", "accept-any"];

    /// The configuration's name of the policy.
    pub fn as_str(self) -> &'static str {
        match self {
            HostKeyPolicy::Strict => "strict",
            HostKeyPolicy::AcceptNew => "accept-new",
            HostKeyPolicy::AcceptAny => "accept-any",
        }
    }
}

impl FromStr for HostKeyPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "strict" => Ok(HostKeyPolicy::Strict),
            "accept-new" => Ok(HostKeyPolicy::AcceptNew),
            "accept-any" => Ok(HostKeyPolicy::AcceptAny),
            other => Err(format!(
                "`{other}` is not a host key policy; use \"strict\", \"accept-new\" or \"accept-any\""
            )),
        }
    }
}
