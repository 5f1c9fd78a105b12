//! Reading `[mcp]` and its `[mcp.servers.<name>]` entries into [`ServerSettings`], and the
//! check of `[tools] active` entries that name a server's tools.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::ops::Range;
use std::path::PathBuf;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::Loader;
use crate::config::{ServerSettings, ServerTransport};
use crate::tool::names::{MOUNT_SEPARATOR, mounted_name, tool_name_problem};

const SERVER_KEYS: [&str; 13] = [
    "command",
    "env",
    "cwd",
    "url",
    "token_file",
    "headers",
    "startup_timeout_secs",
    "call_timeout_secs",
    "tools",
    "eager",
    "sandbox",
    "parallel",
    "rename",
];

/// The keys of one server that choose and shape its transport, as read, before the choice.
#[derive(Default)]
struct TransportKeys {
    /// `command`: the program and its arguments.
    command: Option<Vec<String>>,
    /// `url`, with where it stands (for the report when `command` is there too).
    url: Option<(String, Range<usize>)>,
    /// `env`, for a started server.
    env: BTreeMap<String, String>,
    /// `cwd`, for a started server.
    cwd: Option<PathBuf>,
    /// `token_file`, for a server reached by `url`.
    token_file: Option<PathBuf>,
    /// `headers`, for a server reached by `url`.
    headers: BTreeMap<String, String>,
    /// The keys given that only a started server takes, with where they stand.
    stdio_keys: Vec<(&'static str, Range<usize>)>,
    /// The keys given that only a server reached by `url` takes, with where they stand.
    http_keys: Vec<(&'static str, Range<usize>)>,
}

impl<'a> Loader<'a> {
    /// `[mcp]`: its `servers` table, `max_message_bytes`, `max_sessions`, `when_full`, `task_after_ms`
    /// and the bounds on HTTP connections.
    pub(super) fn mcp_section(&mut self, table: &DeTable<'a>, config: &mut crate::config::Config) {
        let mut servers = Vec::new();
        for (key, value) in table {
            match key.get_ref().as_ref() {
                "max_message_bytes" => match super::integer(value)
                    .and_then(|n| usize::try_from(n).ok())
                {
                    Some(n) if n >= 1024 => config.mcp_max_message_bytes = Some(n),
                    _ => self.report(
                        value.span(),
                        "`max_message_bytes` must be a whole number of bytes, at least 1024 (e.g. 16777216 for 16 MiB)",
                    ),
                },
                "max_sessions" => match super::integer(value)
                    .and_then(|n| usize::try_from(n).ok())
                {
                    Some(n) if n >= 1 => config.mcp_max_sessions = Some(n),
                    _ => self.report(
                        value.span(),
                        "`max_sessions` must be a whole number of sessions, at least 1 (e.g. 1024)",
                    ),
                },
                "when_full" => match value.get_ref().as_str() {
                    Some("refuse") => config.mcp_end_idle_when_full = false,
                    Some("end_idle") => config.mcp_end_idle_when_full = true,
                    _ => self.report(
                        value.span(),
                        "`when_full` must be \"refuse\" (a new session past `max_sessions` is refused; the default) or \"end_idle\" (it ends the least recently used idle session)",
                    ),
                },
                "max_connections" | "max_connections_per_client" => {
                    let k = key.get_ref().as_ref();
                    match super::integer(value).and_then(|n| usize::try_from(n).ok()) {
                        Some(n) if n >= 1 => {
                            let limits = &mut config.mcp_connections;
                            if k == "max_connections" {
                                limits.max_connections = Some(n);
                            } else {
                                limits.max_per_client = Some(n);
                            }
                        }
                        _ => self.report(
                            value.span(),
                            format!("`{k}` must be a whole number of connections, at least 1 (e.g. 64)"),
                        ),
                    }
                }
                "task_after_ms" => match super::integer(value)
                    .and_then(|n| u64::try_from(n).ok())
                {
                    Some(n) if n >= 1 => {
                        config.mcp_task_after = Some(std::time::Duration::from_millis(n));
                    }
                    _ => self.report(
                        value.span(),
                        "`task_after_ms` must be a whole number of milliseconds, at least 1 (e.g. 10000)",
                    ),
                },
                "request_timeout_secs" => {
                    config.mcp_connections.request_timeout =
                        self.seconds(value, "request_timeout_secs");
                }
                "trusted_proxies" => {
                    if let Some(proxies) = self.addresses(value, "trusted_proxies") {
                        config.mcp_trusted_proxies = proxies;
                    }
                }
                "servers" => {
                    let Some(entries) = self.table(value, "[mcp.servers]") else {
                        continue;
                    };
                    for (name, entry) in entries {
                        if let Some(server) = self.server_entry(name, entry) {
                            servers.push(server);
                        }
                    }
                }
                other => self.unknown_key(
                    key.span(),
                    other,
                    "[mcp]",
                    &[
                        "servers",
                        "max_message_bytes",
                        "max_sessions",
                        "when_full",
                        "max_connections",
                        "max_connections_per_client",
                        "request_timeout_secs",
                        "trusted_proxies",
                        "task_after_ms",
                    ],
                ),
            }
        }
        config.servers = servers;
    }

    /// A list of IP addresses (`key`), each reported where it stands when it is not one.
    fn addresses(&mut self, value: &Spanned<DeValue<'a>>, key: &str) -> Option<Vec<IpAddr>> {
        let DeValue::Array(items) = value.get_ref() else {
            self.report(
                value.span(),
                format!("`{key}` must be a list of IP addresses in quotes, e.g. [\"127.0.0.1\", \"::1\"]"),
            );
            return None;
        };
        let mut addresses = Vec::new();
        for item in items {
            match item.get_ref().as_str().map(str::parse::<IpAddr>) {
                Some(Ok(ip)) => addresses.push(ip),
                _ => self.report(
                    item.span(),
                    format!("each of `{key}` must be one IP address in quotes, without a port or a network (e.g. \"10.0.0.5\" or \"::1\"); name each proxy's address"),
                ),
            }
        }
        Some(addresses)
    }

    /// One `[mcp.servers.<name>]`: its settings, or `None` (reported) when the name cannot
    /// prefix tool names or the transport is missing or given twice.
    fn server_entry(
        &mut self,
        name: &Spanned<std::borrow::Cow<'a, str>>,
        entry: &Spanned<DeValue<'a>>,
    ) -> Option<ServerSettings> {
        let server = name.get_ref().as_ref();
        let header = format!("[mcp.servers.{server}]");
        if server.contains(MOUNT_SEPARATOR) || tool_name_problem(server).is_some() {
            self.report(
                name.span(),
                format!(
                    "the server name `{server}` cannot prefix tool names: use letters, digits, `-` and single `_` only, starting with a letter, e.g. [mcp.servers.github]"
                ),
            );
            return None;
        }
        let table = self.table(entry, &header)?;
        let mut settings = ServerSettings::stdio(server, Vec::new());
        let mut transport = TransportKeys::default();
        for (key, value) in table {
            self.server_key(key, value, &header, &mut settings, &mut transport);
        }
        settings.transport = self.transport(transport, &header, name.span())?;
        Some(settings)
    }

    /// Reads `key` of the server `header`: a key of the transport into `transport`, any
    /// other into `settings`; reports a value it cannot take, or a key servers do not have.
    fn server_key(
        &mut self,
        key: &Spanned<std::borrow::Cow<'a, str>>,
        value: &Spanned<DeValue<'a>>,
        header: &str,
        settings: &mut ServerSettings,
        transport: &mut TransportKeys,
    ) {
        let k = key.get_ref().as_ref();
        match k {
            "command" => match self.strings(value, "command", "the program and its arguments") {
                Some(list) if !list.is_empty() && !list[0].trim().is_empty() => {
                    transport.command = Some(list);
                }
                Some(_) => self.report(
                    value.span(),
                    "`command` must name the program first, e.g. [\"npx\", \"-y\", \"@modelcontextprotocol/server-everything\"]",
                ),
                None => {}
            },
            "env" => {
                transport.stdio_keys.push(("env", key.span()));
                transport.env = self.string_map(value, "env", "VARIABLE = \"value\"");
            }
            "cwd" => {
                transport.stdio_keys.push(("cwd", key.span()));
                match value.get_ref().as_str() {
                    Some(s) if !s.trim().is_empty() => transport.cwd = Some(PathBuf::from(s)),
                    _ => self.report(
                        value.span(),
                        "`cwd` must be the directory the server starts in, as a path in quotes",
                    ),
                }
            }
            "url" => match value.get_ref().as_str() {
                Some(s) if s.starts_with("http://") || s.starts_with("https://") => {
                    transport.url = Some((s.to_owned(), value.span()));
                }
                _ => self.report(
                    value.span(),
                    "`url` must be the server's Streamable HTTP endpoint, e.g. \"http://127.0.0.1:9000/mcp\"",
                ),
            },
            "token_file" => {
                transport.http_keys.push(("token_file", key.span()));
                match value.get_ref().as_str() {
                    Some(s) if !s.trim().is_empty() => {
                        transport.token_file = Some(PathBuf::from(s));
                    }
                    _ => self.report(
                        value.span(),
                        "`token_file` must be the path of a file holding the bearer token, in quotes",
                    ),
                }
            }
            "headers" => {
                transport.http_keys.push(("headers", key.span()));
                transport.headers =
                    self.string_map(value, "headers", "\"Header-Name\" = \"value\"");
            }
            "startup_timeout_secs" => {
                if let Some(secs) = self.seconds(value, k) {
                    settings.startup_timeout = secs;
                }
            }
            "call_timeout_secs" => settings.call_timeout = self.seconds(value, k),
            "tools" => {
                settings.tools = self.strings(value, "tools", "tool names or globs");
            }
            "eager" => settings.eager = self.boolean(value, k).unwrap_or(false),
            "sandbox" => settings.sandbox = self.boolean(value, k).unwrap_or(true),
            "parallel" => settings.parallel = self.boolean(value, k).unwrap_or(false),
            "rename" => {
                let map = self.string_map(value, "rename", "\"math.factorial\" = \"factorial\"");
                for (remote, local) in map {
                    let name = mounted_name(&settings.name, &local);
                    if let Some(problem) = tool_name_problem(&name) {
                        self.report(
                            value.span(),
                            format!(
                                "`rename` in {header} gives the tool `{remote}` the name `{local}`, but `{name}` cannot be a tool name: {problem}; use letters, digits, `_` and `-`"
                            ),
                        );
                    } else {
                        settings.rename.insert(remote, local);
                    }
                }
            }
            other => self.unknown_key(key.span(), other, header, &SERVER_KEYS),
        }
    }

    /// The transport the keys of the server `header` give: `command` (with `env` and `cwd`)
    /// or `url` (with `token_file` and `headers`). `None`, reported, for both or neither; a
    /// key of the other transport is reported and left out.
    fn transport(
        &mut self,
        keys: TransportKeys,
        header: &str,
        name: Range<usize>,
    ) -> Option<ServerTransport> {
        match (keys.command, keys.url) {
            (Some(_), Some((_, span))) => {
                self.report(
                    span,
                    format!(
                        "{header} has both `command` and `url`; keep `command` for a server pi-tools starts, or `url` for one already running"
                    ),
                );
                None
            }
            (Some(command), None) => {
                for (k, span) in keys.http_keys {
                    self.report(
                        span,
                        format!("`{k}` applies to a server reached by `url`; remove it from {header}, which has a `command`"),
                    );
                }
                Some(ServerTransport::Stdio {
                    command,
                    env: keys.env,
                    cwd: keys.cwd,
                })
            }
            (None, Some((url, _))) => {
                for (k, span) in keys.stdio_keys {
                    self.report(
                        span,
                        format!("`{k}` applies to a server started by `command`; remove it from {header}, which has a `url`"),
                    );
                }
                Some(ServerTransport::Http {
                    url,
                    token_file: keys.token_file,
                    headers: keys.headers,
                })
            }
            (None, None) => {
                self.report(
                    name,
                    format!(
                        "{header} needs `command` (a server pi-tools starts, e.g. command = [\"npx\", \"-y\", \"@modelcontextprotocol/server-everything\"]) or `url` (a Streamable HTTP server)"
                    ),
                );
                None
            }
        }
    }

    fn string_map(
        &mut self,
        value: &Spanned<DeValue<'a>>,
        key: &str,
        form: &str,
    ) -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        let DeValue::Table(table) = value.get_ref() else {
            self.report(
                value.span(),
                format!("`{key}` must be a table of strings, e.g. {key} = {{ {form} }}"),
            );
            return map;
        };
        for (k, v) in table {
            match v.get_ref().as_str() {
                Some(s) => {
                    map.insert(k.get_ref().to_string(), s.to_owned());
                }
                None => self.report(
                    v.span(),
                    format!("each value of `{key}` must be a string in quotes"),
                ),
            }
        }
        map
    }

    /// The problem with an `active` entry that names a mounted tool (`server__tool` or a
    /// glob over one server's tools), if any.
    pub(super) fn mounted_active_problem(
        &self,
        entry: &str,
        servers: &[ServerSettings],
    ) -> Option<String> {
        let Some((server, tool)) = entry.split_once(MOUNT_SEPARATOR) else {
            return Some(format!(
                "`{entry}` is a glob, and globs may only name a mounted server's tools, e.g. \"github__*\""
            ));
        };
        if !servers.iter().any(|s| s.name == server) {
            let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
            let hint = super::suggest(server, names.iter().copied())
                .map(|s| format!("did you mean `{s}{MOUNT_SEPARATOR}{tool}`? "))
                .unwrap_or_default();
            let known = if names.is_empty() {
                "no [mcp.servers.<name>] entry is configured".to_owned()
            } else {
                format!("the configured servers are: {}", names.join(", "))
            };
            return Some(format!(
                "`{entry}` names the tool `{tool}` of an MCP server `{server}`, but there is no [mcp.servers.{server}]; {hint}{known}"
            ));
        }
        if tool.is_empty() {
            return Some(format!(
                "`{entry}` names no tool after `{server}{MOUNT_SEPARATOR}`; write \"{server}{MOUNT_SEPARATOR}*\" for all of its tools"
            ));
        }
        None
    }
}
