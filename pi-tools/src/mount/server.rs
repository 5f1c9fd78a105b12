//! One mounted server's life: started on first use (or at once when eager), its tool listing
//! kept, restarted once when it dies, its failure to start kept with its stderr tail, and
//! ended with the session.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::Tool;
use tokio::sync::Mutex;

use super::client::{CallFailure, Connection};
use super::lines::{LineClient, Link};
use super::process::{Launch, ServerProcess};
use super::sessions::Sessions;
use crate::config::{ServerSettings, ServerTransport};

/// What a server listed when it first started.
#[derive(Debug, Clone)]
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
    listing: OnceLock<Listing>,
    /// The largest message it may send (`[mcp] max_message_bytes`).
    max_message: usize,
    /// Taken by calls of tools that are not read-only, unless the entry says `parallel`.
    pub(crate) mutations: Mutex<()>,
    /// Which session's calls run now: those of different sessions take turns.
    sessions: Sessions,
}

impl Server {
    pub(crate) fn new(
        settings: ServerSettings,
        launch: Option<Launch>,
        max_message: usize,
    ) -> Self {
        Server(Arc::new(Inner {
            settings,
            launch,
            state: Mutex::new(State::NotStarted),
            listing: OnceLock::new(),
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
        if let Some(listing) = self.0.listing.get() {
            return Ok(listing.clone());
        }
        self.connection().await?;
        self.0
            .listing
            .get()
            .cloned()
            .ok_or_else(|| format!("the MCP server `{}` listed no tools", self.name()))
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
    /// (its tool listing is kept).
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
                    let connection = Connection::open(client).await?;
                    self.list_once(&connection).await?;
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
                    let connection = super::http::connect(settings, self.0.max_message).await?;
                    self.list_once(&connection).await?;
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

    async fn list_once(&self, connection: &Connection) -> Result<(), String> {
        if self.0.listing.get().is_some() {
            return Ok(());
        }
        let tools = connection.list_tools().await?;
        let _ = self.0.listing.set(Listing {
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
