//! `[mcp.servers.<name>]`: other MCP servers whose tools join the toolbox as
//! `<name>__<tool>`.
//!
//! ```toml
//! [mcp.servers.everything]
//! command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
//! env = { LOG_LEVEL = "warn" }        # added to the inherited environment
//! cwd = "."                           # where the process starts (default: the working directory)
//! startup_timeout_secs = 30           # starting plus the MCP handshake and tool listing
//! call_timeout_secs = 60              # per call (default: [tools] timeout_secs)
//! tools = ["echo", "get-*"]           # allow-list, globs allowed (default: every tool)
//! eager = false                       # start with the session rather than on first use
//! sandbox = true                      # run under [sandbox], as bash's commands do (false:
//!                                     # unconfined, which a found file needs trust for)
//! parallel = false                    # calls that are not read-only may run together
//!
//! [mcp.servers.remote]
//! url = "http://127.0.0.1:9000/mcp"   # a Streamable HTTP server instead of a command
//! token_file = "~/.config/remote.token"  # sent as `Authorization: Bearer <token>`
//! headers = { "X-Team" = "tools" }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::tool::names::glob_match;

/// How long a server may take to start, answer the handshake and list its tools when its
/// entry does not say.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// One `[mcp.servers.<name>]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// The entry's name: the prefix of its tools' names.
    pub name: String,
    /// How to reach the server.
    pub transport: ServerTransport,
    /// Starting, the handshake and the tool listing together may take this long.
    pub startup_timeout: Duration,
    /// Per-call timeout of its tools (`None`: `[tools] timeout_secs`).
    pub call_timeout: Option<Duration>,
    /// Which of its tools join (globs allowed); `None`: all of them.
    pub tools: Option<Vec<String>>,
    /// Start with the session instead of on first use.
    pub eager: bool,
    /// Run the process under `[sandbox]`, as bash's commands are (default `true`).
    pub sandbox: bool,
    /// Tools that are not read-only may run beside each other (by default they run one at a
    /// time among this server's calls).
    pub parallel: bool,
    /// The names its tools take here (after `server__`), by the server's own name for them
    /// (`rename` in the entry). A tool not named here keeps its own name, each character
    /// providers refuse (such as `.` in `math.factorial`) replaced by `_`; calls always
    /// reach the server under its own name.
    pub rename: BTreeMap<String, String>,
}

/// Where a mounted server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTransport {
    /// A process started by pi-tools, speaking MCP on its standard input and output.
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
        /// Variables added to the inherited environment.
        env: BTreeMap<String, String>,
        /// Where it starts (relative: to the working directory); `None`: the working directory.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint's URL.
        url: String,
        /// A file whose first line is the bearer token.
        token_file: Option<PathBuf>,
        /// Extra request headers.
        headers: BTreeMap<String, String>,
    },
}

impl ServerSettings {
    /// Settings for a stdio server running `command`, the rest at their defaults.
    pub fn stdio(name: impl Into<String>, command: Vec<String>) -> Self {
        ServerSettings {
            name: name.into(),
            transport: ServerTransport::Stdio {
                command,
                env: BTreeMap::new(),
                cwd: None,
            },
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: None,
            tools: None,
            eager: false,
            sandbox: true,
            parallel: false,
            rename: BTreeMap::new(),
        }
    }

    /// Settings for a Streamable HTTP server at `url`, the rest at their defaults.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        ServerSettings {
            transport: ServerTransport::Http {
                url: url.into(),
                token_file: None,
                headers: BTreeMap::new(),
            },
            ..ServerSettings::stdio(name, Vec::new())
        }
    }

    /// The name the server's tool `remote` takes after `server__`: its `rename`, else its
    /// own name with each character providers refuse replaced by `_`.
    pub fn local_name(&self, remote: &str) -> String {
        self.rename
            .get(remote)
            .cloned()
            .unwrap_or_else(|| crate::tool::names::provider_safe(remote))
    }

    /// Whether the allow-list lets `tool` (the server's own name for it) join.
    pub fn allows(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|patterns| patterns.iter().any(|p| glob_match(p, tool)))
    }
}
