//! The Streamable HTTP sessions: rmcp's in-memory session manager, with the session's life
//! decided here.
//!
//! - A session lives while its client uses it: it ends when the client deletes it, when the
//!   server stops, or, on a server that ends idle sessions when full (`WhenFull::EndIdle`),
//!   when it must make room for a new one (past `max_sessions`, the least recently used
//!   session that is not busy goes; by default the new one is refused instead). Expiry by
//!   idle time is opt-in.
//! - A session is busy while one of its calls runs or one of its streams is open (an answer
//!   stream, or the client's `GET` stream for server messages); a busy session is never
//!   evicted and never expires. Its idle clock starts when the last of those ends.
//! - An ended session is gone at once: the next request gets 404 (the protocol library
//!   would answer 500 for the seconds its worker takes to wind down).
//! - Ending a session (DELETE, expiry, eviction, the server's end) cancels its calls and
//!   ends its execution environment's processes at once; the library's worker is closed once
//!   the cancelled calls have sent their answers, so nothing is left to send to a closed
//!   session.
//! - An idle session may sleep, giving up the library's worker until its next request
//!   (see `hibernation`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::Duration;

use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::hibernation::awake_idle;
use super::opening::Opening;
use super::replay::{KEPT_EVENTS, Replay};
use super::server::ToolServer;
use crate::session::Session;

/// How long an ended session's worker waits for its cancelled calls to send their answers.
const WIND_DOWN: Duration = Duration::from_secs(5);

/// How long an ended session's worker stays after its last call's handler returned, for
/// the answer to pass from the protocol library's service to the worker (closing it sooner
/// makes the library log the answer's loss as an error). A timing, not a handshake: the
/// library offers none; on a machine loaded enough to take longer, the loss is logged.
const ANSWER_PASSAGE: Duration = Duration::from_millis(500);

/// How long a request found for a session may take to come to it before the session may
/// sleep all the same (the library refused it on the way, for a bad header say). A found
/// request comes within microseconds, or after the wake it waits for.
const ON_WAY: Duration = Duration::from_secs(30);

/// How long a woken session stays awake at least. The protocol library forgets a finished
/// wake a moment after it (a task of its own removes its note of it): a session that fell
/// asleep again and was woken within that moment would be taken as woken without being
/// so, and its request answered `500 Session not found` (issue 50, finding 4).
const WOKEN_GRACE: Duration = Duration::from_secs(1);

/// How long a session just initialised waits awake for its client's
/// `notifications/initialized`, which comes right after the answer. Asleep sooner, the
/// session would be woken by it at once (a new worker, the handshake replayed: the memory
/// of a session made twice, for a notification); a client that never sends it has its
/// session sleep after this.
const INITIALIZED_WAIT: Duration = Duration::from_secs(2);

/// The header that names a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The sessions of one server.
pub(crate) struct Sessions {
    pub(super) inner: Arc<LocalSessionManager>,
    /// Opt-in expiry: a session idle this long ends.
    pub(super) idle: Option<Duration>,
    /// The most sessions kept.
    pub(super) max: usize,
    /// What a new session past `max` meets.
    pub(super) when_full: super::session_bound::WhenFull,
    /// Locked before a session's activity when both are, never after.
    pub(super) table: Mutex<HashMap<SessionId, Arc<Life>>>,
    /// Awake sessions counted idle (see `hibernation`).
    pub(super) awake_idle: AtomicUsize,
    /// Sessions let in by the gate and not yet in the table (see `opening`); changed with
    /// the table locked, and counted with it against `max`.
    pub(super) opening: AtomicUsize,
    /// Servers on their way between the library's service factory and the session they
    /// serve, by the task of the request that makes or wakes the session.
    pub(super) handoff: Mutex<HashMap<tokio::task::Id, ToolServer>>,
    pub(super) me: Weak<Sessions>,
}

/// One session's activity, how to end what runs for it, and its answer streams' events.
pub(crate) struct Life {
    pub(super) id: SessionId,
    pub(super) sessions: Weak<Sessions>,
    pub(super) activity: Mutex<Activity>,
    pub(super) replay: Arc<Replay>,
    /// The client's session, ended (its calls cancelled, its processes ended) with this.
    pub(super) session: OnceLock<Arc<Session>>,
    /// Told when the session stops being busy.
    pub(super) quiet: Notify,
    /// The answer streams open, by the id of the request they answer, so a call can close
    /// its own (see [`close_answer_stream`]).
    pub(super) answering: Mutex<Vec<(String, Arc<CancellationToken>)>>,
    /// The session's server, kept while the session sleeps.
    pub(super) server: Mutex<Option<ToolServer>>,
    /// The client's `initialize` parameters, to wake the session with.
    pub(super) init: Mutex<Option<Box<InitializeRequestParams>>>,
    /// Held while the session falls asleep or wakes.
    pub(super) waking: tokio::sync::Mutex<()>,
    /// Told when a wake has ended, done or failed.
    pub(super) woke: Notify,
}

pub(super) struct Activity {
    pub(super) busy: usize,
    /// Of `busy`, the client's streams for server messages (`GET`), which carry no answer.
    pub(super) listening: usize,
    /// When the session was last asked anything, or last stopped being busy.
    pub(super) last_used: Instant,
    /// Whether the library's worker is closed until the next request.
    pub(super) asleep: bool,
    /// Requests found for it (`has_session`) and still on their way to it: it must not fall
    /// asleep before they come. A count, as many may be on their way at once (a wake's
    /// waiters among them).
    pub(super) on_way: usize,
    /// When the last of them was found: one that never comes (refused by the library on
    /// the way) keeps the session awake only for [`ON_WAY`].
    pub(super) on_way_since: Instant,
    /// Woken, its `initialize` handshake not yet replayed: a request now would reach a
    /// server that is not yet initialised (which ends the session), so it waits.
    pub(super) waking_up: bool,
    /// A request has taken on waking it; the others wait for that wake (see `has_session`).
    pub(super) wake_claimed: bool,
    /// Whether it counts among the server's awake idle sessions.
    pub(super) idle_counted: bool,
    /// Workers closed for sleep whose end the library has yet to report.
    pub(super) workers_closing: usize,
    /// When its last wake ended: it stays awake [`WOKEN_GRACE`] from then.
    pub(super) woke_at: Option<Instant>,
    /// When its `initialize` was answered, until its client's `initialized` comes: it
    /// stays awake [`INITIALIZED_WAIT`] from then for it.
    pub(super) initialized_at: Option<Instant>,
}

impl Activity {
    /// A request on its way to the session was found.
    pub(super) fn found(&mut self) {
        self.on_way += 1;
        self.on_way_since = Instant::now();
    }

    /// A request that was on its way has come.
    pub(super) fn came(&mut self) {
        self.on_way = self.on_way.saturating_sub(1);
    }

    /// Whether it is idle and awake, with no request on its way, was not just woken, and
    /// is not waiting for its client's `initialized`.
    pub(super) fn may_sleep(&self) -> bool {
        self.idle_and_awake() && self.grace_left().is_none()
    }

    /// Its `initialize` was answered: the client's `initialized` is due.
    pub(super) fn initialize_answered(&mut self) {
        self.initialized_at = Some(Instant::now());
    }

    /// Its client's `initialized` came.
    pub(super) fn initialized(&mut self) {
        self.initialized_at = None;
    }

    fn idle_and_awake(&self) -> bool {
        let expecting = self.on_way > 0 && self.on_way_since.elapsed() < ON_WAY;
        self.busy == 0 && !self.asleep && !self.waking_up && !expecting
    }

    /// How long it must stay awake yet, having been woken or waiting for `initialized`.
    fn grace_left(&self) -> Option<Duration> {
        let left_of = |since: Option<Instant>, wait: Duration| {
            since.and_then(|at| wait.checked_sub(at.elapsed()))
        };
        let left = left_of(self.woke_at, WOKEN_GRACE)
            .into_iter()
            .chain(left_of(self.initialized_at, INITIALIZED_WAIT))
            .max()?;
        (!left.is_zero()).then_some(left)
    }
}

impl Life {
    pub(super) fn new(id: SessionId, sessions: Weak<Sessions>) -> Self {
        Life {
            id,
            sessions,
            activity: Mutex::new(Activity {
                busy: 0,
                listening: 0,
                last_used: Instant::now(),
                asleep: false,
                on_way: 0,
                on_way_since: Instant::now(),
                waking_up: false,
                wake_claimed: false,
                idle_counted: false,
                workers_closing: 0,
                woke_at: None,
                initialized_at: None,
            }),
            replay: Arc::default(),
            session: OnceLock::new(),
            quiet: Notify::new(),
            answering: Mutex::default(),
            server: Mutex::default(),
            init: Mutex::default(),
            waking: tokio::sync::Mutex::new(()),
            woke: Notify::new(),
        }
    }

    /// The wake taken on by a request has ended (done, or failed): the requests waiting
    /// for it go on.
    pub(super) fn wake_ended(self: &Arc<Self>) {
        {
            let mut activity = self.activity();
            activity.waking_up = false;
            activity.wake_claimed = false;
            activity.woke_at = Some(Instant::now());
            self.settle(&mut activity);
        }
        self.woke.notify_waiters();
    }

    pub(super) fn activity(&self) -> MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts the session idle if it now is; past the awake idle sessions kept, it falls
    /// asleep.
    pub(super) fn settle(self: &Arc<Self>, activity: &mut Activity) {
        if !activity.may_sleep() {
            // Just woken and idle: looked at again when its time awake is over.
            if activity.idle_and_awake()
                && let Some(left) = activity.grace_left()
                && let Ok(runtime) = tokio::runtime::Handle::try_current()
            {
                let life = Arc::downgrade(self);
                runtime.spawn(async move {
                    tokio::time::sleep(left).await;
                    if let Some(life) = life.upgrade() {
                        let mut activity = life.activity();
                        life.settle(&mut activity);
                    }
                });
            }
            return;
        }
        let Some(sessions) = self.sessions.upgrade() else {
            return;
        };
        if !activity.idle_counted {
            activity.idle_counted = true;
            sessions.awake_idle.fetch_add(1, Ordering::Relaxed);
        }
        // Tried again at each end of a request while past the bound (a session whose
        // parameters were not stored yet, or that a request was on its way to, stayed up).
        // Not when the runtime is gone (a stream dropped as the server ends).
        if sessions.awake_idle.load(Ordering::Relaxed) > awake_idle()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(sessions.sleep(self.id.clone(), Arc::clone(self)));
        }
    }

    /// A request that was on its way has come (a notification or an answer, which keeps the
    /// session busy for no time).
    pub(super) fn arrived(self: &Arc<Self>) {
        let mut activity = self.activity();
        activity.came();
        activity.last_used = Instant::now();
        self.settle(&mut activity);
    }

    pub(super) fn expired(&self, idle: Option<Duration>, now: Instant) -> bool {
        let Some(idle) = idle else {
            return false;
        };
        let activity = self.activity();
        activity.busy == 0 && now.duration_since(activity.last_used) >= idle
    }

    /// When it was last used, if it is idle (and so may make room).
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let activity = self.activity();
        (activity.busy == 0).then_some(activity.last_used)
    }

    pub(super) fn busy(self: &Arc<Self>) -> Busy {
        self.busy_as(false)
    }

    pub(super) fn busy_as(self: &Arc<Self>, listening: bool) -> Busy {
        let mut activity = self.activity();
        activity.busy += 1;
        activity.listening += usize::from(listening);
        activity.last_used = Instant::now();
        if let Some(sessions) = self.sessions.upgrade() {
            sessions.not_idle(&mut activity);
        }
        Busy {
            life: Arc::clone(self),
            listening,
        }
    }

    pub(super) fn end(&self) {
        if let Some(session) = self.session.get() {
            session.end();
        }
    }

    /// Waits until no call runs and no answer is being sent, at most `within`.
    pub(super) async fn quieted(&self, within: Duration) {
        let _ = tokio::time::timeout(within, async {
            loop {
                let quiet = self.quiet.notified();
                let answering = {
                    let activity = self.activity();
                    activity.busy - activity.listening
                };
                if answering == 0 {
                    return;
                }
                quiet.await;
            }
        })
        .await;
    }
}

/// Keeps a session busy until dropped; the idle clock starts when the last one goes.
pub(crate) struct Busy {
    pub(super) life: Arc<Life>,
    pub(super) listening: bool,
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut activity = self.life.activity();
        activity.busy -= 1;
        activity.listening -= usize::from(self.listening);
        activity.last_used = Instant::now();
        if activity.busy == activity.listening {
            self.life.quiet.notify_waiters();
        }
        self.life.settle(&mut activity);
    }
}

impl Sessions {
    /// Sessions that end when deleted, when the server stops, when `max` others need the
    /// room (the least recently used idle one goes), or, if `idle` is given, after that
    /// long without a call or an open stream.
    pub(crate) fn new(
        idle: Option<Duration>,
        max: usize,
        when_full: super::session_bound::WhenFull,
    ) -> Arc<Self> {
        let mut inner = LocalSessionManager::default();
        // The library's own keep-alive counts only messages, so it would end a session in
        // the middle of a long call; a session's life is decided here instead.
        inner.session_config.keep_alive = None;
        // A stream cut while its call runs is resumed from the library's buffer, as large
        // as what `Replay` keeps once the call has ended.
        inner.session_config.channel_capacity = KEPT_EVENTS;
        Arc::new_cyclic(|me| Sessions {
            inner: Arc::new(inner),
            idle,
            max: max.max(1),
            when_full,
            table: Mutex::new(HashMap::new()),
            awake_idle: AtomicUsize::new(0),
            opening: AtomicUsize::new(0),
            handoff: Mutex::default(),
            me: me.clone(),
        })
    }

    pub(super) fn table(&self) -> MutexGuard<'_, HashMap<SessionId, Arc<Life>>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn handoff(&self) -> MutexGuard<'_, HashMap<tokio::task::Id, ToolServer>> {
        self.handoff.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session's life, whether or not its time is up.
    pub(super) fn life(&self, id: &SessionId) -> Option<Arc<Life>> {
        self.table().get(id).cloned()
    }

    /// Stops counting a session among the awake idle ones.
    pub(super) fn not_idle(&self, activity: &mut Activity) {
        if activity.idle_counted {
            activity.idle_counted = false;
            self.awake_idle.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Ends the live session `id` (its client deleted it); `false` when none is live.
    pub(crate) fn end(&self, id: &str) -> bool {
        let id = SessionId::from(id);
        self.live(&id).is_some() && self.end_at_once(&id)
    }

    /// The session's life, if it is live; an expired one is ended here and is not.
    pub(super) fn live(&self, id: &SessionId) -> Option<Arc<Life>> {
        let life = self.table().get(id).cloned()?;
        if life.expired(self.idle, Instant::now()) {
            self.end_at_once(id);
            return None;
        }
        Some(life)
    }

    /// Keeps a place for one more session, counted against the bound until the session is
    /// in the table: below the bound there is one; at it, there is none, unless the server
    /// ends idle sessions when full ([`WhenFull::EndIdle`]): then the least recently used
    /// session that is not busy ends, and there is none only when every session is busy.
    ///
    /// [`WhenFull::EndIdle`]: super::session_bound::WhenFull::EndIdle
    pub(crate) fn make_room(self: &Arc<Self>) -> Option<Arc<Opening>> {
        // Each round ends one idle session; a place ended for this request may be taken by
        // another one arriving at once, so a few rounds are allowed.
        for _ in 0..8 {
            let victim = {
                let table = self.table();
                if table.len() + self.opening.load(Ordering::Relaxed) < self.max {
                    return Some(Opening::counted(self));
                }
                if self.when_full == super::session_bound::WhenFull::Refuse {
                    return None;
                }
                table
                    .iter()
                    .filter_map(|(id, life)| life.idle_since().map(|since| (since, id)))
                    .min()
                    .map(|(_, id)| id.clone())
            };
            let id = victim?;
            tracing::debug!(session = %id, "the least recently used idle session makes room");
            self.end_at_once(&id);
        }
        None
    }

    /// Removes the session and stops what runs for it; the library's worker is closed in
    /// the background once the cancelled calls have answered (or after a short wait).
    pub(super) fn end_at_once(&self, id: &SessionId) -> bool {
        let Some(life) = self.table().remove(id) else {
            return false;
        };
        tracing::debug!(session = %id, "MCP session ended");
        self.not_idle(&mut life.activity());
        life.end();
        // Requests waiting for its wake find it gone.
        life.woke.notify_waiters();
        let inner = Arc::clone(&self.inner);
        let id = id.clone();
        tokio::spawn(async move {
            // Closing the worker while a cancelled call's answer is on its way would leave
            // the answer with nowhere to go (the library logs that as an error).
            life.quieted(WIND_DOWN).await;
            // A call's handler has returned, but the library still passes its answer on to
            // the worker; give that a moment before the worker goes.
            tokio::time::sleep(ANSWER_PASSAGE).await;
            if let Err(err) = inner.close_session(&id).await {
                tracing::debug!(%err, "an ended session's worker could not be closed");
            }
            // The session's own server goes last, ending its environment.
            life.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        });
        true
    }

    /// Marks the session named by a request's headers busy while a call runs, and
    /// remembers its client's session, which ending it ends. `None` when the request has no
    /// live session.
    pub(crate) fn call_started(
        &self,
        headers: &axum::http::HeaderMap,
        session: &Arc<Session>,
    ) -> Option<Busy> {
        let id = headers.get(SESSION_HEADER)?.to_str().ok()?;
        let life = self.live(&SessionId::from(id))?;
        if life.session.get().is_none() {
            let _ = life.session.set(Arc::clone(session));
        }
        Some(life.busy())
    }

    /// Ends every session whose idle time has passed (when expiry is on), until `stop`;
    /// then ends every session. Each is also ended when a request names it, so this only
    /// frees what nobody asks for any more.
    pub(crate) async fn expire_idle(self: Arc<Self>, stop: CancellationToken) {
        if let Some(idle) = self.idle {
            let period = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
            let mut ticks = tokio::time::interval(period);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    () = stop.cancelled() => break,
                }
                let now = Instant::now();
                let expired: Vec<SessionId> = self
                    .table()
                    .iter()
                    .filter(|(_, life)| life.expired(self.idle, now))
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in expired {
                    self.end_at_once(&id);
                }
            }
        } else {
            stop.cancelled().await;
        }
        // The server is stopping: every session ends.
        let all: Vec<SessionId> = self.table().keys().cloned().collect();
        for id in all {
            self.end_at_once(&id);
        }
    }
}
