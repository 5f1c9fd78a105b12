//! The MCP request handler: initialize, ping, logging/setLevel, tools/list and tools/call
//! over the runner.

#![expect(
    deprecated,
    reason = "MCP's logging is deprecated by a future protocol revision, not yet gone"
)]

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, TASKS_EXTENSION_ID, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use tokio::sync::{RwLock, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tokio_util::task::task_tracker::TaskTrackerToken;

use super::elicit::{ClientApprover, client_session};
use super::error::McpError;
use super::logging::SessionLevel;
use super::progress::ProgressSink;
use super::roots::FollowedRoots;
pub(crate) use super::served::Served;
use super::sessions::{Busy, Sessions};
use super::task_support::{TaskMode, TaskSupport};
use super::tasks::Tasks;
use super::tools::McpTools;
use crate::core::{RunnerConfig, ToolCall, execute_tool_calls};

/// The server's name in the `initialize` answer.
pub(crate) const SERVER_NAME: &str = "pi-tools";

/// One session: its calls, limits, logging level and cancellation. Every `tools/call` is a
/// one-call batch of the runner, so lookup, argument preparation, validation, hooks,
/// timeout and cancellation behave exactly as they do for a model's batch.
///
/// A handle: the protocol library holds one, and the stdio transport another, for the calls
/// it runs itself (see `lines`). When the last handle is dropped (its transport ended, or an
/// HTTP session closed or timed out), every call has ended and its execution environment's
/// session is ended too.
#[derive(Clone)]
pub(crate) struct ToolServer(Arc<Session>);

/// What a session's handles share.
pub(crate) struct Session {
    pub(super) served: Arc<Served>,
    pub(super) config: RunnerConfig,
    /// Parallel-mode calls share it; a sequential-mode call holds it alone, so it never
    /// overlaps another call of the session.
    exclusive: RwLock<()>,
    /// At most `max_concurrency` calls execute at once across the session (the runner's
    /// bound is per batch, and every call here is a batch of its own); more wait their turn.
    in_flight: Option<Semaphore>,
    /// The client's session: its environment, policy and roots. Its token is cancelled when
    /// the session ends: every call in flight is then cancelled.
    pub(super) session: Arc<crate::session::Session>,
    /// The calls running, so the end of a session (or of the server) can wait for their
    /// cleanup.
    pub(super) calls: TaskTracker,
    /// Counts this session as running in `calls` until it is dropped (its environment
    /// ended), so the server's end waits for that too.
    _alive: TaskTrackerToken,
    pub(super) level: SessionLevel,
    /// The HTTP server's sessions, which a call keeps busy and which end its calls at once.
    pub(super) sessions: Option<Arc<Sessions>>,
    /// The environment for the client's roots, when the server follows them.
    pub(super) roots: FollowedRoots,
    /// Asks the client's user about calls the policy says `ask` for (when the configuration
    /// carries the toolbox's policy).
    pub(super) approver: Option<Arc<ClientApprover>>,
    /// The session's notices are announced to its client (from its first call on).
    pub(super) announcing: std::sync::atomic::AtomicBool,
    /// Stops the task that tells the client of tool list changes: the session sleeps (its
    /// peer must go with its worker) or was initialized again (woken, with a new peer).
    pub(super) telling: std::sync::Mutex<Option<CancellationToken>>,
    /// The files this session's results pointed at, which it may read back.
    links: super::resource_files::IssuedLinks,
    /// Ends every open `subscriptions/listen` of the session (see `listen`): the stdio
    /// input ended, so no client is left to listen.
    listening: CancellationToken,
    /// The stateless house (see `house`): it serves requests of any client, so it keeps
    /// nothing of one (a logging level, a way to announce notices).
    pub(super) shared: bool,
    /// Tells this session from the others of the process: the owner of the tasks it made
    /// with a 2025-11-25 `params.task`, which its `tasks/list` lists.
    pub(super) key: u64,
}

/// The key of the next session (see [`Session::key`]).
static NEXT_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl ToolServer {
    pub(crate) fn new(
        tools: &McpTools,
        config: RunnerConfig,
        shutdown: CancellationToken,
    ) -> Result<Self, McpError> {
        Ok(Self::for_session(
            Served::new(tools)?,
            config,
            shutdown,
            &TaskTracker::new(),
            None,
            false,
        ))
    }

    /// One session of a server whose sessions share `served`; its calls and its own life
    /// are tracked in `calls`. `sessions` is the HTTP server's session table, when the
    /// session is one of it; `shared`: it is the stateless house, serving requests of any
    /// client (its roots' configurations are then kept per list of roots, see `house`).
    pub(crate) fn for_session(
        served: Arc<Served>,
        config: RunnerConfig,
        shutdown: CancellationToken,
        calls: &TaskTracker,
        sessions: Option<Arc<Sessions>>,
        shared: bool,
    ) -> Self {
        let in_flight = config.max_concurrency.map(|n| Semaphore::new(n.max(1)));
        // The client's own session, whose policy hook asks this client.
        let (config, session, approver) = client_session(config, shutdown);
        ToolServer(Arc::new(Session {
            served,
            config,
            exclusive: RwLock::new(()),
            in_flight,
            session,
            calls: calls.clone(),
            _alive: calls.token(),
            level: SessionLevel::default(),
            sessions,
            roots: match shared {
                true => FollowedRoots::keeping(super::house::ROOTS_KEPT, true),
                false => FollowedRoots::default(),
            },
            approver,
            announcing: std::sync::atomic::AtomicBool::new(false),
            telling: std::sync::Mutex::new(None),
            links: Default::default(),
            listening: CancellationToken::new(),
            shared,
            key: NEXT_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }))
    }

    /// The session sleeps: its environments (the configuration's and those made for the
    /// client's roots) let go of their descriptors, watches and empty temporary
    /// directories, which their next command takes up again.
    pub(crate) fn hibernate(&self) {
        if let Some(telling) = self
            .telling
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            telling.cancel();
        }
        self.session.hibernate();
        self.roots.hibernate();
    }

    /// Marks the request's HTTP session busy while the call runs (so it does not expire),
    /// and tells it how to end this server's calls and processes.
    pub(super) fn keep_session_busy(&self, context: &RequestContext<RoleServer>) -> Option<Busy> {
        let sessions = self.sessions.as_ref()?;
        let parts = context.extensions.get::<axum::http::request::Parts>()?;
        sessions.call_started(&parts.headers, &self.session)
    }

    /// Cancelled to end every open `subscriptions/listen` of the session (see `listen`).
    pub(crate) fn listening_ended(&self) -> &CancellationToken {
        &self.listening
    }

    /// The session's calls, to wait for at its end.
    pub(crate) fn calls(&self) -> TaskTracker {
        self.calls.clone()
    }

    /// The session's runner configuration.
    pub(crate) fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// The server's tasks.
    pub(crate) fn tasks(&self) -> &Arc<Tasks> {
        &self.served.tasks
    }

    /// How the calls of `tool` (a tool served) may become tasks.
    pub(crate) fn task_mode(&self, tool: &str) -> TaskMode {
        self.served
            .listed()
            .task_modes
            .get(tool)
            .copied()
            .unwrap_or(TaskMode {
                support: TaskSupport::Optional,
                after: super::tools::DEFAULT_TASK_AFTER,
            })
    }

    /// The client's session.
    pub(crate) fn client_session(&self) -> &Arc<crate::session::Session> {
        &self.session
    }

    pub(crate) fn served(&self) -> &Served {
        &self.served
    }

    pub(crate) fn issued_links(&self) -> &super::resource_files::IssuedLinks {
        &self.links
    }

    pub(crate) fn followed_roots(&self) -> &FollowedRoots {
        &self.roots
    }

    /// `call`, tracked among the session's calls (its end waits for it).
    pub(crate) fn track<F: std::future::Future>(
        &self,
        call: F,
    ) -> tokio_util::task::task_tracker::TrackedFuture<F> {
        self.calls.track_future(call)
    }

    /// Runs one call under the session's shared/exclusive lock; its tool asks its client
    /// through `asker`. `request_cancel` is the request's own token (cancelled by
    /// `notifications/cancelled`); the end of the session cancels the call too.
    pub(crate) async fn run(
        &self,
        config: &RunnerConfig,
        call: ToolCall,
        request_cancel: &CancellationToken,
        sink: &ProgressSink,
        asker: super::asker::McpAsker,
    ) -> Option<crate::core::ToolResultMessage> {
        let mut config = config.clone();
        config.extensions = std::mem::take(&mut config.extensions).with(asker.shared());
        let config = &config;
        let cancel = self.session.cancel().child_token();
        let listed = self.served.listed();
        let work = async {
            // A call cancelled while it waits for its turn stops waiting and still goes
            // through the runner, which answers it "Operation aborted" without executing it.
            let turn = async {
                let permit = match &self.in_flight {
                    Some(slots) => Some(slots.acquire().await),
                    None => None,
                };
                let guard = if listed.tools.must_run_alone(&call.name, config.execution) {
                    Guard::Exclusive(self.exclusive.write().await)
                } else {
                    Guard::Shared(self.exclusive.read().await)
                };
                (permit, guard)
            };
            let _turn = tokio::select! {
                turn = turn => Some(turn),
                _ = cancel.cancelled() => None,
            };
            execute_tool_calls(
                &listed.tools,
                std::slice::from_ref(&call),
                config,
                &cancel,
                sink,
            )
            .await
        };
        tokio::pin!(work);
        let outcome = tokio::select! {
            biased;
            outcome = &mut work => outcome,
            _ = request_cancel.cancelled() => {
                cancel.cancel();
                work.await
            }
        };
        let message = outcome.messages.into_iter().next();
        if let Some(message) = &message {
            self.links.remember(&message.result.links);
        }
        message
    }
}

impl std::ops::Deref for ToolServer {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.0
    }
}

impl Session {
    /// Ends the session now (its calls cancelled, its processes and jobs ended), without
    /// waiting for the last handle to go: the house ends so when its server stops.
    pub(crate) fn end(&self) {
        self.session.end();
        self.roots.end();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end();
    }
}

/// Either side of the session lock, held (never read) until the call ends.
#[expect(dead_code, reason = "a guard is held for its drop, never read")]
enum Guard<'a> {
    Shared(tokio::sync::RwLockReadGuard<'a, ()>),
    Exclusive(tokio::sync::RwLockWriteGuard<'a, ()>),
}

impl ServerHandler for ToolServer {
    /// Named to the HTTP transport, which checks the `Mcp-Param-*` headers of a call of a
    /// tool with an argument mirrored into one (`param_headers`); `None` for every other
    /// tool, whose calls need no check.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.served.listed().header_tools.get(name).cloned()
    }

    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .enable_tasks()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_completions()
            .build();
        // Listed even when empty: prompts/list is always answered.
        capabilities.prompts = Some(PromptsCapability::default());
        // Tools that may be replaced while the server runs are announced as they change.
        if self.served.may_change()
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        let info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.served.server_info.0.clone(),
            self.served.server_info.1.clone(),
        ));
        match &self.served.instructions {
            Some(text) => info.with_instructions(text.clone()),
            None => info,
        }
    }

    /// The 2025-11-25 handshake: the tasks extension (see `task_call`) is offered to a
    /// client that declares it; an older client, whose capabilities have no extensions, is
    /// not shown it.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        if !request.capabilities.supports_tasks()
            && let Some(extensions) = &mut result.capabilities.extensions
        {
            extensions.remove(TASKS_EXTENSION_ID);
            if extensions.is_empty() {
                result.capabilities.extensions = None;
            }
        }
        Ok(result)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.tell_of_tool_changes(context.peer);
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if super::era::is_stateless(&context) {
            return Err(super::era::removed(
                "logging/setLevel",
                super::era::SET_LEVEL_INSTEAD,
            ));
        }
        // A request of a stateless server sets no level for the next one.
        if !self.shared {
            self.level.set(request.level);
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!(
                    "tools/list has a single page and gives no cursor; `{cursor}` is not one. Ask again without a cursor."
                ),
                None,
            ));
        }
        Ok(ListToolsResult::with_all_items(
            self.served.listed().listing.clone(),
        ))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.served.tasks.get(&request.task_id)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let check = super::tool_round::answers_question;
        let tasks = &self.served.tasks;
        tasks.update(&request.task_id, request.input_responses, check)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.served.tasks.cancel(&request.task_id).map(|_| ())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.prompt_listing())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.get_prompt_in(request, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.completion(request).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.resource_listing())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(self.resource_templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(self.read_resource_for(&request.uri, &context).await?.into())
    }

    /// A 2026-07-28 `subscriptions/listen` is acknowledged with what this server can send
    /// (see `listen`).
    fn accepted_subscription_filter(
        &self,
        asked: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.listen_filter(asked))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_to(subscription).await
    }

    /// The resources served do not change once listed (a spilled output is complete when
    /// its result is given): a 2025-11-25 subscription is taken and nothing follows.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    /// Requests the protocol layer could not read as one of the methods it knows: a known
    /// method with unusable parameters, or an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        if super::era::is_stateless(&context)
            && let Some(instead) = super::era::removed_instead(method)
        {
            return Err(super::era::removed(method, instead));
        }
        if let Some(answer) = self.answer_2025(&request, context).await {
            return answer;
        }
        Err(super::unknown_method::answer(&request.method, &request))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.served.listed().tools.get(&request.name).is_none() {
            return Err(self.unknown_tool(&request.name));
        }
        if super::era::is_stateless(&context) {
            return Box::pin(self.call_stateless(request, context)).await;
        }
        self.call_in_session(request, context).await
    }
}
