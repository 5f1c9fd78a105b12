//! The `[mcp.servers]` of a command: which servers it starts (only those whose tools it
//! needs), their tools added to the registered ones, `[tools] active` checked against what
//! they list, and the error for a call of a server that could not be started. (`pi-tools
//! mcp`'s tools following the servers' lists as they change: `follow`.)

use std::path::Path;
use std::sync::Arc;

use crate::config::Config;
use crate::core::{BoxFuture, RunnerConfig, ToolCall, UnknownToolMessage};
use crate::mcp::{McpResource, McpResourceContent, McpResources};
use crate::mount::{MountedContent, Mounts};
use crate::session::Session;
use crate::tool::ToolDefinition;
use crate::tool::names::{is_glob, split_mounted};

use super::Failure;

/// Which servers a command needs.
pub(super) enum Need<'a> {
    /// Those `[tools] active` draws from (catalog, prompt, schema, mcp).
    Active,
    /// Those `[tools] active` draws from, or every one with `--all`.
    ActiveOrAll(bool),
    /// Those a batch's calls name (run).
    Calls(&'a [ToolCall]),
}

/// Mounts `config`'s servers for a command working in `cwd`: starts the eager ones and
/// those `need` names, and adds their tools to `registered`.
pub(super) async fn mount(
    config: &Config,
    cwd: &Path,
    registered: &mut Vec<Arc<dyn ToolDefinition>>,
    need: Need<'_>,
) -> Result<Arc<Mounts>, Failure> {
    let mounts = Arc::new(Mounts::from_config(config, cwd).map_err(Failure::general)?);
    if mounts.is_empty() {
        return Ok(mounts);
    }
    mounts.start_eager();
    let tools = mounts
        .definitions(wanted(config, &need), registered)
        .await
        .map_err(|e| Failure::general(format!("{}: {e}", config.origin)))?;
    check_active(config, &tools)?;
    registered.extend(tools);
    Ok(mounts)
}

/// Whether `need` takes in the server named so.
pub(super) fn wanted<'a>(config: &Config, need: &'a Need<'a>) -> impl Fn(&str) -> bool + 'a {
    let by_active = Mounts::named_by_active(config);
    move |server: &str| match need {
        Need::Active | Need::ActiveOrAll(false) => by_active.iter().any(|s| s == server),
        Need::ActiveOrAll(true) => true,
        Need::Calls(calls) => calls
            .iter()
            .any(|c| split_mounted(&c.name).is_some_and(|(s, _)| s == server)),
    }
}

/// Every exact `server__tool` of `[tools] active` whose server listed its tools must be
/// one of them.
fn check_active(config: &Config, tools: &[Arc<dyn ToolDefinition>]) -> Result<(), Failure> {
    for entry in &config.active {
        let Some((server, _)) = split_mounted(entry) else {
            continue;
        };
        let listed: Vec<&str> = tools
            .iter()
            .filter(|t| t.spec().mounted_from() == Some(server))
            .map(|t| t.spec().name.as_str())
            .collect();
        if listed.is_empty() || is_glob(entry) || listed.contains(&entry.as_str()) {
            continue;
        }
        let hint = listed
            .iter()
            .min_by_key(|name| strsim::levenshtein(entry, name))
            .filter(|name| strsim::levenshtein(entry, name) <= (entry.len() / 3).max(2))
            .map(|name| format!("did you mean `{name}`? "))
            .unwrap_or_default();
        return Err(Failure::general(format!(
            "{}: [tools] active names `{entry}`, but the MCP server `{server}` has no such tool (or its `tools` allow-list leaves it out); {hint}its tools are: {}",
            config.origin,
            listed.join(", ")
        )));
    }
    Ok(())
}

/// `base`, with calls of a server that could not be started answered by its reason.
pub(super) fn runner_config(base: RunnerConfig, mounts: &Arc<Mounts>) -> RunnerConfig {
    if mounts.is_empty() {
        return base;
    }
    let previous = base.unknown_tool.clone();
    let mounts = Arc::clone(mounts);
    let unknown_tool: UnknownToolMessage = Arc::new(move |name: &str| {
        mounts
            .unknown_tool_message(name)
            .or_else(|| previous.as_ref().and_then(|p| p(name)))
    });
    RunnerConfig {
        unknown_tool: Some(unknown_tool),
        ..base
    }
}

/// The mounted servers' resources, re-served by `pi-tools mcp` under their mount names (see
/// `mount::resources`): listed once, when the gateway starts, and read in the turn of the
/// session that asks.
pub(super) struct MountedResources {
    mounts: Arc<Mounts>,
    listed: Vec<McpResource>,
}

impl MountedResources {
    /// The started servers' resources, or `None` when none offers any.
    pub(super) async fn of(mounts: &Arc<Mounts>) -> Option<MountedResources> {
        if mounts.is_empty() {
            return None;
        }
        let listed: Vec<McpResource> = mounts
            .resources()
            .await
            .into_iter()
            .map(|r| McpResource {
                uri: r.uri,
                name: r.name,
                description: r.description,
                mime_type: r.mime_type,
            })
            .collect();
        (!listed.is_empty()).then(|| MountedResources {
            mounts: Arc::clone(mounts),
            listed,
        })
    }
}

impl McpResources for MountedResources {
    fn list(&self) -> Vec<McpResource> {
        self.listed.clone()
    }

    fn read<'a>(
        &'a self,
        uri: &'a str,
        session: &'a Session,
    ) -> BoxFuture<'a, Option<Result<Vec<McpResourceContent>, String>>> {
        Box::pin(async move {
            let read = self.mounts.read_resource(uri, Some(session.env())).await?;
            Some(read.and_then(|contents| contents.into_iter().map(content).collect()))
        })
    }
}

fn content(content: MountedContent) -> Result<McpResourceContent, String> {
    use base64::Engine as _;
    Ok(match content {
        MountedContent::Text {
            uri,
            mime_type,
            text,
        } => McpResourceContent::Text {
            uri,
            mime_type,
            text,
        },
        MountedContent::Blob {
            uri,
            mime_type,
            base64,
        } => McpResourceContent::Blob {
            data: base64::engine::general_purpose::STANDARD
                .decode(base64.as_bytes())
                .map_err(|e| {
                    format!("The MCP server sent {uri} as base64 that does not decode ({e}); read it from the server itself.")
                })?,
            uri,
            mime_type,
        },
    })
}
