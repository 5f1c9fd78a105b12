//! `pi-tools.toml`: which tools are active, how batches run, per-tool settings, path
//! confinement, the prompt's closing guidelines, and the machine the tools work on.
//!
//! ```toml
//! [tools]
//! active = ["read", "bash", "grep"]           # in prompt order (default: the embedded file's)
//! execution = "parallel"                       # or "sequential"
//! max_concurrency = 16                         # optional
//! timeout_secs = 180                           # per call; 0 = none
//! shapes = "native"                            # each provider family's trained tools
//!                                              # (default "pi-tools"; see dialect::native)
//! # or per family, by dialect (a family left out keeps "pi-tools"):
//! # shapes = { anthropic = "native", openai-responses = "pi-tools" }
//!
//! [tool.bash]
//! mode = "sequential"                          # override the tool's execution mode
//! timeout_secs = 60                            # keys of the tool's own config type
//!
//! [paths]
//! allowed_roots = ["."]                        # optional confinement roots
//! pseudo_files = false                         # true: read files on procfs, sysfs, ...
//!
//! [prompt]
//! guidelines = ["Be concise."]                 # closing guidelines
//!
//! [sandbox]
//! mode = "workspace-write"                     # or "read-only", "off"
//! network = true
//!
//! [env]
//! kind = "ssh"                                 # or "local" (the default)
//! host = "me@build-box"                        # an ssh config alias or user@host
//! cwd = "/srv/project"                         # the remote working directory
//!
//! [mcp]
//! max_message_bytes = 16777216                 # the largest MCP message, stdio and HTTP
//! max_sessions = 4096                          # HTTP sessions kept (at most what `ulimit -n` holds)
//! when_full = "refuse"                         # a new session past it: refused, or "end_idle"
//! task_after_ms = 10000                        # a 2026-07-28 call declaring tasks past this: a task
//! [mcp.servers.everything]                     # another MCP server's tools, as everything__<tool>
//! command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
//! ```
//!
//! Loading validates everything against the registered tools: unknown tool names get a
//! did-you-mean, unknown keys and wrong types are errors, and each error carries
//! `file:line:column` and says how to fix it.
//!
//! `model.rs` is what a loaded configuration says; `load.rs` turns TOML text into it, checking
//! every key against the registered tools; `error.rs` is how problems point back into the file;
//! [`reread`] is what a running server takes from the file loaded again.

mod discover;
mod env;
mod error;
mod load;
mod local_env;
mod model;
pub mod reread;
mod sandbox;
mod servers;
pub mod trust;

/// Declared tools' model, from its home in [`crate::declared::spec`] (the old path, kept).
pub use crate::declared::spec as declared;
pub use crate::declared::spec::DeclaredTool;
pub use discover::{CONFIG_ENV, CONFIG_FILE_NAME, ConfigSource};

/// The naming rules, from their home in [`crate::tool::names`].
pub use crate::tool::names::{
    MAX_TOOL_NAME, MOUNT_SEPARATOR, glob_match, is_glob, tool_name_problem,
};
pub use env::{DEFAULT_CONNECT_TIMEOUT, EnvSettings, SshSettings};
pub use error::{ConfigError, ConfigProblem};
pub use model::{Config, DEFAULT_MAX_MESSAGE_BYTES, McpConnections, ToolSettings};
pub use sandbox::SandboxSettings;
pub use servers::{DEFAULT_STARTUP_TIMEOUT, ServerSettings, ServerTransport};

/// The embedded default configuration, used when no file is given.
pub const DEFAULT_TOML: &str = include_str!("default-config.toml");

/// Where the embedded default says it comes from in error messages.
pub const DEFAULT_ORIGIN: &str = "<embedded default pi-tools.toml>";

/// The per-call timeout when `[tools] timeout_secs` is absent.
pub const DEFAULT_TIMEOUT_SECS: u64 = 180;
