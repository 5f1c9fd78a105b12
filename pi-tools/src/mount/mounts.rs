//! Every server a configuration mounts: started when their tools are first needed (eager
//! ones at once), their tools checked and named `server__tool`, their failures kept for
//! calls of tools that never listed, their tool lists followed as they change, and all of
//! them ended with the session.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::options::MountOptions;
use super::process::Launch;
use super::server::{Server, ServerState};
use super::tool::{mounted_tool, no_longer_offered};
use crate::config::{Config, ServerSettings, ServerTransport};
use crate::tool::ToolDefinition;
use crate::tool::names::{split_mounted, tool_name_problem};

/// The servers of a configuration's `[mcp.servers]`.
pub struct Mounts {
    servers: Vec<Server>,
    /// Why a server's tools could not be listed, by server name.
    failures: Arc<Mutex<BTreeMap<String, String>>>,
    /// Bumped each time a server's tool list changes (see [`Mounts::changes`]).
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

/// One line of `pi-tools check`: a server, its state and how many tools it brings.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// The entry's name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Where it is in its life.
    pub state: ServerState,
    /// How many of its tools join (after the allow-list), when it listed them.
    pub tools: Option<usize>,
}

impl Mounts {
    /// The servers `config` names, none started yet, with the options it gives
    /// ([`MountOptions::from_config`]).
    pub fn from_config(config: &Config, cwd: &Path) -> Result<Mounts, String> {
        Mounts::new(&config.servers, &MountOptions::from_config(config), cwd)
    }

    /// These servers, none started yet. Stdio servers start in `cwd` (or their own `cwd`,
    /// relative to it), under `options.sandbox` when their entry says `sandbox = true`.
    pub fn new(
        entries: &[ServerSettings],
        options: &MountOptions,
        cwd: &Path,
    ) -> Result<Mounts, String> {
        let mut servers = Vec::with_capacity(entries.len());
        let changes = Arc::new(tokio::sync::watch::Sender::new(0));
        for settings in entries {
            let launch = match &settings.transport {
                ServerTransport::Stdio {
                    command,
                    env,
                    cwd: own,
                } => {
                    let sandbox = if settings.sandbox {
                        Some(options.sandbox.resolve(cwd).map_err(|e| {
                            format!(
                                "the sandbox of the MCP server `{}` cannot be set up ({e}); fix [sandbox] or set sandbox = false in [mcp.servers.{}]",
                                settings.name, settings.name
                            )
                        })?)
                    } else {
                        None
                    };
                    Some(Launch {
                        command: command.clone(),
                        env: env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                        cwd: own
                            .as_ref()
                            .map_or_else(|| cwd.to_owned(), |own| cwd.join(own)),
                        sandbox,
                    })
                }
                ServerTransport::Http { .. } => None,
            };
            servers.push(Server::new(
                settings.clone(),
                launch,
                options.max_message_bytes,
                Arc::clone(&changes),
            ));
        }
        Ok(Mounts {
            servers,
            failures: Arc::default(),
            changes,
        })
    }

    /// Changes each time a server says its tool list changed (`notifications/tools/list_changed`)
    /// and lists tools other than before, or lists other tools when it is started again:
    /// [`Mounts::definitions`] then gives the new tools, and a call of a tool a server no
    /// longer lists fails saying so. The value counts the changes; a receiver sees those
    /// made after it was taken.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The servers, in the configuration's order.
    pub(crate) fn servers(&self) -> &[Server] {
        &self.servers
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Starts the servers whose entry says `eager = true`, in the background.
    pub fn start_eager(&self) {
        for server in self.servers.iter().filter(|s| s.settings().eager) {
            let server = server.clone();
            tokio::spawn(async move {
                let _ = server.connection().await;
            });
        }
    }

    /// The names of the servers `config`'s `[tools] active` draws tools from.
    pub fn named_by_active(config: &Config) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (server, _) in config
            .active
            .iter()
            .filter_map(|entry| split_mounted(entry))
        {
            if config.server(server).is_some() && !names.iter().any(|n| n == server) {
                names.push(server.to_owned());
            }
        }
        names
    }

    /// The tools of the servers `wanted` selects, started (together) as needed, each
    /// checked: a name a provider forbids, or one `taken` already, is an error naming the
    /// entry's allow-list as the way out. A server that cannot be started contributes no
    /// tools; its reason is kept for [`Mounts::unknown_tool_message`].
    pub async fn definitions(
        &self,
        wanted: impl Fn(&str) -> bool,
        taken: &[Arc<dyn ToolDefinition>],
    ) -> Result<Vec<Arc<dyn ToolDefinition>>, String> {
        let chosen: Vec<&Server> = self.servers.iter().filter(|s| wanted(s.name())).collect();
        let listings =
            futures::future::join_all(chosen.iter().map(|server| server.listing())).await;
        let mut tools: Vec<Arc<dyn ToolDefinition>> = Vec::new();
        // The names taken, so that thousands of tools join in linear time.
        let mut names: std::collections::HashSet<String> =
            taken.iter().map(|t| t.spec().name.clone()).collect();
        for (server, listing) in chosen.into_iter().zip(listings) {
            let listing = match listing {
                Ok(listing) => listing,
                Err(why) => {
                    self.failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(server.name().to_owned(), why);
                    continue;
                }
            };
            for tool in listing
                .tools
                .iter()
                .filter(|t| server.settings().allows(&t.name))
            {
                let mounted = mounted_tool(server, tool, listing.instructions.as_deref());
                let name = mounted.spec().name.to_owned();
                if let Some(problem) = tool_name_problem(&name) {
                    return Err(format!(
                        "the MCP server `{server}` lists the tool `{tool}`, which would be called `{name}`, but {problem}; give it another name with `rename = {{ \"{tool}\" = \"new_name\" }}`, or leave it out with a `tools` allow-list, in [mcp.servers.{server}]",
                        server = server.name(),
                        tool = tool.name
                    ));
                }
                if !names.insert(name.clone()) {
                    return Err(format!(
                        "the tool `{tool}` of the MCP server `{server}` would be called `{name}`, which another tool is already called; give it another name with `rename = {{ \"{tool}\" = \"new_name\" }}`, or leave it out with a `tools` allow-list, in [mcp.servers.{server}], or rename the server's entry",
                        server = server.name(),
                        tool = tool.name
                    ));
                }
                tools.push(mounted);
            }
        }
        // A schema no value can satisfy is served as it is (the user chose the server), but
        // said once here, where the tools join.
        for warning in crate::tool::contradictions::warnings(tools.iter().map(|t| t.as_ref())) {
            tracing::warn!("{warning}");
        }
        Ok(tools)
    }

    /// The error for a call of `name` when it belongs to a server that could not be
    /// started (its tools never listed): the server's reason, stderr tail included; or to a
    /// server that listed it once and no longer does.
    pub fn unknown_tool_message(&self, name: &str) -> Option<String> {
        let (server, _) = split_mounted(name)?;
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = failures.get(server) {
            return Some(format!(
                "Tool {name} cannot be called because its server is not available. {why}"
            ));
        }
        self.servers
            .iter()
            .find(|s| s.name() == server && s.retired_here(name))
            .map(|_| no_longer_offered(name, server))
    }

    /// Each server with its state and tool count, starting the ones not started yet.
    pub async fn report(&self) -> Vec<ServerReport> {
        let mut reports = Vec::with_capacity(self.servers.len());
        let listings =
            futures::future::join_all(self.servers.iter().map(|server| server.listing())).await;
        for (server, listing) in self.servers.iter().zip(listings) {
            let tools = listing.ok().map(|l| {
                l.tools
                    .iter()
                    .filter(|t| server.settings().allows(&t.name))
                    .count()
            });
            reports.push(ServerReport {
                name: server.name().to_owned(),
                transport: match server.settings().transport {
                    ServerTransport::Stdio { .. } => "stdio",
                    ServerTransport::Http { .. } => "http",
                },
                state: server.state().await,
                tools,
            });
        }
        reports
    }

    /// The state of the server called `name`.
    pub async fn state(&self, name: &str) -> Option<ServerState> {
        match self.servers.iter().find(|s| s.name() == name) {
            Some(server) => Some(server.state().await),
            None => None,
        }
    }

    /// Ends every server (their processes and everything in their groups).
    pub async fn end(&self) {
        futures::future::join_all(self.servers.iter().map(Server::end)).await;
    }
}

impl std::fmt::Debug for Mounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.servers.iter().map(Server::name))
            .finish()
    }
}
