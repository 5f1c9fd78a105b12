//! One mounted server's life: started on first use (or at once when eager), its tool listing
//! kept (and taken again when it says its list changed), restarted once when it dies, its
//! failure to start kept with its stderr tail, and ended with the session.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use rmcp::model::Tool;
use tokio::sync::{Mutex, watch};

use super::client::{CallFailure, Connection, ToolsChanged};
use super::lines::{LineClient, Link};
use super::process::{Launch, ServerProcess};
use super::sessions::Sessions;
use crate::config::{ServerSettings, ServerTransport};

/// What a server listed when it first started, or last said its list changed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Tool>,
    pub(crate) instructions: Option<String>,
}

/// Where a server is in its life, for `pi-tools check` and error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Not started yet (it starts on first use).
    NotStarted,
    /// Running, with this process id (`None` for an HTTP server).
    Running(Option<u32>),
    /// It ended on its own; the next use starts it again.
    Died(String),
    /// It could not be started; its tools fail with this reason.
    Failed(String),
    /// Ended with the session.
    Ended,
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::NotStarted => f.write_str("not started"),
            ServerState::Running(Some(pid)) => write!(f, "running (pid {pid})"),
            ServerState::Running(None) => f.write_str("connected"),
            ServerState::Died(why) => write!(f, "died ({why})"),
            ServerState::Failed(why) => write!(f, "failed: {why}"),
            ServerState::Ended => f.write_str("ended"),
        }
    }
}

enum State {
    NotStarted,
    Running {
        connection: Arc<Connection>,
        process: Option<Box<ServerProcess>>,
        /// A stdio server's link: why the gateway cut it off, if it did.
        link: Option<Arc<Link>>,
        /// The sessions' turn it was started for (see `sessions.rs`).
        generation: u64,
    },
    Failed(String),
    Ended,
}

/// A mounted server. Cloning shares it.
#[derive(Clone)]
pub(crate) struct Server(Arc<Inner>);

struct Inner {
    settings: ServerSettings,
    launch: Option<Launch>,
    state: Mutex<State>,
    listing: RwLock<Option<Listing>>,
    /// Bumped each time a server of the mount lists tools other than before (shared by the
    /// servers of one [`Mounts`](super::Mounts)).
    changes: Arc<watch::Sender<u64>>,
    /// Taken while the tools are listed again, so that the last listing stored is the newest.
    relisting: Mutex<()>,
    /// A re-listing is asked for and has not begun: the notifications that come meanwhile
    /// need no other (a server sending a flood of them gets one listing at a time, with at
    /// most one waiting, not a task each).
    relist_waiting: AtomicBool,
    /// The tools (by their names on the server) it listed once and no longer lists.
    retired: std::sync::Mutex<BTreeSet<String>>,
    /// The largest message it may send (`[mcp] max_message_bytes`).
    max_message: usize,
    /// Taken by calls of tools that are not read-only, unless the entry says `parallel`.
    pub(crate) mutations: Mutex<()>,
    /// Which session's calls run now: those of different sessions take turns.
    sessions: Sessions,
}

impl Server {
    /// A server not started yet; `changes` is bumped when its tool list changes.
    pub(crate) fn new(
        settings: ServerSettings,
        launch: Option<Launch>,
        max_message: usize,
        changes: Arc<watch::Sender<u64>>,
    ) -> Self {
        Server(Arc::new(Inner {
            settings,
            launch,
            state: Mutex::new(State::NotStarted),
            listing: RwLock::new(None),
            changes,
            relisting: Mutex::new(()),
            relist_waiting: AtomicBool::new(false),
            retired: std::sync::Mutex::default(),
            max_message,
            mutations: Mutex::new(()),
            sessions: Sessions::default(),
        }))
    }

    pub(crate) fn settings(&self) -> &ServerSettings {
        &self.0.settings
    }

    pub(crate) fn name(&self) -> &str {
        &self.0.settings.name
    }

    pub(crate) fn mutations(&self) -> &Mutex<()> {
        &self.0.mutations
    }

    pub(crate) fn sessions(&self) -> &Sessions {
        &self.0.sessions
    }

    /// Its tools and instructions, starting it if it has not started yet.
    pub(crate) async fn listing(&self) -> Result<Listing, String> {
        if let Some(listing) = self.stored_listing() {
            return Ok(listing);
        }
        self.connection().await?;
        self.stored_listing()
            .ok_or_else(|| format!("the MCP server `{}` listed no tools", self.name()))
    }

    fn stored_listing(&self) -> Option<Listing> {
        self.0
            .listing
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether it listed the tool `remote` (its name on the server) once and no longer does.
    pub(crate) fn no_longer_offers(&self, remote: &str) -> bool {
        self.0
            .retired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(remote)
    }

    /// Whether `local` (`server__tool`) is the name here of a tool it no longer lists.
    pub(crate) fn retired_here(&self, local: &str) -> bool {
        let retired = self.0.retired.lock().unwrap_or_else(|e| e.into_inner());
        retired.iter().any(|remote| {
            crate::tool::names::mounted_name(self.name(), &self.settings().local_name(remote))
                == local
        })
    }

    /// What runs when the server says its tool list changed: its tools are listed again,
    /// apart from the connection's handler. Weak, so a connection does not keep its server.
    fn on_tools_changed(&self) -> ToolsChanged {
        let server: Weak<Inner> = Arc::downgrade(&self.0);
        Arc::new(move || {
            if let Some(inner) = server.upgrade()
                && !inner.relist_waiting.swap(true, Ordering::AcqRel)
            {
                tokio::spawn(async move { Server(inner).relist().await });
            }
        })
    }

    /// Lists its tools again over the running connection (it said they changed); when they
    /// differ from what it listed before, keeps the new listing, remembers the tools it no
    /// longer lists (their calls fail saying so) and bumps the mount's changes.
    async fn relist(&self) {
        let _relisting = self.0.relisting.lock().await;
        // From here a notification asks for a listing after this one.
        self.0.relist_waiting.store(false, Ordering::Release);
        let connection = match &*self.0.state.lock().await {
            State::Running { connection, .. } => connection.clone(),
            _ => return,
        };
        let tools = match connection.list_tools().await {
            Ok(tools) => tools,
            Err(why) => {
                tracing::warn!(server = self.name(), "{why}; its earlier tool list stays");
                return;
            }
        };
        self.keep(Listing {
            tools,
            instructions: connection.instructions(),
        });
    }

    /// Keeps `listing` as what the server lists; when it differs from an earlier one, the
    /// tools it no longer lists are remembered (their calls fail saying so) and the mount's
    /// changes are bumped.
    fn keep(&self, listing: Listing) {
        let before = {
            let mut stored = self.0.listing.write().unwrap_or_else(|e| e.into_inner());
            if stored.as_ref() == Some(&listing) {
                return;
            }
            match stored.replace(listing.clone()) {
                Some(before) => before,
                None => return,
            }
        };
        {
            let mut retired = self.0.retired.lock().unwrap_or_else(|e| e.into_inner());
            for tool in &before.tools {
                if !listing.tools.iter().any(|t| t.name == tool.name) {
                    retired.insert(tool.name.to_string());
                }
            }
            for tool in &listing.tools {
                retired.remove(tool.name.as_ref());
            }
        }
        tracing::info!(
            server = self.name(),
            tools = listing.tools.len(),
            "the MCP server's tool list changed"
        );
        self.0.changes.send_modify(|n| *n += 1);
    }

    /// Where it is in its life.
    pub(crate) async fn state(&self) -> ServerState {
        let mut state = self.0.state.lock().await;
        match &mut *state {
            State::NotStarted => ServerState::NotStarted,
            State::Running {
                connection,
                process,
                ..
            } => {
                if connection.is_closed()
                    || process.as_mut().is_some_and(|p| p.exit_text().is_some())
                {
                    ServerState::Died(self.death_text(process.as_deref_mut()).await)
                } else {
                    ServerState::Running(process.as_deref().and_then(ServerProcess::pid))
                }
            }
            State::Failed(why) => ServerState::Failed(why.clone()),
            State::Ended => ServerState::Ended,
        }
    }

    /// A live connection: the running one, else a new start (the first, or once again after
    /// the server died). A server that cannot be started stays failed.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, String> {
        let generation = self.0.sessions.generation();
        self.connection_for(generation).await
    }

    /// [`Server::connection`] for a call of the sessions' turn `generation`: a process
    /// started for an older turn served another session, so it is ended and started afresh
    /// (and its tools listed again).
    pub(crate) async fn connection_for(&self, generation: u64) -> Result<Arc<Connection>, String> {
        let mut state = self.0.state.lock().await;
        match &mut *state {
            State::Running {
                connection,
                process,
                generation: started_for,
                ..
            } => {
                let dead = connection.is_closed()
                    || process.as_mut().is_some_and(|p| p.exit_text().is_some());
                if !dead && *started_for >= generation {
                    return Ok(connection.clone());
                }
                // It died, or served another session: start it once more; if that fails,
                // it stays failed.
                if let State::Running {
                    connection,
                    process,
                    ..
                } = std::mem::replace(&mut *state, State::NotStarted)
                {
                    if let Some(process) = process {
                        process.end().await;
                    }
                    if let Ok(connection) = Arc::try_unwrap(connection) {
                        connection.close().await;
                    }
                }
            }
            State::NotStarted => {}
            State::Failed(why) => return Err(why.clone()),
            State::Ended => {
                return Err(format!(
                    "the MCP server `{}` was ended with the session",
                    self.name()
                ));
            }
        }
        match self.start().await {
            Ok((connection, process, link)) => {
                let connection = Arc::new(connection);
                *state = State::Running {
                    connection: connection.clone(),
                    process: process.map(Box::new),
                    link,
                    generation,
                };
                Ok(connection)
            }
            Err(why) => {
                *state = State::Failed(why.clone());
                Err(why)
            }
        }
    }

    /// Why the connection ended, for a call that was running: how the process ended and
    /// its last stderr lines.
    pub(crate) async fn failure_text(&self, failure: &CallFailure) -> String {
        match failure {
            CallFailure::Closed => {
                let mut state = self.0.state.lock().await;
                let (process, link) = match &mut *state {
                    State::Running { process, link, .. } => (process, link.as_ref()),
                    _ => return "the connection closed".to_owned(),
                };
                if let Some(reason) = link.and_then(|link| link.reason()) {
                    // Its input is closed; whether it noticed or not, it ends now.
                    if let Some(process) = process.take() {
                        process.end().await;
                    }
                    return format!("the gateway cut it off: {reason}");
                }
                self.death_text(process.as_deref_mut()).await
            }
            CallFailure::Cancelled => "the call was cancelled".to_owned(),
            CallFailure::Other(text) => text.clone(),
        }
    }

    async fn death_text(&self, process: Option<&mut ServerProcess>) -> String {
        let Some(process) = process else {
            return "the connection closed".to_owned();
        };
        // The process may still be on its way out when the stream closes.
        let mut exit = None;
        for _ in 0..20 {
            exit = process.exit_text();
            if exit.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut text = match exit {
            Some(exit) => {
                process.stderr_settled().await;
                format!("its process {exit}")
            }
            None => "it closed its output".to_owned(),
        };
        if let Some(tail) = process.stderr.text() {
            text.push_str(&format!("; its last standard error lines:\n{tail}"));
        }
        text
    }

    async fn start(
        &self,
    ) -> Result<(Connection, Option<ServerProcess>, Option<Arc<Link>>), String> {
        let settings = &self.0.settings;
        let timeout = settings.startup_timeout;
        match &settings.transport {
            ServerTransport::Stdio { command, .. } => {
                let launch = self.0.launch.as_ref().ok_or_else(|| {
                    format!("the MCP server `{}` has no launch settings", self.name())
                })?;
                // The server's whole life is one call of its sandbox: what the guards
                // compare with is taken before it starts.
                if let Some(sandbox) = &launch.sandbox {
                    sandbox.before_call();
                }
                let (mut process, stdout, stdin) = ServerProcess::start(launch).await.map_err(|e| {
                    format!(
                        "the MCP server `{}` could not be started: `{}` failed ({e}); fix `command` in [mcp.servers.{}]",
                        self.name(),
                        command.join(" "),
                        self.name()
                    )
                })?;
                let (client, link) = LineClient::new(stdout, stdin, self.0.max_message);
                let opened = tokio::time::timeout(timeout, async {
                    let connection = Connection::open(client, self.on_tools_changed()).await?;
                    self.list_at_start(&connection).await?;
                    Ok::<_, String>(connection)
                })
                .await;
                match opened {
                    Ok(Ok(connection)) => Ok((connection, Some(process), Some(link))),
                    Ok(Err(why)) => {
                        let death = self.death_text(Some(&mut process)).await;
                        // rmcp's words for a closed pipe say less than the exit status does.
                        let why = if process.exit_text().is_some() {
                            "it ended before completing the MCP handshake".to_owned()
                        } else {
                            why
                        };
                        process.end().await;
                        Err(self.start_failure(&why, &death))
                    }
                    Err(_) => {
                        let why = format!(
                            "it did not answer the MCP handshake within {} s (startup_timeout_secs)",
                            timeout.as_secs()
                        );
                        let death = self.death_text(Some(&mut process)).await;
                        process.end().await;
                        Err(self.start_failure(&why, &death))
                    }
                }
            }
            ServerTransport::Http { .. } => {
                let connection = tokio::time::timeout(timeout, async {
                    let connection =
                        super::http::connect(settings, self.0.max_message, self.on_tools_changed())
                            .await?;
                    self.list_at_start(&connection).await?;
                    Ok::<_, String>(connection)
                })
                .await
                .map_err(|_| {
                    format!(
                        "it did not answer within {} s (startup_timeout_secs)",
                        timeout.as_secs()
                    )
                })
                .and_then(|r| r)
                .map_err(|why| self.start_failure(&why, "no process of its own"))?;
                Ok((connection, None, None))
            }
        }
    }

    fn start_failure(&self, why: &str, death: &str) -> String {
        format!(
            "The MCP server `{name}` could not be started: {why}; {death}. Fix its entry [mcp.servers.{name}] (or the server itself); its tools fail until then.",
            name = self.name()
        )
    }

    /// Lists its tools at each start: a server started again (it died, or served another
    /// session) may list other tools than before.
    async fn list_at_start(&self, connection: &Connection) -> Result<(), String> {
        let tools = connection.list_tools().await?;
        self.keep(Listing {
            tools,
            instructions: connection.instructions(),
        });
        Ok(())
    }

    /// Ends the server (its process and everything in its group); later uses fail.
    pub(crate) async fn end(&self) {
        let mut state = self.0.state.lock().await;
        if let State::Running {
            connection,
            process,
            ..
        } = std::mem::replace(&mut *state, State::Ended)
        {
            if let Some(process) = process {
                process.end().await;
            }
            if let Ok(connection) = Arc::try_unwrap(connection) {
                connection.close().await;
            }
        }
        if let Some(sandbox) = self.0.launch.as_ref().and_then(|l| l.sandbox.as_ref()) {
            sandbox.end_session();
        }
    }

    /// After one of its calls: what a sandboxed server planted where other programs run
    /// files by themselves, or in git's settings, is taken away as after a bash call (it
    /// still runs, so what it does later counts too); one sentence per path.
    pub(crate) fn undo_plants(&self) -> Vec<String> {
        let Some(sandbox) = self.0.launch.as_ref().and_then(|l| l.sandbox.as_ref()) else {
            return Vec::new();
        };
        let mut undone = sandbox.after_call(true);
        undone.extend(sandbox.after_call_plants(true));
        undone
    }
}
