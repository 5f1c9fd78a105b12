//! `pi-tools mcp`: the active tools served over MCP, on standard input and output or over
//! Streamable HTTP (`--http 127.0.0.1:PORT`).
//!
//! The declared tools follow the configuration file while it runs (see `reload`); the rest
//! of the file applies at the start only.
//!
//! SIGTERM, SIGHUP and SIGINT end the server: calls in flight are cancelled and waited for (nothing is left half-written) and background jobs are
//! killed.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::ConfigSource;
use crate::core::RunnerConfig;
use crate::env::local::LocalEnv;
use crate::env::{SearchIndex, WithEnv};
use crate::mcp::{
    ClientRoots, ConnectionLimits, HttpOptions, McpTools, ToolListUpdates, WhenFull,
    init_stderr_logging, serve_http, serve_split_until, stdio,
};
use crate::toolbox::Toolbox;

use super::follow;
use super::mounted::{self, Need};
use super::reload::Reloader;
use super::setup::Workspace;
use super::{Failure, McpArgs, setup};

/// The environment variable that holds the HTTP server's bearer token when no
/// `--token-file` is given.
const TOKEN_VARIABLE: &str = "PI_TOOLS_MCP_TOKEN";

pub(super) async fn mcp(args: McpArgs, source: &ConfigSource) -> Result<ExitCode, Failure> {
    let mut registered = setup::registered()?;
    let mut config = setup::config(source, &registered)?;
    // The file is followed from the configuration as loaded (before this command confines
    // it further below) and against this binary's own tools, as at this start.
    let (loaded, own_tools) = (config.clone(), registered.clone());
    let workspace = Workspace::open(&args.workspace, &mut config).await?;
    // Client roots are followed unless the configuration names allowed roots itself (over
    // HTTP the working directory is named below when it does not, for clients without roots).
    let configured_roots = config.allowed_roots.is_some();
    // Said once the server is sure to start (a refused start says only why).
    let confinement = args.http.is_some().then(|| confine_over_http(&mut config));
    let mounts = mounted::mount(
        &config,
        &workspace.server_dir()?,
        &mut registered,
        Need::Active,
    )
    .await?;
    // A server lives long and is searched again: the index is built from the first search.
    let extensions = workspace.extensions(&config, SearchIndex::Always)?;
    let toolbox = Toolbox::new(registered, &config, extensions);
    // A client's roots apply when the configuration names no allowed roots: the
    // configuration's roots win.
    let toolbox = match (&workspace, configured_roots) {
        (Workspace::Local(cwd), false) => {
            toolbox.with_client_roots(client_roots(cwd.clone(), &config))
        }
        _ => toolbox,
    };
    let (base_config, inactive) = follow::Inactive::runner_config(toolbox.runner_config());
    let base_config = mounted::runner_config(base_config, &mounts);
    init_stderr_logging();
    let reloader = Reloader::start(source, &own_tools, &loaded);
    let mut tools = McpTools::from(&toolbox);
    // The toolbox's session ends with the server; the toolbox itself follows the mounted
    // servers' tool lists and the configuration file's declared tools from here on, when
    // there are any.
    let session = Arc::clone(toolbox.session());
    let following = match mounts.is_empty() && reloader.is_none() {
        true => None,
        false => {
            let updates = ToolListUpdates::new();
            tools = tools.with_updates(updates.clone());
            Some(follow::follow(
                Arc::clone(&mounts),
                toolbox,
                updates,
                inactive,
                reloader,
            ))
        }
    };
    if let Some(resources) = mounted::MountedResources::of(&mounts).await {
        tools = tools.with_resources(resources);
    }
    if let Some(bytes) = config.mcp_max_message_bytes {
        tools = tools.with_max_message_bytes(bytes);
    }
    if let Some(after) = config.mcp_task_after {
        tools = tools.with_task_after(after);
    }
    let stop = CancellationToken::new();
    tokio::spawn(stop_on_signals(stop.clone()));
    let served = match &args.http {
        None => {
            let (stdin, stdout) = stdio();
            serve_split_until(tools, base_config.clone(), stdin, stdout, stop).await
        }
        Some(address) => {
            let options = HttpOptions {
                token: token(args.token_file.as_deref())?,
                allowed_hosts: args.allow_host.clone(),
                allowed_origins: args.allow_origin.clone(),
                stateless: args.stateless,
                session_idle: args.session_idle_secs.map(Duration::from_secs),
                max_sessions: config.mcp_max_sessions,
                when_full: if config.mcp_end_idle_when_full {
                    WhenFull::EndIdle
                } else {
                    WhenFull::Refuse
                },
                connections: connection_limits(
                    &config.mcp_connections,
                    &config.mcp_trusted_proxies,
                ),
            };
            let listener = tokio::net::TcpListener::bind(address.as_str())
                .await
                .map_err(|e| {
                    Failure::general(format!(
                        "cannot listen on {address} ({e}); pass a free address such as 127.0.0.1:8808 to --http"
                    ))
                })?;
            let local = listener.local_addr().map_err(|e| {
                Failure::general(format!("cannot read the address listened on ({e})"))
            })?;
            // A refused start says only that it is refused, and why.
            options
                .check(local)
                .map_err(|e| Failure::usage(e.to_string()))?;
            if let Some(notice) = &confinement {
                eprintln!("{notice}");
            }
            eprintln!(
                "pi-tools: serving MCP on http://{local}{}",
                crate::mcp::MCP_PATH
            );
            // Each client's session (made by the server from this configuration) gets its own
            // execution environment, so ending one ends its background jobs and no other's; it
            // follows its own client's roots and asks its own client where the policy says
            // `ask`.
            let base = base_config.clone();
            let session_config = move || -> RunnerConfig {
                match workspace.session_env(&config) {
                    Ok(env) => base.clone().with_env(env),
                    Err(e) => {
                        tracing::warn!(error = %e.message, "a session shares the first environment");
                        base.clone()
                    }
                }
            };
            serve_http(tools, session_config, listener, options, stop).await
        }
    };
    // Background jobs that outlived their calls must not outlive the server either (each
    // session's server ends its own environment's jobs as it closes; this is the first one).
    session.end();
    if let Some(following) = following {
        following.abort();
    }
    mounts.end().await;
    served.map_err(|e| Failure::general(format!("the MCP server failed: {e}")))?;
    Ok(ExitCode::SUCCESS)
}

/// Builds a session's environment for the roots its client lists: the file tools confined
/// to them and, unless `[sandbox] writable_roots` says otherwise, commands allowed to write
/// in them only (as `[paths] allowed_roots` would). The working directory stays when it is
/// inside a root; else the first root becomes it, since commands cannot run outside them.
fn client_roots(cwd: std::path::PathBuf, config: &crate::config::Config) -> ClientRoots {
    let pseudo_files = config.pseudo_files;
    let config = config.clone();
    ClientRoots::new(move |roots| {
        let unusable = |e: std::io::Error| {
            if let Some(sentence) = crate::env::out_of_descriptors(&e) {
                tracing::warn!("a session's environment could not be made: {sentence}");
                return sentence;
            }
            format!(
                "The client's roots cannot be used ({e}), so the call was not run. List existing directories as roots, then call again."
            )
        };
        let inside = |root: &std::path::PathBuf| {
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            std::fs::canonicalize(&cwd).is_ok_and(|cwd| cwd.starts_with(root))
        };
        let dir = match roots.iter().any(inside) {
            true => cwd.clone(),
            false => roots.first().cloned().unwrap_or_else(|| cwd.clone()),
        };
        let env = LocalEnv::new(&dir)
            .with_pseudo_files(pseudo_files)
            .with_allowed_roots(roots)
            .map_err(unusable)?
            .with_sandbox(config.sandbox_policy(Some(roots)))
            .map_err(unusable)?
            .with_search_index(SearchIndex::Always);
        Ok(Arc::new(env) as Arc<dyn crate::env::ExecutionEnv>)
    })
}

/// The HTTP server's bounds on connections: the defaults, with what `[mcp]` sets.
fn connection_limits(
    set: &crate::config::McpConnections,
    trusted_proxies: &[std::net::IpAddr],
) -> ConnectionLimits {
    let defaults = ConnectionLimits::default();
    ConnectionLimits {
        max_connections: set.max_connections.unwrap_or(defaults.max_connections),
        max_per_client: set.max_per_client.unwrap_or(defaults.max_per_client),
        request_timeout: set.request_timeout.unwrap_or(defaults.request_timeout),
        trusted_proxies: trusted_proxies.to_vec(),
    }
}

/// Over HTTP the file tools stay in the working directory unless `[paths] allowed_roots`
/// names directories or the client lists roots: a server others can reach does not hand
/// out the host's files by default. Returns the notice that says where they are confined.
fn confine_over_http(config: &mut crate::config::Config) -> String {
    match &config.allowed_roots {
        None => {
            config.allowed_roots = Some(vec![std::path::PathBuf::from(".")]);
            "pi-tools: over HTTP the file tools are confined to the working directory, or to the roots a client lists; set [paths] allowed_roots to choose other directories".to_owned()
        }
        Some(roots) => format!(
            "pi-tools: the file tools are confined to {} ([paths] allowed_roots)",
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The bearer token: the first line of `--token-file`, else the environment variable.
fn token(file: Option<&Path>) -> Result<Option<String>, Failure> {
    let token = match file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| {
                    Failure::usage(format!(
                        "cannot read --token-file `{}` ({e}); pass a readable file holding the token",
                        path.display()
                    ))
                })?
                .trim()
                .to_owned(),
        ),
        None => std::env::var(TOKEN_VARIABLE)
            .ok()
            .map(|t| t.trim().to_owned()),
    };
    match token {
        Some(t) if t.is_empty() => Err(Failure::usage(format!(
            "the token is empty; put a long random string in the --token-file or in {TOKEN_VARIABLE}"
        ))),
        other => Ok(other),
    }
}

/// Cancels `stop` at the first SIGTERM, SIGHUP or SIGINT.
async fn stop_on_signals(stop: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::interrupt(),
    ];
    let mut streams = Vec::new();
    for kind in kinds {
        match signal(kind) {
            Ok(stream) => streams.push(stream),
            Err(err) => tracing::warn!(%err, "a signal handler could not be installed"),
        }
    }
    if streams.is_empty() {
        return;
    }
    futures::future::select_all(streams.iter_mut().map(|s| Box::pin(s.recv()))).await;
    tracing::info!("signal received; ending the MCP server");
    stop.cancel();
}
