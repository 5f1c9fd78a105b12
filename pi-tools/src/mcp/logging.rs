//! Logs: plain text on stderr (stdout belongs to the protocol), and a call's own `tracing`
//! events and log lines (a command's stderr lines) sent to its client as
//! `notifications/message` at the level the client asked for with `logging/setLevel`.

#![expect(
    deprecated,
    reason = "MCP's logging is deprecated by a future protocol revision, not yet gone"
)]

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use crate::core::LogLevel;
use tokio::sync::mpsc;
use tracing::{Level, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::dynamic_filter_fn;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Installs a `tracing` subscriber that writes plain-text logs to stderr, filtered by the
/// `RUST_LOG` environment variable (default: warnings and errors, but not the protocol
/// library's warning for each error a client's request is answered with), and forwards the events
/// of a running MCP tool call to that call's client (filtered by the client's
/// `logging/setLevel`, `info` until it sets one). Does nothing when the process already has
/// a global subscriber, so an application's own logging setup wins (its tool events then do
/// not reach MCP clients).
pub fn init_stderr_logging() {
    let (filter, chosen) = match EnvFilter::try_from_default_env() {
        Ok(filter) => (filter, true),
        Err(_) => (EnvFilter::new("warn"), false),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(filter)
        .with_filter(tracing_subscriber::filter::filter_fn(move |meta| {
            chosen || !answered_error(meta)
        }));
    // Events only: spans would be recorded for every request for nothing (this layer
    // forwards events), at a cost per call.
    let to_clients = ClientLogLayer.with_filter(dynamic_filter_fn(|meta, _| {
        meta.is_event()
            && !server_only(meta)
            && CALL_LOG
                .try_with(|log| log.wants(*meta.level()))
                .unwrap_or(false)
    }));
    let installed = tracing_subscriber::registry()
        .with(stderr)
        .with(to_clients)
        .try_init();
    if installed.is_err() {
        tracing::debug!("a tracing subscriber was already installed; it is kept");
    }
}

/// Whether an event is the protocol library's warning that a request was answered with an
/// error (`response error`, with the request's `id` and the `error`): an unknown tool, a
/// task that ended, a bad parameter. That is the client's mistake, answered in full to the
/// client, not a warning about the server, so the default log leaves it out; a `RUST_LOG`
/// the operator sets shows it. (The library's other warnings, such as an answer that could
/// not be sent, have no `error` beside an `id`.)
fn answered_error(meta: &tracing::Metadata<'_>) -> bool {
    let fields = meta.fields();
    meta.target() == "rmcp::service"
        && *meta.level() == Level::WARN
        && fields.field("id").is_some()
        && fields.field("error").is_some()
}

/// The crates whose events are the server's business, not the client's, though they happen
/// within a call: the policy's shell reader traces each token and parse tree at `debug`
/// (under the bare targets `tokenize` and `parse`, so its module path says whose they are).
const SERVER_ONLY: &[&str] = &["brush_parser"];

/// Whether an event belongs to the server's own log only.
fn server_only(meta: &tracing::Metadata<'_>) -> bool {
    let of = |path: &str| {
        SERVER_ONLY.iter().any(|krate| {
            path.strip_prefix(krate)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        })
    };
    of(meta.target()) || meta.module_path().is_some_and(of)
}

tokio::task_local! {
    /// Where the events of the call running in this task go.
    static CALL_LOG: CallLog;
}

/// The session's logging level, as the client set it.
#[derive(Clone)]
pub(crate) struct SessionLevel(Arc<AtomicU8>);

impl Default for SessionLevel {
    fn default() -> Self {
        SessionLevel(Arc::new(AtomicU8::new(rank(LoggingLevel::Info))))
    }
}

impl SessionLevel {
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    /// A level of its own (one request's, in the stateless era) at `level`.
    pub(crate) fn at(level: LoggingLevel) -> Self {
        SessionLevel(Arc::new(AtomicU8::new(rank(level))))
    }

    /// A level of its own that admits nothing: a stateless-era request that asks for no
    /// log lines gets none.
    pub(crate) fn off() -> Self {
        SessionLevel(Arc::new(AtomicU8::new(rank(LoggingLevel::Emergency) + 1)))
    }
}

/// One call's log channel: events at or above the session's level go to `tx`.
pub(crate) struct CallLog {
    level: SessionLevel,
    tx: mpsc::Sender<LoggingMessageNotificationParam>,
}

impl CallLog {
    fn wants(&self, level: Level) -> bool {
        self.wants_level(mcp_level(level))
    }

    fn wants_level(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.level.0.load(Ordering::Relaxed)
    }
}

/// Sends a tool's log line (a `tool_execution_log` event) to the client of the call running
/// in this task, when the session's level admits it.
pub(crate) fn forward_tool_log(level: LogLevel, logger: &str, message: String) {
    let level = match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    };
    let _ = CALL_LOG.try_with(|log| {
        log.wants_level(level)
            && log
                .tx
                .try_send(
                    LoggingMessageNotificationParam::new(level, Value::String(message))
                        .with_logger(logger),
                )
                .is_ok()
    });
}

/// Runs `call` with its `tracing` events forwarded to `peer` as `notifications/message`, in
/// order; returns once the call has ended and its last message is sent.
pub(crate) async fn forwarding_logs<F: Future>(
    level: SessionLevel,
    peer: Peer<RoleServer>,
    call: F,
) -> F::Output {
    // Bounded: a call that logs faster than the client reads loses messages, not memory.
    let (tx, mut rx) = mpsc::channel::<LoggingMessageNotificationParam>(256);
    let forward = async move {
        while let Some(message) = rx.recv().await {
            if let Err(err) = peer.notify_logging_message(message).await {
                tracing::debug!(%err, "a log message could not be sent");
            }
        }
    };
    let (output, ()) = tokio::join!(CALL_LOG.scope(CallLog { level, tx }, call), forward);
    output
}

/// Sends each notice of the session (a job that ended) to its client as a
/// `notifications/message` at `info` (logger `notice`) when it is pushed, whether a call
/// runs or not, until `stop`; the notice still goes into the next result too.
pub(crate) async fn announcing_notices(
    level: SessionLevel,
    peer: Peer<RoleServer>,
    notices: crate::core::Notices,
    stop: tokio_util::sync::CancellationToken,
) {
    let mut seen = 0;
    loop {
        let (pushed, new) = tokio::select! {
            () = stop.cancelled() => return,
            next = notices.pushed_after(seen) => next,
        };
        seen = pushed;
        if rank(LoggingLevel::Info) < level.0.load(Ordering::Relaxed) {
            continue;
        }
        for notice in new {
            let message = LoggingMessageNotificationParam::new(
                LoggingLevel::Info,
                Value::String(notice.text),
            )
            .with_logger("notice");
            if let Err(err) = peer.notify_logging_message(message).await {
                tracing::debug!(%err, "a notice could not be sent");
                return;
            }
        }
    }
}

/// Sends each event it sees to the current call's channel (the filter admits only events
/// inside a call, at the session's level).
struct ClientLogLayer;

impl<S: Subscriber> Layer<S> for ClientLogLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut text = TextVisitor::default();
        event.record(&mut text);
        let meta = event.metadata();
        let message = LoggingMessageNotificationParam::new(
            mcp_level(*meta.level()),
            Value::String(text.text()),
        )
        .with_logger(meta.target());
        let _ = CALL_LOG.try_with(|log| log.tx.try_send(message).is_ok());
    }
}

/// `message k=v k=v`: the message first, then the other fields in order.
#[derive(Default)]
struct TextVisitor {
    message: String,
    fields: String,
}

impl TextVisitor {
    fn text(self) -> String {
        match (self.message.is_empty(), self.fields.is_empty()) {
            (_, true) => self.message,
            (true, false) => self.fields,
            (false, false) => format!("{} {}", self.message, self.fields),
        }
    }
}

impl tracing::field::Visit for TextVisitor {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
            return;
        }
        if !self.fields.is_empty() {
            self.fields.push(' ');
        }
        let _ = write!(self.fields, "{}={value:?}", field.name());
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }
}

fn mcp_level(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// Severity order, lowest first (RFC 5424 as MCP uses it).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
